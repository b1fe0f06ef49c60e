//! The page's comparison of every setup against the base (`--base`, else the first): the
//! comparison table of `fathom compare` and a bar chart of the ratios with their intervals.

use crate::compare::{self, Row, Side};
use crate::iostat;
use crate::model::{Chart, Input, Section, Titled};
use crate::svg::{BarChart, Bars};

/// The section; nothing when the runs hold one setup.
pub fn section(input: &Input) -> anyhow::Result<Option<Section>> {
    let operands = [(String::new(), input.runs)];
    let sides = compare::sides(&operands);
    if sides.len() < 2 {
        return Ok(None);
    }
    let base_at = input
        .opts
        .base
        .as_deref()
        .and_then(|b| sides.iter().position(|s| s.label == b))
        .unwrap_or(0);
    let base: &Side = &sides[base_at];
    let mut rows = Vec::new();
    for (i, s) in sides.iter().enumerate() {
        if i != base_at {
            rows.extend(compare::compare(base, s, input.opts.threshold));
        }
    }
    if rows.is_empty() {
        return Ok(None);
    }
    let mut section = Section::new(format!("Relative throughput against {}", base.label));
    section
        .charts
        .push(Chart::Bar(chart(&sides, base_at, &rows)));
    section.tables.push(Titled {
        title: String::new(),
        table: compare::table(&rows),
    });
    let mut legend = compare::legend(&base.label, input.opts.threshold);
    if let Some(step) = &input.opts.iostat {
        let table = iostat::table(&sides, step)
            .ok_or_else(|| anyhow::anyhow!("--iostat: no setup ran a step `{step}`"))?;
        section.tables.push(Titled {
            title: format!("iostat during {step}"),
            table,
        });
        legend.push_str(&iostat::legend(step, None));
    }
    section.paragraph = Some(legend);
    Ok(Some(section))
}

/// A bar per setup and step (and client count, when several ran).
fn chart(sides: &[Side], base_at: usize, rows: &[Row]) -> BarChart {
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
        .enumerate()
        .filter(|(i, _)| *i != base_at)
        .map(|(_, s)| {
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
        title: format!("relative throughput (ops/s / {})", sides[base_at].label),
        y_label: "relative ops/s".into(),
        categories,
        series,
        reference: Some(1.0),
    }
}
