//! `fathom report --format json`: the schema of design.md, one object with every run and its
//! step summaries. Field names are fixed once released.

use fathom_core::result::{HostFacts, StepSummary};
use fathom_core::store::LoadedRun;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
pub struct Report<'a> {
    pub runs: Vec<RunReport<'a>>,
}

#[derive(Serialize)]
pub struct RunReport<'a> {
    pub setup: &'a str,
    pub engine: &'a str,
    pub engine_version: &'a str,
    pub workload: &'a str,
    pub clients: usize,
    pub status: &'a str,
    pub path: String,
    pub options: &'a str,
    pub settings: &'a BTreeMap<String, String>,
    pub memory_limit_bytes: Option<u64>,
    pub params: &'a BTreeMap<String, String>,
    pub host: &'a HostFacts,
    pub started_at: &'a str,
    pub steps: &'a [StepSummary],
}

pub fn report(runs: &[LoadedRun]) -> Report<'_> {
    Report {
        runs: runs
            .iter()
            .map(|r| {
                let m = &r.manifest;
                RunReport {
                    setup: &m.setup.name,
                    engine: &m.setup.engine,
                    engine_version: &m.setup.engine_version,
                    workload: &m.workload,
                    clients: m.clients,
                    status: &m.status,
                    path: r.path.display().to_string(),
                    options: &m.setup.options,
                    settings: &m.setup.settings,
                    memory_limit_bytes: m.setup.memory_limit_bytes,
                    params: &m.params,
                    host: &m.host,
                    started_at: &m.started_at,
                    steps: &r.steps,
                }
            })
            .collect(),
    }
}
