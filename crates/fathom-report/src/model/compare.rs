//! `fathom compare`'s model: each setup against its base as the main table, the iostat tables
//! when asked for, which figure of the slowest operations grew, the profiles' differences, and
//! the legend as its notes; the JSON format prints the rows.

use super::Model;
use crate::comparison;
use crate::options::ReportOptions;
use crate::section::{Section, Titled};
use crate::sections::{iostat, profile_diff, tail_grew};
use fathom_stats::verdict::{against_bases, Side};

impl Model {
    /// `fathom compare`'s model of `sides`: `empty` is told of a setup with no step in common
    /// with its base.
    pub fn compare(
        sides: &[Side],
        opts: &ReportOptions,
        empty: impl FnMut(&Side, &Side),
    ) -> anyhow::Result<Model> {
        let against = against_bases(sides, opts.judging.base.as_deref(), &opts.judge(), empty)?;
        if against.rows.is_empty() {
            anyhow::bail!("no steps in common between the base and the others");
        }
        let mut notes = comparison::legend(&against, opts.judging.threshold);
        for d in &against.host_differences {
            notes += &format!("warning: {d}\n");
        }
        let mut sections = Vec::new();
        if let Some(step) = &opts.judging.iostat {
            let (tables, legend) = iostat::tables(sides, &against.pairs, step)?;
            let mut section = Section::new(format!("iostat during {step}"));
            section.tables = tables;
            sections.push(section);
            notes += &legend;
        }
        if let Some(section) = tail_grew::section(sides, &against.pairs)? {
            notes += section.legend.unwrap_or_default();
            sections.push(section);
        }
        if let Some(section) = profile_diff::section(sides, &against.pairs)? {
            notes += section.legend.unwrap_or_default();
            sections.push(section);
        }
        let main = Titled {
            title: "comparison".into(),
            table: comparison::table(&against.rows),
        };
        let title = format!("fathom compare against {}", against.bases.join(", "));
        Ok(Model {
            sections,
            notes,
            palette: sides.iter().map(|s| s.label.clone()).collect(),
            json: Some(serde_json::to_value(&against.rows)?),
            verdicts: against.rows.clone(),
            ..Model::of_table(title, main)
        })
    }
}
