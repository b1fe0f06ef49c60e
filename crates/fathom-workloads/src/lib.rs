//! fathom-workloads: each workload defines its steps and a client per thread, once for the kv
//! interface (so every kv engine runs it) and, where it has one, once for the sql family and
//! once for the document family; `WORKLOADS` is the registry the CLI reads.

pub mod dbbench;
pub mod dockv;
pub mod ibench;
pub mod linkbench;
pub mod params;
pub mod report;
pub mod rows;
pub mod shared;
pub mod statements;
pub mod sysbench;
#[cfg(test)]
mod testing;

use fathom_core::capability::Need;
use fathom_core::driver::{BackgroundClient, Client, StepPlan};
use fathom_core::family::{Db, Family};
use fathom_core::knobs::Knobs;
use fathom_core::kv::{KvSession, SessionOptions};
use params::{specs, ParamSpec, Params};
use std::collections::BTreeMap;

/// A client a workload builds for one thread of one step.
pub type NewClient<'e> = anyhow::Result<Box<dyn Client + 'e>>;
/// A step's background clients (none for most steps).
pub type NewBackground<'e> = anyhow::Result<Vec<BackgroundClient<'e>>>;

/// A workload with its parameters resolved.
pub trait Workload: Send + Sync {
    /// The steps to run, in order.
    fn steps(&self) -> &[StepPlan];
    /// Makes step `step` ready on `engine` before its clients are built: the tables it writes
    /// (DDL) and the state its clients share (a work queue, id counters), fresh for the step.
    /// The runner calls it on the null engine before measuring the harness's cost, and again
    /// on the engine before the step.
    fn prepare_step(&self, engine: Db<'_>, step: usize) -> anyhow::Result<()> {
        let _ = (engine, step);
        Ok(())
    }
    /// The client of thread `thread` for step `step` (an index into `steps`), once the step
    /// is prepared: threads `0..clients`, then `clients..clients + helpers`.
    fn client<'e>(&self, engine: Db<'e>, step: usize, thread: usize) -> NewClient<'e>;
    /// The background clients of step `step`, beside its clients (none by default).
    fn background<'e>(&self, engine: Db<'e>, step: usize) -> NewBackground<'e> {
        let _ = (engine, step);
        Ok(Vec::new())
    }
    /// Every parameter with the value in force, for the run's record.
    fn params(&self) -> BTreeMap<String, String>;
    /// What the workload, as built, needs of the engine beyond its family (checked, and met
    /// where one setting does it, before anything runs).
    fn needs(&self) -> Vec<Need> {
        Vec::new()
    }
}

/// One workload fathom can run.
pub struct WorkloadEntry {
    pub name: &'static str,
    pub about: &'static str,
    /// Its parameters with their defaults and help (`params::specs` of its parameter struct).
    pub params: fn() -> Vec<ParamSpec>,
    /// Builds the workload for `clients` client threads.
    pub build: fn(&Params, usize) -> anyhow::Result<Box<dyn Workload>>,
    /// The engine families it runs on.
    pub families: &'static [Family],
    /// The parameter `--duration` sets: the length of every timed step.
    pub duration_param: &'static str,
    /// Parameters set when the engine is a server, unless given (`reopen=off`: a server stays
    /// up from step to step).
    pub on_servers: &'static [(&'static str, &'static str)],
    /// What it adds to reports: notes, tables of its own, its original tool's format.
    pub report: report::ReportHooks,
}

impl WorkloadEntry {
    /// A workload's entry, for `..` in its own: its parameters are the struct `P`'s, it runs on
    /// every family (a kv workload reaches a document server through `kv_session`), `--duration`
    /// sets its `duration` parameter, and `report` is what it adds to reports
    /// (`ReportHooks::NONE` for nothing).
    pub const fn new<P: Knobs>(
        name: &'static str,
        about: &'static str,
        build: fn(&Params, usize) -> anyhow::Result<Box<dyn Workload>>,
        report: report::ReportHooks,
    ) -> WorkloadEntry {
        WorkloadEntry {
            name,
            about,
            params: specs::<P>,
            build,
            families: &[Family::Kv, Family::Sql, Family::Doc],
            duration_param: "duration",
            on_servers: &[],
            report,
        }
    }

    /// The entry of a workload written against the kv interface (`kv_session`): on kv engines
    /// and document servers, not SQL ones.
    pub const fn kv_only(self) -> WorkloadEntry {
        WorkloadEntry {
            families: &[Family::Kv, Family::Doc],
            ..self
        }
    }
}

impl std::fmt::Debug for WorkloadEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A kv session for a workload written for kv engines only: the engine's own, or on a
/// document server the kv mapping of one collection keyed by `_id` (`dockv`).
pub fn kv_session<'e>(
    db: Db<'e>,
    workload: &str,
    options: SessionOptions,
) -> anyhow::Result<Box<dyn KvSession + 'e>> {
    match db {
        Db::Kv(e) => e.session(options),
        Db::Doc(e) => Ok(Box::new(dockv::DocKv::new(e.session()?))),
        Db::Sql(e) => anyhow::bail!(
            "workload `{workload}` runs on kv and doc engines only; `{}` is a sql engine",
            e.name()
        ),
    }
}

pub static WORKLOADS: &[WorkloadEntry] = &[
    dbbench::ENTRY,
    sysbench::ENTRY,
    ibench::ENTRY,
    linkbench::ENTRY,
];

/// Every workload's original output format, for `--format NAME`.
pub fn originals() -> impl Iterator<Item = &'static report::Original> {
    WORKLOADS.iter().filter_map(|w| w.report.original.as_ref())
}

/// Looks a workload up by name.
pub fn find(name: &str) -> anyhow::Result<&'static WorkloadEntry> {
    WORKLOADS.iter().find(|w| w.name == name).ok_or_else(|| {
        let names: Vec<_> = WORKLOADS.iter().map(|w| w.name).collect();
        anyhow::anyhow!("unknown workload `{name}`; available: {}", names.join(", "))
    })
}
