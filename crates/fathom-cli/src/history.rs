//! `fathom history`: one figure of one step over every recorded run (or over engine
//! versions), from the results database, with the changes found in it; text, Markdown, CSV,
//! JSON or an HTML trend page.

use clap::Args;
use fathom_report::draw::svg::{Line, LineChart};
use fathom_report::model::Model;
use fathom_report::section::{Chart, Section, Shown, Titled};
use fathom_run::history::{Filter, History, Series, SeriesKey};
use fathom_schema::table::{Cell, Style, Table};
use fathom_stats::changepoint::gate::{self, Worse};
use fathom_stats::changepoint::{Change, Search};
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
    /// `regression`: exit with status 3, naming each, when a series' newest segment (its runs
    /// since its last change point) is worse than the segment before by at least
    /// --min-change; `change`: either way. A nightly job's gate.
    #[arg(long, value_name = "regression|change", value_parser = ["regression", "change"])]
    pub fail_on: Option<String>,
    /// The smallest shift between the newest segment and the one before that fails the gate
    /// (2% or 0.02).
    #[arg(long, value_name = "PERCENT", default_value = "2%",
          value_parser = fathom_api::units::parse_threshold)]
    pub min_change: f64,
}

/// A p-value as printed: a permutation test cannot go below 1 / (shuffles + 1), and says so.
fn p_text(p: f64) -> String {
    let floor = 1.0 / (Search::default().permutations + 1) as f64;
    if p <= floor * (1.0 + 1e-9) {
        format!("p <= {floor:.3}")
    } else {
        format!("p = {p:.3}")
    }
}

/// A line per change: where, from what to what, and how sure.
fn change_lines(h: &Series, figure: &str) -> String {
    let values: Vec<f64> = h.points.iter().map(|p| p.value).collect();
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(h.changes.iter().map(|c| c.at));
    bounds.push(values.len());
    let mut out = String::new();
    for (i, c) in h.changes.iter().enumerate() {
        let before = fathom_schema::group::median(&values[bounds[i]..c.at]);
        let after = fathom_schema::group::median(&values[c.at..bounds[i + 2]]);
        let p = &h.points[c.at];
        out += &format!(
            "change at run {} ({}, {} {}): {figure} median {} -> {} ({:+.1}%), {}\n",
            c.at + 1,
            p.started_at,
            p.setup,
            p.engine_version,
            fathom_schema::table::num(before),
            fathom_schema::table::num(after),
            100.0 * (after / before - 1.0),
            p_text(c.p)
        );
    }
    if h.changes.is_empty() {
        out += "no change found\n";
    }
    out
}

/// Where the engine's version changes along a series, as one line (`versions: 8.0.0 from run
/// 1, 8.1.0 from run 12`); empty when it holds one version.
fn version_marks(h: &Series) -> String {
    let mut marks: Vec<String> = Vec::new();
    let mut last: Option<&str> = None;
    for (n, p) in h.points.iter().enumerate() {
        if last != Some(p.engine_version.as_str()) {
            marks.push(format!("{} from run {}", p.engine_version, n + 1));
            last = Some(&p.engine_version);
        }
    }
    if marks.len() < 2 {
        return String::new();
    }
    format!(
        "versions: {} (marks on one series; --split-version makes each its own)\n",
        marks.join(", ")
    )
}

fn table(h: &Series, figure: &str) -> Table {
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

/// A series' points as a line chart.
fn chart(h: &Series, title: String, figure: &str, by_version: bool) -> Chart {
    Chart::Line(LineChart {
        title,
        x_label: if by_version { "run, by version" } else { "run" }.into(),
        y_label: figure.into(),
        lines: vec![Line {
            name: figure.into(),
            points: h
                .points
                .iter()
                .enumerate()
                .map(|(n, p)| ((n + 1) as f64, p.value))
                .collect(),
        }],
        log_y: false,
        x_names: Vec::new(),
    })
}

const METHOD: &str = "changes by E-divisive means (alpha 1, permutation test of 999 shuffles \
                      of blocks of neighbouring runs, p <= 0.01, at least 3 runs a side)\n";

/// The table of series a mixed selection splits into, one row each.
fn series_table(h: &History) -> Table {
    let mut columns = vec!["series"];
    columns.extend(h.varies.iter().map(|d| SeriesKey::heading(d)));
    columns.extend(["runs", "first", "last", "changes"]);
    let mut t = Table::new(&columns);
    for (n, s) in h.series.iter().enumerate() {
        let mut row = vec![Cell::count((n + 1) as f64)];
        row.extend(h.varies.iter().map(|d| Cell::text(s.key.value(d))));
        row.push(Cell::count(s.points.len() as f64));
        row.push(Cell::text(&s.points[0].started_at));
        row.push(Cell::text(&s.points[s.points.len() - 1].started_at));
        row.push(Cell::count(s.changes.len() as f64));
        t.push(row);
    }
    t
}

/// The model of a history of one series: its points, its chart and its changes.
fn one_series(s: &Series, title: &str, figure: &str, by_version: bool) -> Model {
    let mut trend = Section::new("trend");
    trend.shown = Shown::Page;
    trend
        .charts
        .push(chart(s, title.into(), figure, by_version));
    let main = Titled {
        title: "history".into(),
        table: table(s, figure),
    };
    Model {
        sections: vec![trend],
        notes: format!("{}{}{METHOD}", version_marks(s), change_lines(s, figure)),
        ..Model::of_table(format!("fathom history: {title}"), main)
    }
}

/// The model of a selection that mixes series: the list of series, then each with its
/// points, chart and changes.
fn split(h: &History, title: &str, figure: &str, by_version: bool) -> Model {
    let mut notes = format!(
        "the selection holds {} series, runs that differ in {}: each is judged on its own \
         (--setup, --clients, --param, --host pick one)\n",
        h.series.len(),
        (h.varies.iter())
            .map(|d| SeriesKey::heading(d))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut sections = Vec::new();
    for (n, s) in h.series.iter().enumerate() {
        let name = format!("series {}: {}", n + 1, s.key.describe(&h.varies));
        notes += &format!("{name}\n{}{}", version_marks(s), change_lines(s, figure));
        let mut section = Section::new(name.clone());
        section.tables.push(Titled {
            title: name.clone(),
            table: table(s, figure),
        });
        section
            .charts
            .push(chart(s, format!("{title}, {name}"), figure, by_version));
        sections.push(section);
    }
    let main = Titled {
        title: "series".into(),
        table: series_table(h),
    };
    Model {
        sections,
        notes: notes + METHOD,
        ..Model::of_table(format!("fathom history: {title}"), main)
    }
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
    let model = match h.series.as_slice() {
        [one] => one_series(one, &title, figure, filter.by_version),
        _ => split(&h, &title, figure, filter.by_version),
    };
    print!("{}", args.format.renderer().render(&model, &[])?);
    if let Some(on) = &args.fail_on {
        let worse = (on == "regression").then(|| filter.figure.worse());
        let failed = newest_shifts(&h, figure, args.min_change, worse);
        if !failed.is_empty() {
            let failed = fathom_stats::verdict::gate::GateFailed {
                noun: "series' newest level",
                lines: failed,
            };
            return Err(failed.into());
        }
    }
    Ok(())
}

/// Each series whose newest segment sits at least `min_change` from the one before (that way,
/// given `worse`), as a line naming the series, where its newest segment began, and the two
/// levels.
fn newest_shifts(h: &History, figure: &str, min_change: f64, worse: Option<Worse>) -> Vec<String> {
    let values = |s: &Series| -> Vec<f64> { s.points.iter().map(|p| p.value).collect() };
    // How nights carry over, read from every series of the selection (one machine's, as a
    // series' key holds the machine).
    let residuals: Vec<gate::Residuals> = h
        .series
        .iter()
        .map(|s| gate::Residuals::of(&values(s), &s.changes))
        .collect();
    let carry = gate::Residuals::pooled(&residuals).carry_over();
    let mut out = Vec::new();
    for (n, s) in h.series.iter().enumerate() {
        let Some(shift) = gate::newest(&values(s), &s.changes, Some(carry)) else {
            continue;
        };
        if !shift.fails(min_change, worse) {
            continue;
        }
        let series = if h.series.len() > 1 {
            format!("series {}: ", n + 1)
        } else {
            String::new()
        };
        let p = &s.points[shift.at];
        out.push(format!(
            "{series}since run {} ({}, {} {}): {figure} median {} against {} before ({:+.1}%, \
             at least {:.1}% fails)",
            shift.at + 1,
            p.started_at,
            p.setup,
            p.engine_version,
            fathom_schema::table::num(shift.after),
            fathom_schema::table::num(shift.before),
            100.0 * shift.relative(),
            100.0 * min_change
        ));
    }
    out
}
