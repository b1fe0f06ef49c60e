//! What a user sees while a step runs: on a terminal, a progress bar with live ops/s and p99;
//! otherwise (a log file, CI) a plain line every ten seconds of a long step, each naming the
//! last interval's figures and the step's so far; then one line per finished step either way,
//! its figures the whole step's (`done:`).

use fathom_api::step::StepPlan;
use fathom_run::RunSpec;
use fathom_schema::result::{IntervalRecord, RunManifest, StepSummary};
use indicatif::{ProgressBar, ProgressStyle};
use std::cell::Cell;
use std::io::IsTerminal;
use std::path::Path;

/// Seconds between plain progress lines when stderr is not a terminal.
const PLAIN_EVERY_SECS: f64 = 10.0;

pub struct StepProgress {
    index: usize,
    total: usize,
    name: String,
    bar: Option<ProgressBar>,
    /// Measured ops so far (for steps that end on a count).
    ops: Cell<u64>,
    /// Step time of the last plain line.
    last_line: Cell<f64>,
    by_count: bool,
}

impl StepProgress {
    pub fn start(index: usize, total: usize, plan: &StepPlan) -> StepProgress {
        let by_count = plan.duration.is_none();
        let len = match (plan.duration, plan.ops_per_client) {
            (Some(d), _) => Some(d.as_secs_f64().ceil() as u64),
            (None, Some(n)) => Some(n * plan.clients as u64),
            (None, None) => None,
        };
        let bar = (std::io::stderr().is_terminal() && plan.clients > 0).then(|| {
            let bar = ProgressBar::new(len.unwrap_or(0));
            let unit = if by_count { "ops" } else { "s" };
            let style = ProgressStyle::with_template(&format!(
                "  [{{prefix}}] {{wide_bar:.cyan/blue}} {{pos}}/{{len}}{unit}  {{msg}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(format!("{index}/{total} {}", plan.name));
            bar
        });
        StepProgress {
            index,
            total,
            name: plan.name.clone(),
            bar,
            ops: Cell::new(0),
            last_line: Cell::new(0.0),
            by_count,
        }
    }

    pub fn interval(&self, r: &IntervalRecord) {
        self.ops.set(self.ops.get() + r.ops);
        let live = live(r, self.ops.get());
        match &self.bar {
            Some(bar) => {
                bar.set_position(if self.by_count {
                    self.ops.get()
                } else {
                    r.t_end as u64
                });
                // A step's last interval can be a sliver with no operations: keep the last rate.
                if r.ops > 0 {
                    bar.set_message(live);
                }
            }
            // The same sliver would print "0 ops/s" just before the step's own line.
            None if r.ops > 0 && r.t_end - self.last_line.get() >= PLAIN_EVERY_SECS => {
                self.last_line.set(r.t_end);
                eprintln!(
                    "  [{}/{}] {:<22} at {:>4.0}s: {live}",
                    self.index, self.total, self.name, r.t_end
                );
            }
            None => {}
        }
    }

    pub fn finish(&self, s: &StepSummary) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        eprintln!(
            "  [{}/{}] {:<22} done: {:>8.0} ops/s p99 {:>8.1} µs over {:.1}s{}",
            self.index,
            self.total,
            s.step,
            s.ops_per_sec,
            s.latency_us.p99,
            s.seconds + s.maintenance_seconds,
            if s.interrupted { "  (interrupted)" } else { "" }
        );
    }
}

/// The last interval's figures, then the step's so far (`ops` measured operations by the
/// interval's end): the two differ while a step warms up or its rate falls, and each is named.
fn live(r: &IntervalRecord, ops: u64) -> String {
    let so_far = match r.t_end > 0.0 {
        true => ops as f64 / r.t_end,
        false => 0.0,
    };
    format!(
        "last {:.0}s {:>8.0} ops/s p99 {:>8.1} µs, so far {:>8.0} ops/s",
        (r.t_end - r.t_start).max(0.0),
        r.ops_per_sec,
        r.latency_us.p99,
        so_far
    )
}

/// The command's observer of runs: a header line per run, then each step's progress.
#[derive(Default)]
pub struct Progress {
    step: Option<StepProgress>,
}

impl fathom_run::Observer for Progress {
    fn run_started(&mut self, m: &RunManifest, spec: &RunSpec, dir: &Path) {
        eprintln!(
            "fathom: {} {} / {} with {} client{} -> {}",
            m.setup.engine,
            m.setup.engine_version,
            m.workload_title(),
            m.clients,
            if m.clients == 1 { "" } else { "s" },
            dir.display()
        );
        for implied in &spec.implied {
            eprintln!("fathom: set {implied}");
        }
        for warning in &spec.warnings {
            eprintln!("fathom: warning: {warning}");
        }
    }

    fn step_started(&mut self, index: usize, total: usize, plan: &StepPlan) {
        self.step = Some(StepProgress::start(index, total, plan));
    }

    fn interval(&mut self, record: &IntervalRecord) {
        if let Some(p) = &self.step {
            p.interval(record);
        }
    }

    fn step_finished(&mut self, summary: &StepSummary) {
        if let Some(p) = self.step.take() {
            p.finish(summary);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_line_names_the_last_interval_and_the_step_so_far() {
        let r = IntervalRecord {
            t_start: 9.0,
            t_end: 10.0,
            ops: 25_000,
            ops_per_sec: 25_000.0,
            ..IntervalRecord::default()
        };
        let line = live(&r, 500_000);
        assert!(line.starts_with("last 1s    25000 ops/s p99"), "{line}");
        assert!(line.ends_with("so far    50000 ops/s"), "{line}");
    }
}
