//! What a workload adds to reports, through its registry entry: notes its steps say about
//! themselves, tables of its own, and its original tools' output formats. The report crate reads
//! these from `WORKLOADS` and names no workload.

use fathom_schema::group::Series;
use fathom_schema::result::StepSummary;
use fathom_schema::store::LoadedRun;
use fathom_schema::table::Titled;
use std::fmt::Write;

/// A workload's additions to reports.
pub struct ReportHooks {
    /// The page's heading over its tables.
    pub heading: &'static str,
    /// Its own tables, from every series of the report (each the median over repeats).
    pub tables: fn(&[Series]) -> Vec<Titled>,
    /// What a step of it (the median over repeats) says about itself.
    pub step_notes: fn(&StepSummary) -> Vec<String>,
    /// Its tables show each operation kind's latency: the report's table of latency by kind
    /// leaves it out.
    pub kinds_shown: bool,
    /// Operation kinds whose failures its notes explain: not listed as failed operations.
    pub explained_failures: &'static [&'static str],
    /// Lines for the report's legend.
    pub legend: &'static str,
    /// Its original tools' outputs, each printed by `fathom report --format NAME`.
    pub originals: &'static [Original],
}

impl ReportHooks {
    /// Nothing added.
    pub const NONE: ReportHooks = ReportHooks {
        heading: "",
        tables: |_| Vec::new(),
        step_notes: |_| Vec::new(),
        kinds_shown: false,
        explained_failures: &[],
        legend: "",
        originals: &[],
    };
}

/// An original tool's output format.
#[derive(Debug)]
pub struct Original {
    /// Its `--format` name.
    pub name: &'static str,
    /// Another name it answers to.
    pub alias: Option<&'static str>,
    /// What it prints, for `--help`.
    pub about: &'static str,
    pub render: fn(&[LoadedRun]) -> anyhow::Result<String>,
}

impl Original {
    /// True when `name` is this format's name or alias.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.alias == Some(name)
    }
}

impl PartialEq for Original {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// A block per step of each run that `shown` keeps, headed by a comment naming the setup, the
/// workload, the step, its threads (the clients) and the run's directory, then the step's
/// lines by `lines` (from the step and the run's parameters), as the original tool ends a run.
pub fn per_step(
    runs: &[LoadedRun],
    shown: fn(&StepSummary) -> bool,
    lines: impl Fn(&StepSummary, &std::collections::BTreeMap<String, String>) -> String,
) -> String {
    let mut out = String::new();
    for r in runs {
        let m = &r.manifest;
        for s in r.steps.iter().filter(|s| shown(s)) {
            let _ = writeln!(
                out,
                "# {} {} / {} {} with {} threads ({})",
                m.setup.name,
                m.setup.engine_version,
                m.workload_title(),
                s.step,
                s.clients,
                r.path.display()
            );
            out += &lines(s, &m.params);
            out.push('\n');
        }
    }
    out
}
