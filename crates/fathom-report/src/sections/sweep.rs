//! The concurrency sweep as seed 003 prints it: per step, a table per figure (queries or
//! operations per second, disk reads per second, disk reads per query) with a column per
//! client count and a row per setup, each the median over repeats; on the page, throughput
//! against clients, a chart per step.

use crate::draw::svg::{Line, LineChart};
use crate::section::{Chart, Input, Section, Titled};
use crate::sections::steps::{counts_queries, queries_per_op};
use fathom_schema::group::{median, median_step};
use fathom_schema::result::StepSummary;
use fathom_schema::table::{Cell, Style, Table};

/// A figure of a step summary, its title and how it prints.
struct Figure {
    title: String,
    value: fn(&StepSummary) -> Option<f64>,
    style: Style,
}

/// The section; nothing when one client count ran.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    if input.clients().len() < 2 {
        return Ok(Vec::new());
    }
    let mut section = Section::new("By client count");
    for step in &input.steps {
        let cells = cells(input, step);
        for figure in figures(input, step) {
            if let Some(table) = table(input, &cells, &figure) {
                section.tables.push(Titled {
                    title: format!("{step}: {}", figure.title),
                    table,
                });
            }
        }
    }
    if input.page {
        section.charts = input
            .steps
            .iter()
            .filter_map(|step| chart(input, step))
            .collect();
    }
    Ok(section.if_any().into_iter().collect())
}

/// The figures a step is read by: its rate, disk reads per second and per unit.
fn figures(input: &Input, step: &str) -> [Figure; 3] {
    let queries = counts_queries(&input.series, step);
    // A step that inserts rows in batches (at least a row an operation) is read by its rows
    // (seed 002's IPS).
    let rows = input
        .series
        .iter()
        .flat_map(|s| s.step(step))
        .any(|s| s.rows > 0 && s.rows >= s.ops);
    let unit = if queries { "query" } else { "op" };
    let rate = if rows {
        Figure {
            title: "rows inserted per second".into(),
            value: |s| Some(s.rows_per_sec),
            style: Style::Rate,
        }
    } else {
        Figure {
            title: if queries {
                "queries per second"
            } else {
                "operations per second"
            }
            .into(),
            value: |s| Some(s.ops_per_sec * queries_per_op(s)),
            style: Style::Rate,
        }
    };
    [
        rate,
        Figure {
            title: "disk reads per second (iostat r/s)".into(),
            value: |s| s.host.rps,
            style: Style::Rate,
        },
        Figure {
            title: format!("disk reads per {unit}"),
            value: |s| s.per_op.reads.map(|r| r / queries_per_op(s)),
            style: Style::Fixed(2),
        },
    ]
}

/// Per setup, the median summary of the step at each client count, where it ran operations;
/// computed once per step for all its figures.
fn cells<'a>(input: &'a Input, step: &str) -> Vec<(&'a str, Vec<Option<StepSummary>>)> {
    let cell = |setup: &str, clients: usize| {
        let s = input
            .series
            .iter()
            .find(|s| s.setup == setup && s.clients == clients)?;
        let reps = s.step(step);
        (!reps.is_empty() && reps[0].ops > 0).then(|| median_step(&reps))
    };
    let clients = input.clients();
    input
        .setups()
        .into_iter()
        .map(|setup| (setup, clients.iter().map(|&c| cell(setup, c)).collect()))
        .collect()
}

/// A row per setup that has the figure, a column per client count.
fn table(
    input: &Input,
    summaries: &[(&str, Vec<Option<StepSummary>>)],
    figure: &Figure,
) -> Option<Table> {
    let mut header: Vec<String> = input.clients().iter().map(|c| c.to_string()).collect();
    header.push("setup".into());
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    t.over = Some("clients".into());
    for (setup, row) in summaries {
        let cells: Vec<Option<f64>> = row
            .iter()
            .map(|s| s.as_ref().and_then(|s| (figure.value)(s)))
            .collect();
        if cells.iter().all(Option::is_none) {
            continue;
        }
        let mut row: Vec<Cell> = cells
            .iter()
            .map(|v| Cell::styled(*v, figure.style))
            .collect();
        row.push(Cell::text(*setup));
        t.push(row);
    }
    (!t.rows.is_empty()).then_some(t)
}

/// Throughput against clients for one step, a line per setup.
fn chart(input: &Input, step: &str) -> Option<Chart> {
    let clients = input.clients();
    let lines: Vec<Line> = input
        .setups()
        .iter()
        .map(|name| {
            let mut points: Vec<(f64, f64)> = input
                .series
                .iter()
                .filter(|s| s.setup == *name)
                .filter_map(|s| {
                    let reps = s.step(step);
                    (!reps.is_empty() && reps[0].ops > 0).then(|| {
                        let v: Vec<f64> = reps
                            .iter()
                            .map(|r| r.ops_per_sec * queries_per_op(r))
                            .collect();
                        (s.clients as f64, median(&v))
                    })
                })
                .collect();
            // Client counts sit evenly spaced, as the sweep tables list them.
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            for p in &mut points {
                p.0 = clients.iter().position(|&c| c as f64 == p.0).unwrap_or(0) as f64;
            }
            Line {
                name: name.to_string(),
                points,
            }
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    // Setups an order of magnitude apart (embedded engines beside servers) get a log axis.
    let ys = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (lo, hi) = (ys().fold(f64::MAX, f64::min), ys().fold(0.0, f64::max));
    let log_y = lo > 0.0 && hi / lo > 20.0;
    Some(Chart::Line(LineChart {
        title: format!("{step}: throughput by clients"),
        x_label: "clients".into(),
        y_label: if counts_queries(&input.series, step) {
            "queries/s"
        } else {
            "ops/s"
        }
        .into(),
        lines,
        log_y,
        x_names: clients.iter().map(|c| c.to_string()).collect(),
    }))
}
