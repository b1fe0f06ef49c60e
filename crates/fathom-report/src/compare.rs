//! Relative throughput against a base (seed 004's "QPS for my version / QPS for the base"):
//! per step and client count, the ratio of medians, the change in cpu/o, wKB/o and r/o, and
//! with repeats a bootstrap confidence interval and a verdict that accounts for noise.

use crate::group::median;
use crate::iostat;
use crate::model::{Model, Section, Titled};
use crate::table::{Cell, Style, Table};
use crate::ReportOptions;
pub use fathom_core::verdict::*;

pub const COLUMNS: &[&str] = &[
    "step",
    "clients",
    "base ops/s",
    "new ops/s",
    "±",
    "new/base",
    "95% CI",
    "verdict",
    "cpu/o",
    "wKB/o",
    "r/o",
    "n",
    "new",
    "ver",
];

/// The comparison table; figure columns are NEW/BASE ratios of the medians.
pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(COLUMNS);
    let ratio = |x: Option<f64>| Cell::fixed(x, 2);
    for r in rows {
        t.push(vec![
            Cell::text(&r.step),
            Cell::count(r.clients as f64),
            Cell::num(median(&r.base_ops_per_sec)),
            Cell::num(median(&r.new_ops_per_sec)),
            match (r.base_cv, r.new_cv) {
                (Some(b), Some(n)) => Cell::Pair(b, n, Style::Spread, '/'),
                _ => Cell::Missing,
            },
            Cell::Number(r.ratio, Style::Fixed(3)),
            r.ci95.map_or(Cell::Missing, |(lo, hi)| {
                Cell::Pair(lo, hi, Style::Fixed(3), '-')
            }),
            Cell::text(r.verdict_text()),
            ratio(r.cpu_ratio),
            ratio(r.write_kb_ratio),
            ratio(r.reads_ratio),
            Cell::Pair(
                r.base_ops_per_sec.len() as f64,
                r.new_ops_per_sec.len() as f64,
                Style::Fixed(0),
                '/',
            ),
            Cell::text(&r.new),
            Cell::text(&r.new_version),
        ]);
    }
    t
}

/// How to read the table.
pub fn legend(base: &str, threshold: f64) -> String {
    format!(
        "base: {base}. ±: coefficient of variation of ops/s over the runs, base/new. new/base: ratio \
         of median ops/s; 95% CI: percentile bootstrap of that ratio ({RESAMPLES} resamples); \
         verdict: faster or slower when the whole interval lies beyond ±{t:.1}%, same when it lies \
         within ±{t:.1}%, else undecided (\"at max\": after an experiment's most rounds); with \
         fewer than {MIN_REPEATS} runs on a side, no verdict. cpu/o, wKB/o, r/o: new/base of the \
         medians. n: runs base/new.\n",
        t = threshold * 100.0
    )
}

/// The iostat tables of `--iostat STEP` (each setup's figures, then each against its base)
/// and their legend.
pub fn iostat_tables(
    sides: &[Side],
    pairs: &[(usize, usize)],
    step: &str,
) -> anyhow::Result<(Vec<Titled>, String)> {
    let table = iostat::table(sides, step)
        .ok_or_else(|| anyhow::anyhow!("--iostat: no setup ran a step `{step}`"))?;
    let mut tables = vec![Titled {
        title: format!("iostat during {step}"),
        table,
    }];
    if let Some(table) = iostat::relative(sides, pairs, step) {
        tables.push(Titled {
            title: format!("iostat during {step}, relative to the base"),
            table,
        });
    }
    let device = sides
        .iter()
        .flat_map(|s| s.runs.iter().flat_map(|r| r.steps.iter()))
        .find_map(|s| s.host.device.clone());
    Ok((tables, iostat::legend(step, device.as_deref())))
}

/// `fathom compare`'s model: the comparison as its main table, the iostat tables when asked
/// for, the legend as its notes; the JSON format prints the rows.
pub fn model(
    sides: &[Side],
    opts: &ReportOptions,
    empty: impl FnMut(&Side, &Side),
) -> anyhow::Result<Model> {
    let against = against_bases(sides, opts.base.as_deref(), &opts.judge(), empty)?;
    if against.rows.is_empty() {
        anyhow::bail!("no steps in common between the base and the others");
    }
    let mut notes = legend(&against.bases.join(", "), opts.threshold);
    for d in &against.host_differences {
        notes += &format!("warning: {d}\n");
    }
    let mut sections = Vec::new();
    if let Some(step) = &opts.iostat {
        let (tables, legend) = iostat_tables(sides, &against.pairs, step)?;
        let mut section = Section::new(format!("iostat during {step}"));
        section.tables = tables;
        sections.push(section);
        notes += &legend;
    }
    if let Some(section) = crate::profile_diff::section(sides, &against.pairs)? {
        notes += section.legend.unwrap_or_default();
        sections.push(section);
    }
    Ok(Model {
        title: format!("fathom compare against {}", against.bases.join(", ")),
        runs: Vec::new(),
        main: Titled {
            title: "comparison".into(),
            table: table(&against.rows),
        },
        sections,
        intervals: None,
        notes,
        json: Some(serde_json::to_value(&against.rows)?),
    })
}
