//! The sections the runs' workloads add through their registry entries (`ReportHooks`): each
//! workload present in the runs, its own tables under its heading. The report names no
//! workload itself.

use crate::section::{Input, Section};
use fathom_workloads::report::ReportHooks;

/// The hooks of every workload the runs hold, in first-seen order (unknown ones skipped).
pub fn present(input: &Input) -> Vec<&'static ReportHooks> {
    let mut out: Vec<&'static ReportHooks> = Vec::new();
    for s in &input.series {
        if let Ok(w) = fathom_workloads::find(&s.workload) {
            if !out.iter().any(|h| std::ptr::eq(*h, &w.report)) {
                out.push(&w.report);
            }
        }
    }
    out
}

/// One section per workload that has tables of its own for these runs.
pub fn sections(input: &Input) -> anyhow::Result<Vec<Section>> {
    Ok(present(input)
        .into_iter()
        .filter_map(|hooks| {
            let mut section = Section::new(hooks.heading);
            section.tables = (hooks.tables)(&input.series);
            section.if_any()
        })
        .collect())
}
