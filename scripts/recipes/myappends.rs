//! A template for a workload on a new family (docs/architecture.md, "A family"): one timed
//! step in which each client appends records and reads one back now and then. Its entry lists
//! the family it runs on, so a run of it on another family is refused before it starts.

use crate::params::{record, seed_or_clock, thread_seed, Params, Span};
use crate::report::ReportHooks;
use crate::{alike, NewClients, NewStep, PreparedStep, StepOn, Workload, WorkloadEntry};
use fathom_api::family::{Db, Family};
use fathom_api::kind::{Done, StepKinds};
use fathom_api::myfamily::MyFamilySession;
use fathom_api::step::{Client, StepPlan};
use fathom_api::stop::Stop;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Its parameters (`--param`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MyAppendsParams {
    /// bytes per record
    record_size: u64,
    /// one operation in this many reads a record back
    read_every: u64,
    /// how long the step runs (`--duration` sets it)
    duration: Span,
    /// 0: from the clock
    seed: u64,
}

impl Default for MyAppendsParams {
    fn default() -> Self {
        MyAppendsParams {
            record_size: 100,
            read_every: 10,
            duration: Span::new("10s"),
            seed: 0,
        }
    }
}

fathom_api::kinds! {
    /// Its operation kinds.
    pub enum MyAppendsKind {
        Append = ("append", Write, "a record appended"),
        Read = ("read", Read, "a record read back by its position"),
    }
}

crate::params::timed!(MyAppendsParams, duration);

pub const ENTRY: WorkloadEntry = WorkloadEntry {
    families: &[Family::MyFamily],
    ..WorkloadEntry::new::<MyAppendsParams, MyAppendsKind>(
        "myappends",
        "appends records for a while (the family recipe's template)",
        build,
        ReportHooks::NONE,
    )
};

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    let mut p: MyAppendsParams = params.read(ENTRY.name)?;
    p.seed = seed_or_clock(p.seed);
    if p.read_every == 0 {
        anyhow::bail!("parameter `read_every`: must be at least 1");
    }
    let plan = StepPlan {
        name: "append".into(),
        clients,
        duration: Some(p.duration.value),
        kinds: StepKinds::of(&[MyAppendsKind::Append, MyAppendsKind::Read]),
        ..StepPlan::default()
    };
    Ok(Box::new(MyAppends {
        steps: vec![plan],
        resolved: record(&p),
        p,
    }))
}

struct MyAppends {
    p: MyAppendsParams,
    steps: Vec<StepPlan>,
    resolved: BTreeMap<String, String>,
}

impl Workload for MyAppends {
    fn steps(&self) -> &[StepPlan] {
        &self.steps
    }

    fn step<'a>(&'a self, engine: Db<'a>, index: usize, _: &Stop) -> NewStep<'a> {
        StepOn::boxed(self, engine, index)
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }
}

impl<'a> PreparedStep<'a> for StepOn<'a, MyAppends> {
    fn clients(&self) -> NewClients<'a> {
        let p = &self.workload.p;
        alike(self.workload.steps[self.index].clients, |n| {
            // The workload's one dispatch on the family: a family it has no file for is
            // refused here (its entry's `families` refuses it earlier, at resolve).
            let session = match self.engine {
                Db::MyFamily(e) => e.session()?,
                other => return Err(other.refused(ENTRY.name)),
            };
            Ok(Box::new(Appender {
                session,
                rng: SmallRng::seed_from_u64(thread_seed(p.seed, self.index, n)),
                record: vec![b'x'; p.record_size as usize],
                read_every: p.read_every,
                appended: 0,
            }))
        })
    }
}

/// One client thread: appends, and every `read_every`-th operation a read of one of its own.
struct Appender<'e> {
    session: Box<dyn MyFamilySession + 'e>,
    rng: SmallRng,
    record: Vec<u8>,
    read_every: u64,
    appended: u64,
}

impl Client for Appender<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if self.appended > 0 && self.rng.gen_range(0..self.read_every) == 0 {
            let got = self.session.read(self.rng.gen_range(0..self.appended))?;
            return Ok(Some(Done {
                bytes: got.map_or(0, |r| r.len() as u64),
                ..Done::of(MyAppendsKind::Read)
            }));
        }
        self.session.append(&self.record)?;
        self.appended += 1;
        Ok(Some(Done {
            bytes: self.record.len() as u64,
            ..Done::of(MyAppendsKind::Append)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{build_from, drive, scratch};

    /// The workload on the family's engine: two clients, 50 operations each; and a workload
    /// written for kv engines refuses the family by its name.
    #[test]
    fn myappends_runs_on_its_family() {
        let (_dir, engine) = scratch("mylog", &[]);
        let w = build_from(build, &["seed=3"], 2).unwrap();
        let done = drive(w.as_ref(), engine.db(), 50);
        assert_eq!(done[0].iter().sum::<usize>(), 100, "{done:?}");
        assert!(done[0][0] > done[0][1], "appends outnumber reads: {done:?}");
        let refused = crate::kv_session(engine.db(), "dbbench", Default::default()).err();
        let why = refused.expect("a kv workload on the log").to_string();
        assert!(why.contains("myfamily engine"), "{why}");
    }
}
