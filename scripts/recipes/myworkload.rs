//! A template for a new workload (docs/architecture.md, "A workload"): one timed step in which
//! each client puts random keys. It is written once against the kv interface, so every kv
//! engine (and every document server, through `kv_session`) runs it. `scripts/check-recipes.sh`
//! adds it to a copy of the tree the way the doc says and builds it.

use crate::params::{record, seed_or_clock, thread_seed, Params, Span};
use crate::report::ReportHooks;
use crate::{
    alike, kv_session, NewClients, NewStep, PreparedStep, StepOn, Workload, WorkloadEntry,
};
use fathom_api::family::Db;
use fathom_api::kind::{Done, StepKinds};
use fathom_api::kv::{KvSession, SessionOptions};
use fathom_api::step::{Client, StepPlan};
use fathom_api::stop::Stop;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Its parameters (`--param`): each field a knob, its doc comment the help `fathom workloads`
/// prints, `Default` the defaults.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MyWorkloadParams {
    /// keys to put into, drawn uniformly
    keys: u64,
    /// bytes per value
    value_size: u64,
    /// how long the step runs (`--duration` sets it)
    duration: Span,
    /// 0: from the clock
    seed: u64,
}

impl Default for MyWorkloadParams {
    fn default() -> Self {
        MyWorkloadParams {
            keys: 100_000,
            value_size: 100,
            duration: Span::new("10s"),
            seed: 0,
        }
    }
}

fathom_api::kinds! {
    /// Its operation kinds, declared once: a name and a role each. Clients record operations
    /// by them (`Done::of`), and each step lists those it records.
    pub enum MyKind {
        Put = ("put", Write, "a put of a random key"),
    }
}

// `--duration` sets `duration` (checked as it compiles: a field, a `Span`).
crate::params::timed!(MyWorkloadParams, duration);

pub const ENTRY: WorkloadEntry = WorkloadEntry::new::<MyWorkloadParams, MyKind>(
    "myworkload",
    "puts random keys for a while (the recipe's template)",
    build,
    ReportHooks::NONE,
)
.kv_only();

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    let mut p: MyWorkloadParams = params.read(ENTRY.name)?;
    p.seed = seed_or_clock(p.seed);
    if p.keys == 0 {
        anyhow::bail!("parameter `keys`: must be at least 1");
    }
    let plan = StepPlan {
        name: "put".into(),
        clients,
        duration: Some(p.duration.value),
        kinds: StepKinds::of(&[MyKind::Put]),
        ..StepPlan::default()
    };
    Ok(Box::new(MyWorkload {
        steps: vec![plan],
        resolved: record(&p),
        p,
    }))
}

struct MyWorkload {
    p: MyWorkloadParams,
    steps: Vec<StepPlan>,
    resolved: BTreeMap<String, String>,
}

impl Workload for MyWorkload {
    fn steps(&self) -> &[StepPlan] {
        &self.steps
    }

    /// The step on `engine`: what its clients share would be made here, in a step object of
    /// its own; this one's clients share nothing, so the step is the plain `StepOn`.
    fn step<'a>(&'a self, engine: Db<'a>, index: usize, _: &Stop) -> NewStep<'a> {
        StepOn::boxed(self, engine, index)
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }
}

/// A step on one engine hands out the step's clients: putters, each with its own keys.
impl<'a> PreparedStep<'a> for StepOn<'a, MyWorkload> {
    fn clients(&self) -> NewClients<'a> {
        let p = &self.workload.p;
        alike(self.workload.steps[self.index].clients, |n| {
            Ok(Box::new(Putter {
                session: kv_session(self.engine, ENTRY.name, SessionOptions::default())?,
                rng: SmallRng::seed_from_u64(thread_seed(p.seed, self.index, n)),
                keys: p.keys,
                value: vec![b'x'; p.value_size as usize],
            }))
        })
    }
}

/// One client thread: a put of a random key per operation.
struct Putter<'e> {
    session: Box<dyn KvSession + 'e>,
    rng: SmallRng,
    keys: u64,
    value: Vec<u8>,
}

impl Client for Putter<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let key = self.rng.gen_range(0..self.keys).to_be_bytes();
        self.session.put(&key, &self.value)?;
        Ok(Some(Done {
            bytes: (key.len() + self.value.len()) as u64,
            ..Done::of(MyKind::Put)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{build_from, drive, scratch};

    /// The workload on a real engine: its one step, two clients putting 50 keys each.
    #[test]
    fn myworkload_puts_on_a_real_engine() {
        let (_dir, engine) = scratch("lmdb", &[]);
        let w = build_from(build, &["keys=100", "seed=3"], 2).unwrap();
        assert_eq!(drive(w.as_ref(), engine.db(), 50), [[100]]);
    }
}
