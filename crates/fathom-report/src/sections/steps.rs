//! The step table: throughput, latency and what each operation cost the host, one row per step
//! and setup with the seeds' column names and a `setup` column last; and the per-interval time
//! series.

use crate::section::Input;
use fathom_schema::figures::{View, FIGURES};
use fathom_schema::group::{median_step, Series};
use fathom_schema::result::device::DeviceLimits;
use fathom_schema::result::StepSummary;
use fathom_schema::table::{Cell, Style, Table};
use fathom_stats::verdict::cv;

/// The step table's columns: the step, `!`, each figure of `fathom_schema::figures` (with its
/// spread over the repeats beside one that asks), and the setup.
pub fn columns() -> Vec<&'static str> {
    let mut out = vec!["step", "!"];
    for f in FIGURES {
        out.push(f.column);
        if f.spread {
            out.push("±");
        }
    }
    out.push("setup");
    out
}

/// The intervals' table's columns: the step, its time, each figure an interval shows, the
/// setup.
fn interval_columns() -> Vec<&'static str> {
    let figures = FIGURES.iter().filter(|f| f.interval).map(|f| f.column);
    ["step", "t"]
        .into_iter()
        .chain(figures)
        .chain(["setup"])
        .collect()
}

/// True when other processes disturbed some repeat of a step (the table's `!`).
pub(crate) fn disturbed(repeats: &[&StepSummary]) -> bool {
    (repeats.iter()).any(|r| r.host.disturbance(r.window_seconds).is_some())
}

/// A step's row; `spread` is the coefficient of variation of its ops/s over the repeats, and
/// `disturbed` marks it `!` (another process used the host during a repeat) in a column of its
/// own, so the step's name stays a key in csv and json. `cores` is the host's, `limits` its
/// device's.
fn row(
    label: &str,
    s: &StepSummary,
    spread: Option<f64>,
    disturbed: bool,
    cores: Option<usize>,
    limits: Option<&DeviceLimits>,
) -> Vec<Cell> {
    let view = View::of_step(s, cores, limits);
    let mut out = vec![
        match s.interrupted {
            true => Cell::Text(format!("{}*", s.step)),
            false => Cell::text(&s.step),
        },
        Cell::text(if disturbed { "!" } else { "" }),
    ];
    for f in FIGURES {
        out.push(f.cell(&view));
        if f.spread {
            out.push(Cell::styled(
                spread.filter(|_| view.ops_known),
                Style::Spread,
            ));
        }
    }
    out.push(Cell::text(label));
    out
}

/// All steps of all series: grouped by step (in first-seen order), one row per series, each
/// figure the median over the series' repeats, its ops/s beside their spread.
pub fn table(input: &Input) -> Table {
    let mut t = Table::new(&columns());
    for step in &input.steps {
        for s in &input.series {
            let repeats = s.step(step);
            if !repeats.is_empty() {
                let label = s.label(&input.series);
                let ops: Vec<f64> = repeats.iter().map(|r| r.ops_per_sec).collect();
                let disturbed = disturbed(&repeats);
                let host = s.runs.first().map(|r| &r.manifest.host);
                let (cores, limits) = (
                    host.map(|h| h.cores),
                    host.and_then(|h| h.device_limits.as_ref()),
                );
                let median = median_step(&repeats);
                let mut row = row(&label, &median, cv(&ops), disturbed, cores, limits);
                // A profiled step's name links to its flame graph on the page.
                if repeats.iter().any(|r| r.profile.is_some()) {
                    row[0] = Cell::Link(
                        row[0].to_string(),
                        crate::sections::profiles::anchor(&label, step),
                    );
                }
                t.push(row);
            }
        }
    }
    t
}

/// Queries per operation: the step's SQL statements per event, or 1.
pub fn queries_per_op(s: &StepSummary) -> f64 {
    s.query_mix
        .map_or(1.0, |m| m.total())
        .max(f64::MIN_POSITIVE)
}

/// True when a step's operations are transactions of counted queries (sysbench's events).
pub fn counts_queries(all: &[Series], step: &str) -> bool {
    all.iter()
        .flat_map(|s| s.step(step))
        .any(|s| s.query_mix.is_some())
}

/// One row per interval of every step of every run (the time series).
pub fn intervals(input: &Input) -> anyhow::Result<Table> {
    let all = &input.series;
    let columns = interval_columns();
    let mut t = Table::new(&columns);
    for s in all {
        for (n, run) in s.runs.iter().enumerate() {
            let label = if s.runs.len() > 1 {
                format!("{}.r{}", s.label(all), n + 1)
            } else {
                s.label(all)
            };
            for step in &run.steps {
                for i in run.intervals(step)? {
                    let view = View::of_interval(&i);
                    let mut row = vec![Cell::text(&i.step), Cell::Number(i.t_end, Style::Fixed(0))];
                    row.extend(FIGURES.iter().filter(|f| f.interval).map(|f| f.cell(&view)));
                    row.push(Cell::text(&label));
                    t.push(row);
                }
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure of `fathom_schema::figures` is a column of the step table (and of the
    /// intervals' where it says so), a cell of every row and a line of the legend, with no
    /// code here naming it.
    #[test]
    fn every_figure_is_a_column_a_cell_and_a_line_of_the_legend() {
        let columns = columns();
        let legend = crate::sections::notes::legend();
        for f in FIGURES {
            assert!(columns.contains(&f.column), "{} is no column", f.column);
            let line = format!("{} ({}):", f.column, f.unit);
            assert!(legend.contains(&line), "the legend lacks `{line}`");
            assert_eq!(interval_columns().contains(&f.column), f.interval);
        }
        let s = StepSummary {
            ops: 1,
            ..StepSummary::default()
        };
        assert_eq!(row("a", &s, None, false, None, None).len(), columns.len());
    }
}
