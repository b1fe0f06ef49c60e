//! What a workload file adds to reports: the end-of-run lines of the tools its files come from,
//! YCSB's (`--format ycsb`) and pgbench's (`--format pgbench`).

use super::{pgbench_format, ycsb_format};
use crate::report::ReportHooks;
use fathom_schema::result::StepSummary;
use fathom_schema::store::LoadedRun;
use std::fmt::Write;

/// A workload file's additions to reports.
pub const HOOKS: ReportHooks = ReportHooks {
    originals: &[ycsb_format::ORIGINAL, pgbench_format::ORIGINAL],
    ..ReportHooks::NONE
};

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
