//! The terminal, Markdown and CSV renderings of the report model: what ran, the main table,
//! each section's tables titled with how their rows summarise the runs ("median over repeats"), the notes, and the intervals when
//! asked for. CSV holds the main table (or the intervals) alone, one header, for scripts.

use super::renderer::Renderer;
use crate::model::Model;
use crate::section::{Section, Shown};
use fathom_schema::store::LoadedRun;
use fathom_schema::table::Table;

/// Aligned text, as the seeds print their tables.
pub struct Text;
/// Markdown tables, numbers right-aligned.
pub struct Markdown;
/// The main table (or the intervals) as CSV.
pub struct Csv;

impl Renderer for Text {
    fn render(&self, m: &Model, _: &[LoadedRun]) -> anyhow::Result<String> {
        Ok(render(m, false))
    }
}

impl Renderer for Markdown {
    fn render(&self, m: &Model, _: &[LoadedRun]) -> anyhow::Result<String> {
        Ok(render(m, true))
    }
}

impl Renderer for Csv {
    fn render(&self, m: &Model, _: &[LoadedRun]) -> anyhow::Result<String> {
        Ok(m.intervals.as_ref().unwrap_or(&m.main.table).csv())
    }
}

fn render(m: &Model, markdown: bool) -> String {
    let table = |t: &Table| if markdown { t.markdown() } else { t.text() };
    let gap = if markdown { "\n" } else { "" };
    let mut out: String = m.runs.iter().map(|line| format!("{line}\n")).collect();
    // The summary's title line begins with the blank line a table needs after the runs.
    if !m.runs.is_empty() && m.summary.is_none() {
        out += gap;
    }
    // `--columns fit` (the model's fitted step table) prints each section's terminal tables too.
    let fit = m.fitted.is_some();
    let section = |out: &mut String, section: &Section| {
        let tables = match (fit, &section.terminal) {
            (true, Some(terminal)) => terminal,
            _ => &section.tables,
        };
        for t in tables {
            match section.over {
                Some(over) => *out += &format!("\n{} ({over}):\n{gap}", t.title),
                None => *out += &format!("\n{}:\n{gap}", t.title),
            }
            *out += &table(&t.table);
        }
        if let Some(p) = &section.paragraph {
            *out += &format!("{gap}{}\n", p.trim_end());
        }
    };
    if let Some(summary) = &m.summary {
        section(&mut out, summary);
        out += &format!("\nsteps (median over repeats):\n{gap}");
    }
    out += &table(m.fitted.as_ref().unwrap_or(&m.main.table));
    for s in m.sections.iter().filter(|s| s.shown == Shown::Everywhere) {
        section(&mut out, s);
    }
    out += "\n";
    out += &m.notes;
    if let Some(intervals) = &m.intervals {
        out += &format!("\nintervals:\n{gap}");
        out += &table(intervals);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::table::{Cell, Titled};

    /// A model whose one section has a wide column, fitted (`--columns fit`) or not.
    fn model(fit: bool) -> Model {
        let mut main = Table::new(&["step"]);
        main.push(vec![Cell::text("run")]);
        let mut m = Model::of_table(
            "t".into(),
            Titled {
                title: "steps".into(),
                table: main.clone(),
            },
        );
        m.fitted = fit.then_some(main);
        let mut bound = Table::new(&["step", "bound", "shares"]);
        bound.push(vec![
            Cell::text("run"),
            Cell::text("engine cpu"),
            Cell::text("engine cpu 80%, off cpu 20%"),
        ]);
        let mut section = Section::new("What bounded each step");
        section.tables.push(Titled {
            title: "bound".into(),
            table: bound,
        });
        section.terminal = Some(vec![Titled {
            title: "bound".into(),
            table: section.tables[0].table.without(&["shares"]),
        }]);
        m.sections.push(section);
        m
    }

    #[test]
    fn the_terminal_prints_a_sections_terminal_tables_unless_asked() {
        let fitted = render(&model(true), false);
        assert!(
            fitted.contains("engine cpu") && !fitted.contains("shares"),
            "{fitted}"
        );
        let all = render(&model(false), false);
        assert!(all.contains("engine cpu 80%, off cpu 20%"), "{all}");
    }
}
