//! How much each step of the insert benchmark does, from its parameters: rows to load or
//! insert per client, commit sizes, the query steps' rates and how long they last.

use super::Work;
use fathom_api::step::{Pace, StepPlan};
use std::time::Duration;

/// How much each step does.
pub(super) struct Sizes<F> {
    /// A total over all clients, per client.
    pub(super) per_client: F,
    pub(super) rows: u64,
    pub(super) write_rows: u64,
    pub(super) lx_rows: u64,
    pub(super) deletes: bool,
    pub(super) settle: Duration,
    pub(super) query_secs: Duration,
    pub(super) dop: u64,
    /// Whether there are secondary indexes for range queries.
    pub(super) ranges: bool,
}

impl<F: Fn(u64) -> u64> Sizes<F> {
    /// What step `name` does and how it runs; `commit` reads a rows-per-statement parameter.
    pub(super) fn step(
        &self,
        name: &str,
        commit: &dyn Fn(&str) -> anyhow::Result<usize>,
    ) -> anyhow::Result<(Work, StepPlan)> {
        let load = |rows, batch, deletes| Work::Load {
            rows: (self.per_client)(rows),
            batch,
            deletes,
            create: name == "l.i0",
        };
        Ok(match name {
            "l.i0" => (load(self.rows, commit("commit_i0")?, false), StepPlan::default()),
            "l.x" => (
                Work::Index {
                    rows: (self.per_client)(self.lx_rows),
                },
                StepPlan::default(),
            ),
            // Each client's deleter is a helper, a thread of its own beside its inserter.
            "l.i1" => (
                load((self.write_rows * 4).div_ceil(5), commit("commit_i1")?, self.deletes),
                StepPlan::default(),
            ),
            "l.i2" => (
                load(self.write_rows / 5, commit("commit_i2")?, self.deletes),
                StepPlan::default(),
            ),
            "cleanup" => (
                Work::Cleanup {
                    settle: self.settle,
                },
                StepPlan {
                    clients: 1,
                    ..StepPlan::default()
                },
            ),
            q if q.starts_with("qr") || q.starts_with("qp") => {
                let rate: u64 = q[2..].parse().ok().filter(|r| *r > 0).ok_or_else(|| {
                    anyhow::anyhow!("parameter `steps`: `{q}` needs a rate, as qr100 or qp500")
                })?;
                let point = q.starts_with("qp");
                if !point && !self.ranges {
                    anyhow::bail!(
                        "parameter `steps`: `{q}` runs range queries on the secondary indexes; secondary_indexes is 0"
                    );
                }
                // iq.sh: the step lasts until the inserters have written query_secs × rate.
                let rows = (self.query_secs.as_secs_f64() * rate as f64).round() as u64;
                (
                    Work::Query {
                        point,
                        batch: commit("commit_q")?.min(rate as usize),
                        rows: rows.max(1),
                    },
                    // The step ends when the background inserters (and their deleters) do.
                    StepPlan {
                        background: Some(Pace::RowsPerSec((rate * self.dop) as f64)),
                        ..StepPlan::default()
                    },
                )
            }
            other => anyhow::bail!(
                "parameter `steps`: unknown step `{other}`; steps are l.i0, l.x, l.i1, l.i2, cleanup, qr<N>, qp<N>"
            ),
        })
    }
}
