//! fathom-workloads: each workload defines its steps, its operation kinds, and per step a step
//! object that owns what the step's clients share and hands them out by role, once for the kv
//! interface (so every kv engine runs it) and, where it has one, once for the sql family and
//! once for the document family; `WORKLOADS` is the registry the CLI reads.

pub mod dbbench;
pub mod declared;
pub mod dockv;
pub mod ibench;
pub mod linkbench;
pub mod params;
pub mod report;
pub mod rows;
pub mod statements;
pub mod steps;
pub mod sysbench;
#[cfg(test)]
mod testing;
pub mod tpcc;

use fathom_api::capability::Need;
use fathom_api::family::{Db, Family};
use fathom_api::kind::{Kind, OpKind};
use fathom_api::knobs::Knobs;
use fathom_api::kv::{KvSession, SessionOptions};
use fathom_api::step::{BackgroundClient, Client, Crew, StepPlan};
use fathom_api::stop::Stop;
use params::{specs, ParamSpec, Params};
use std::collections::BTreeMap;

/// A client a workload's step builds for one thread.
pub type NewClient<'e> = anyhow::Result<Box<dyn Client + 'e>>;
/// Clients a step builds for several threads.
pub type NewClients<'e> = anyhow::Result<Vec<Box<dyn Client + 'e>>>;
/// A step's background clients (none for most steps).
pub type NewBackground<'e> = anyhow::Result<Vec<BackgroundClient<'e>>>;

/// A workload with its parameters resolved: its steps, and for each a step object on an
/// engine. It holds nothing that changes while it runs; what a step's clients share lives in
/// that step's object.
pub trait Workload: Send + Sync {
    /// The steps to run, in order.
    fn steps(&self) -> &[StepPlan];
    /// Step `index` (into `steps`) made ready on `engine`: the tables it writes (DDL) done,
    /// and what its clients share made fresh in the step object, which then hands them out.
    /// The runner makes one on the null engine to measure the harness's cost, and one on the
    /// engine for the step itself. A client that waits (on another client, or for time to
    /// pass) stops waiting when `stop` is requested.
    fn step<'a>(&'a self, engine: Db<'a>, index: usize, stop: &Stop) -> NewStep<'a>;
    /// Every parameter with the value in force, for the run's record.
    fn params(&self) -> BTreeMap<String, String>;
    /// What the workload, as built, needs of the engine beyond its family (checked, and met
    /// where one setting does it, before anything runs).
    fn needs(&self) -> Vec<Need> {
        Vec::new()
    }
    /// Why the workload, as built, cannot run on an engine of `family` though its entry's
    /// families hold it (a workload file of SQL tables on a kv engine); checked before
    /// anything runs. `None`: it can.
    fn refuses(&self, _family: Family) -> Option<String> {
        None
    }
}

/// A step object, or why it could not be made.
pub type NewStep<'a> = anyhow::Result<Box<dyn PreparedStep<'a> + 'a>>;

/// One step of a workload on one engine: it owns what the step's clients share (a work queue,
/// id counters, the gates between an inserter and its deleter) and hands out the step's
/// threads by role.
pub trait PreparedStep<'a> {
    /// The step's clients, as many as its plan's `clients`, each built for its role (LinkBench's
    /// load: its link loaders and its node loader); `alike` builds clients of one role.
    fn clients(&self) -> NewClients<'a>;
    /// Threads beside the clients whose operations count in the step as theirs, not counted
    /// as clients (iibench's deleters); none by default.
    fn helpers(&self) -> NewClients<'a> {
        Ok(Vec::new())
    }
    /// Clients beside the step's, reported apart (rate-limited writers); none by default.
    fn background(&self) -> NewBackground<'a> {
        Ok(Vec::new())
    }
}

/// A step whose clients share nothing beyond the workload: the workload, the engine and the
/// step's index, for a workload to implement `PreparedStep` on (`StepOn<'a, MyWorkload>`).
pub struct StepOn<'a, W> {
    pub workload: &'a W,
    pub engine: Db<'a>,
    pub index: usize,
}

impl<'a, W> StepOn<'a, W> {
    /// Step `index` of `workload` on `engine`, boxed as the runner takes it.
    pub fn boxed(workload: &'a W, engine: Db<'a>, index: usize) -> NewStep<'a>
    where
        StepOn<'a, W>: PreparedStep<'a>,
    {
        Ok(Box::new(StepOn {
            workload,
            engine,
            index,
        }))
    }
}

/// `count` clients of one role, client `n` (from 0) made by `client`.
pub fn alike<'a>(count: usize, client: impl FnMut(usize) -> NewClient<'a>) -> NewClients<'a> {
    (0..count).map(client).collect()
}

impl<'a> dyn PreparedStep<'a> + 'a {
    /// Every thread of the step.
    pub fn crew(&self) -> anyhow::Result<Crew<'a>> {
        Ok(Crew {
            clients: self.clients()?,
            helpers: self.helpers()?,
            background: self.background()?,
        })
    }
}

/// One workload fathom can run.
pub struct WorkloadEntry {
    pub name: &'static str,
    pub about: &'static str,
    /// Its parameters with their defaults and help (`params::specs` of its parameter struct).
    pub params: fn() -> Vec<ParamSpec>,
    /// Its operation kinds, with what one operation of each is.
    pub kinds: fn() -> Vec<OpKind>,
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
    /// A workload's entry, for `..` in its own: its parameters are the struct `P`'s, its
    /// operation kinds the enum `K`'s, it runs on every family (a kv workload reaches a
    /// document server through `kv_session`), `--duration` sets the parameter `P` names (`timed!`), and
    /// `report` is what it adds to reports (`ReportHooks::NONE` for nothing).
    pub const fn new<P: Knobs + params::Timed, K: Kind>(
        name: &'static str,
        about: &'static str,
        build: fn(&Params, usize) -> anyhow::Result<Box<dyn Workload>>,
        report: report::ReportHooks,
    ) -> WorkloadEntry {
        WorkloadEntry {
            name,
            about,
            params: specs::<P>,
            kinds: kinds_of::<K>,
            build,
            families: &[Family::Kv, Family::Sql, Family::Doc],
            duration_param: P::DURATION,
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

/// Every kind of `K`, as reports know them.
fn kinds_of<K: Kind>() -> Vec<OpKind> {
    K::ALL.iter().map(|k| k.op()).collect()
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
        Db::Doc(e) => Ok(Box::new(dockv::DocKv::new(e.session()?, e.transactions()))),
        other => anyhow::bail!(
            "workload `{workload}` runs on kv and doc engines only; `{}` is a {} engine",
            other.target().name(),
            other.family()
        ),
    }
}

pub static WORKLOADS: &[WorkloadEntry] = &[
    dbbench::ENTRY,
    declared::ENTRY,
    sysbench::ENTRY,
    ibench::ENTRY,
    linkbench::ENTRY,
    tpcc::ENTRY,
];

/// Every workload's original output format, for `--format NAME`.
pub fn originals() -> impl Iterator<Item = &'static report::Original> {
    WORKLOADS.iter().flat_map(|w| w.report.originals)
}

/// Looks a workload up by name; an unknown one is told the built-in workloads and the bundled
/// workload files (those under the same folder first, where the name has one).
pub fn find(name: &str) -> anyhow::Result<&'static WorkloadEntry> {
    WORKLOADS.iter().find(|w| w.name == name).ok_or_else(|| {
        let names: Vec<_> = WORKLOADS.iter().map(|w| w.name).collect();
        let bundled: Vec<&str> = declared::file::BUNDLED.iter().map(|(n, _)| *n).collect();
        let folder = name.split_once('/').map(|(f, _)| format!("{f}/"));
        let near: Vec<&str> = bundled
            .iter()
            .copied()
            .filter(|b| folder.as_ref().is_some_and(|f| b.starts_with(f.as_str())))
            .collect();
        let files = if near.is_empty() { &bundled } else { &near };
        anyhow::anyhow!(
            "unknown workload `{name}`: expected a workload ({}), a bundled workload file ({}), \
             or the path of a workload file ending in .toml",
            names.join(", "),
            files.join(", ")
        )
    })
}
