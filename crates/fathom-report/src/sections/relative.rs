//! The comparison of every setup against the base (`--base`, else the first): the comparison
//! table of `fathom compare` and, on the page, a bar chart of the ratios with their intervals.
//! Every format shows it once the runs hold verdicts (repeats enough on both sides); before
//! that, the page alone.

use crate::comparison;
use crate::draw::svg::{BarChart, Bars};
use crate::section::{Chart, Input, Section, Shown, Titled};
use fathom_stats::verdict::{self, Row, Side};

/// The section, shown by every format once a step in it has a verdict and by the page alone
/// before; nothing when the runs hold one setup.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let operands = [(String::new(), input.runs)];
    let sides = verdict::sides(&operands);
    if sides.len() < 2 {
        return Ok(Vec::new());
    }
    let against = against(input, &sides)?;
    let rows = &against.rows;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let bases = against.bases.join(", ");
    let mut section = Section::new(format!("Relative throughput against {bases}"));
    section.charts.push(Chart::Bar(chart(&sides, &bases, rows)));
    section.tables.push(Titled {
        title: format!("relative throughput against {bases}"),
        table: comparison::table(rows),
    });
    let mut legend = comparison::legend(&against, input.opts.judging.threshold);
    for d in &against.host_differences {
        legend += &format!("warning: {d}\n");
    }
    if let Some(step) = &input.opts.judging.iostat {
        let (tables, iostat_legend) =
            crate::sections::iostat::tables(&sides, &against.pairs, step)?;
        section.tables.extend(tables);
        legend.push_str(&iostat_legend);
    }
    section.paragraph = Some(legend);
    let verdicts = rows
        .iter()
        .any(|r| r.verdict != verdict::Verdict::NoVerdict);
    if !verdicts {
        section.shown = Shown::Page;
    }
    Ok(vec![section])
}

/// Every side of `input`'s runs against its base (`--base`, else the first), judged as the
/// report's options say: this section's comparison, and the summary's ratios.
pub(crate) fn against<'a>(
    input: &Input,
    sides: &'a [Side],
) -> anyhow::Result<verdict::Against<'a>> {
    let base = input.opts.judging.base.as_deref();
    verdict::against_bases(sides, base, &input.opts.judge(), |_, _| {})
}

/// A bar per compared setup and step (and client count, when several ran).
fn chart(sides: &[Side], bases: &str, rows: &[Row]) -> BarChart {
    let multi_clients = rows.iter().any(|r| r.clients != rows[0].clients);
    let cat = |r: &Row| {
        if multi_clients {
            format!("{} c{}", r.step, r.clients)
        } else {
            r.step.clone()
        }
    };
    let mut categories: Vec<String> = Vec::new();
    for r in rows {
        if !categories.contains(&cat(r)) {
            categories.push(cat(r));
        }
    }
    let series: Vec<Bars> = sides
        .iter()
        .filter(|s| rows.iter().any(|r| r.new == s.label))
        .map(|s| {
            let of = |c: &String| rows.iter().find(|r| r.new == s.label && &cat(r) == c);
            Bars {
                name: s.label.clone(),
                values: categories.iter().map(|c| of(c).map(|r| r.ratio)).collect(),
                intervals: categories
                    .iter()
                    .map(|c| of(c).and_then(|r| r.ci95))
                    .collect(),
            }
        })
        .collect();
    BarChart {
        title: format!("relative throughput (ops/s / {bases})"),
        y_label: "relative ops/s".into(),
        categories,
        series,
        reference: Some(1.0),
    }
}
