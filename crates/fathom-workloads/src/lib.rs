//! fathom-workloads: each workload defines its steps and a client per thread against the kv
//! interface, so every kv engine runs it; `WORKLOADS` is the registry the CLI reads.

pub mod dbbench;
pub mod params;

use fathom_core::driver::{Client, StepPlan};
use fathom_core::kv::KvEngine;
use params::{ParamSpec, Params};
use std::collections::BTreeMap;

/// A workload with its parameters resolved.
pub trait KvWorkload: Send + Sync {
    /// The steps to run, in order.
    fn steps(&self) -> &[StepPlan];
    /// The client of thread `thread` for step `step` (an index into `steps`).
    fn client<'e>(
        &self,
        engine: &'e dyn KvEngine,
        step: usize,
        thread: usize,
    ) -> anyhow::Result<Box<dyn Client + 'e>>;
    /// The background writer of step `step`, if it has one.
    fn background<'e>(
        &self,
        engine: &'e dyn KvEngine,
        step: usize,
    ) -> anyhow::Result<Option<Box<dyn Client + 'e>>>;
    /// Every parameter with the value in force, for the run's record.
    fn params(&self) -> BTreeMap<String, String>;
}

/// One workload fathom can run.
pub struct WorkloadEntry {
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
    /// Builds the workload for `clients` client threads.
    pub build: fn(&Params, usize) -> anyhow::Result<Box<dyn KvWorkload>>,
}

pub static WORKLOADS: &[WorkloadEntry] = &[dbbench::ENTRY];

/// Looks a workload up by name.
pub fn find(name: &str) -> anyhow::Result<&'static WorkloadEntry> {
    WORKLOADS.iter().find(|w| w.name == name).ok_or_else(|| {
        let names: Vec<_> = WORKLOADS.iter().map(|w| w.name).collect();
        anyhow::anyhow!("unknown workload `{name}`; available: {}", names.join(", "))
    })
}
