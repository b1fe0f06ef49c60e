//! `fathom report --format json`: the results schema (docs/results.md), one object with every
//! run and its step summaries, and the report model's tables (medians over repeats) with
//! numbers as numbers. Field names are fixed once released.

use super::renderer::Renderer;
use crate::model::Model;
use crate::section::Titled;
use fathom_schema::result::{HostFacts, IntervalRecord, StepSummary};
use fathom_schema::store::LoadedRun;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
pub struct Report<'a> {
    pub runs: Vec<RunReport<'a>>,
    /// The step table and every section's tables, titled as the text report titles them.
    pub tables: Vec<Titled>,
}

#[derive(Serialize)]
pub struct RunReport<'a> {
    pub setup: &'a str,
    pub engine: &'a str,
    pub engine_version: &'a str,
    pub workload: &'a str,
    pub clients: usize,
    pub status: &'a str,
    /// Why a failed run failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    pub path: String,
    pub options: &'a str,
    pub settings: &'a BTreeMap<String, String>,
    pub memory_limit_bytes: Option<u64>,
    pub params: &'a BTreeMap<String, String>,
    pub host: &'a HostFacts,
    pub started_at: &'a str,
    pub steps: &'a [StepSummary],
    /// Per step, its interval records (with `--intervals`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intervals: Option<BTreeMap<String, Vec<IntervalRecord>>>,
}

/// The report as pretty JSON.
pub struct Json;

impl Renderer for Json {
    fn render(&self, model: &Model, runs: &[LoadedRun]) -> anyhow::Result<String> {
        let text = match &model.json {
            Some(v) => serde_json::to_string_pretty(v)?,
            None => {
                let r = report(runs, model.intervals.is_some(), model.tables())?;
                serde_json::to_string_pretty(&r)?
            }
        };
        Ok(text + "\n")
    }
}

pub fn report(
    runs: &[LoadedRun],
    with_intervals: bool,
    tables: Vec<Titled>,
) -> anyhow::Result<Report<'_>> {
    Ok(Report {
        tables,
        runs: runs
            .iter()
            .map(|r| {
                let m = &r.manifest;
                let intervals = with_intervals
                    .then(|| {
                        r.steps
                            .iter()
                            .map(|s| Ok((s.step.clone(), r.intervals(s)?)))
                            .collect::<anyhow::Result<BTreeMap<_, _>>>()
                    })
                    .transpose()?;
                Ok(RunReport {
                    setup: &m.setup.name,
                    engine: &m.setup.engine,
                    engine_version: &m.setup.engine_version,
                    workload: &m.workload,
                    clients: m.clients,
                    status: r.status(),
                    error: m.error.as_deref(),
                    path: r.path.display().to_string(),
                    options: &m.setup.options,
                    settings: &m.setup.settings,
                    memory_limit_bytes: m.setup.memory_limit_bytes,
                    params: &m.params,
                    host: &m.host,
                    started_at: &m.started_at,
                    steps: &r.steps,
                    intervals,
                })
            })
            .collect::<anyhow::Result<_>>()?,
    })
}
