//! `fathom history`: one figure of one step over every recorded run (or over engine
//! versions), from the results database, with the changes found in it; text, Markdown, CSV,
//! JSON or an HTML trend page.

use clap::Args;
use fathom_core::changepoint::Change;
use fathom_core::table::{Cell, Style, Table};
use fathom_report::draw::svg::{Line, LineChart};
use fathom_report::model::Model;
use fathom_report::section::{Chart, Section, Shown, Titled};
use fathom_run::history::{Filter, History};
use std::path::Path;

#[derive(Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub filter: Filter,
    /// The results database: a SQLite file's path or a PostgreSQL URL
    /// (postgres://USER@HOST:PORT/DB) [default: results/fathom.db].
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Output format: a format of the report model.
    #[arg(long, default_value = "text")]
    pub format: fathom_report::Format,
}

/// A line per change: where, from what to what, and how sure.
fn change_lines(h: &History, figure: &str) -> String {
    let values: Vec<f64> = h.points.iter().map(|p| p.value).collect();
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(h.changes.iter().map(|c| c.at));
    bounds.push(values.len());
    let mut out = String::new();
    for (i, c) in h.changes.iter().enumerate() {
        let before = fathom_core::group::median(&values[bounds[i]..c.at]);
        let after = fathom_core::group::median(&values[c.at..bounds[i + 2]]);
        let p = &h.points[c.at];
        out += &format!(
            "change at run {} ({}, {} {}): {figure} median {} -> {} ({:+.1}%), p = {:.3}\n",
            c.at + 1,
            p.started_at,
            p.setup,
            p.engine_version,
            fathom_core::table::num(before),
            fathom_core::table::num(after),
            100.0 * (after / before - 1.0),
            c.p
        );
    }
    if h.changes.is_empty() {
        out += "no change found\n";
    }
    out
}

fn table(h: &History, figure: &str) -> Table {
    let mut t = Table::new(&["run", "started_at", "setup", "version", figure, "change"]);
    let at = |n: usize| h.changes.iter().any(|c: &Change| c.at == n);
    for (n, p) in h.points.iter().enumerate() {
        t.push(vec![
            Cell::count((n + 1) as f64),
            Cell::text(&p.started_at),
            Cell::text(&p.setup),
            Cell::text(&p.engine_version),
            Cell::Number(p.value, Style::Auto),
            Cell::text(if at(n) { "<- change" } else { "" }),
        ]);
    }
    t
}

pub fn run(args: &HistoryArgs) -> anyhow::Result<()> {
    let store = fathom_run::records::Store::parse(args.store.as_deref(), Path::new("results"))
        .map_err(anyhow::Error::msg)?;
    let filter = &args.filter;
    let figure = &filter.figure.name();
    let h = store.history(filter)?;
    let title = format!(
        "{} of {} {} on {}{}",
        figure,
        filter.workload,
        filter.step,
        filter.engine,
        filter
            .setup
            .as_ref()
            .map_or(String::new(), |s| format!(" ({s})"))
    );
    let mut chart = Section::new("trend");
    chart.shown = Shown::Page;
    chart.charts.push(Chart::Line(LineChart {
        title: title.clone(),
        x_label: if filter.by_version {
            "run, by version"
        } else {
            "run"
        }
        .into(),
        y_label: figure.clone(),
        lines: vec![Line {
            name: figure.clone(),
            points: h
                .points
                .iter()
                .enumerate()
                .map(|(n, p)| ((n + 1) as f64, p.value))
                .collect(),
        }],
        log_y: false,
        x_names: Vec::new(),
    }));
    let model = Model {
        title: format!("fathom history: {title}"),
        runs: Vec::new(),
        main: Titled {
            title: "history".into(),
            table: table(&h, figure),
        },
        sections: vec![chart],
        intervals: None,
        notes: format!(
            "{}changes by E-divisive means (alpha 1, permutation test of 999 shuffles, p <= 0.01, at least 3 runs a side)\n",
            change_lines(&h, figure)
        ),
        json: None,
    };
    print!("{}", args.format.renderer().render(&model, &[])?);
    Ok(())
}
