//! The terminal, Markdown and CSV renderings of the report model: what ran, the step table,
//! each section's tables titled "(median over repeats)", the notes, and the intervals when
//! asked for. CSV holds the step table (or the intervals) alone, one header, for scripts.

use crate::model::{Model, Shown};
use crate::table::Table;

/// Aligned text, or Markdown tables.
pub fn render(m: &Model, markdown: bool) -> String {
    let table = |t: &Table| if markdown { t.markdown() } else { t.text() };
    let gap = if markdown { "\n" } else { "" };
    let mut out: String = m.runs.iter().map(|line| format!("{line}\n")).collect();
    out += gap;
    out += &table(&m.steps);
    for section in m.sections.iter().filter(|s| s.shown == Shown::Everywhere) {
        for t in &section.tables {
            out += &format!("\n{} (median over repeats):\n{gap}", t.title);
            out += &table(&t.table);
        }
    }
    out += "\n";
    out += &m.notes;
    if let Some(intervals) = &m.intervals {
        out += &format!("\nintervals:\n{gap}");
        out += &table(intervals);
    }
    out
}

/// The step table, or the intervals when asked for.
pub fn csv(m: &Model) -> String {
    m.intervals.as_ref().unwrap_or(&m.steps).csv()
}
