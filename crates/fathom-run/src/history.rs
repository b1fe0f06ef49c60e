//! A figure's history from the results database: one step of one workload on one engine, a
//! point per finished run in the order the runs started (or by engine version), and the
//! changes E-divisive means finds in it (`fathom_core::changepoint`).

use crate::records::Store;
use fathom_core::changepoint::{self, Change, Search};
use rusqlite::Connection;

/// The figures a history can follow: the name `--figure` takes and its column in `steps`.
pub const FIGURES: &[(&str, &str)] = &[
    ("ops_per_sec", "ops_per_sec"),
    ("p50", "p50_us"),
    ("p99", "p99_us"),
    ("cpu_us", "cpu_us"),
    ("write_kb", "write_kb"),
    ("reads", "reads"),
    ("db_gb", "db_gb"),
    ("rss_gb", "rss_gb"),
];

/// Which runs a history follows.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub engine: String,
    pub workload: String,
    pub step: String,
    /// A setup's name, or a pattern of names (`*.buffered`: every release's buffered setup).
    pub setup: Option<String>,
    /// Runs that started at or after this RFC 3339 time.
    pub since: Option<String>,
    /// One of `FIGURES`' names.
    pub figure: String,
    /// Order by engine version (then start) rather than by start.
    pub by_version: bool,
}

/// One run's figure.
#[derive(Clone, Debug)]
pub struct Point {
    pub started_at: String,
    pub engine_version: String,
    pub setup: String,
    pub value: f64,
}

/// A history: its points and the changes found in them.
pub struct History {
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
}

/// The column of a figure's name, or an error listing the names.
fn column(figure: &str) -> anyhow::Result<&'static str> {
    FIGURES
        .iter()
        .find(|(name, _)| *name == figure)
        .map(|(_, c)| *c)
        .ok_or_else(|| {
            let names: Vec<&str> = FIGURES.iter().map(|(n, _)| *n).collect();
            anyhow::anyhow!(
                "--figure: no figure `{figure}`; the figures are {}",
                names.join(", ")
            )
        })
}

/// Orders engine versions as numbers where they are (8.10 after 8.9).
fn version_key(v: &str) -> Vec<(u64, String)> {
    v.split(['.', '-'])
        .map(|p| (p.parse::<u64>().unwrap_or(u64::MAX), p.to_string()))
        .collect()
}

impl Store {
    /// The history `filter` asks for, with its changes.
    pub fn history(&self, filter: &Filter) -> anyhow::Result<History> {
        let crate::records::Store::Sqlite(path) = self else {
            anyhow::bail!("--store off: no results database to read");
        };
        if !path.exists() {
            anyhow::bail!(
                "{}: no results database here (fathom run records one under the results root; `fathom store import DIR` fills it)",
                path.display()
            );
        }
        let column = column(&filter.figure)?;
        let db = Connection::open(path)?;
        let sql = format!(
            "SELECT runs.started_at, runs.engine_version, runs.setup, steps.{column} \
             FROM runs JOIN steps ON steps.run_id = runs.id \
             WHERE runs.engine = ?1 AND runs.workload = ?2 AND steps.step = ?3 \
             AND (?4 IS NULL OR runs.setup GLOB ?4) AND (?5 IS NULL OR runs.started_at >= ?5) \
             AND steps.{column} IS NOT NULL \
             ORDER BY runs.started_at, runs.rowid"
        );
        let mut stmt = db.prepare(&sql)?;
        let mut points = stmt
            .query_map(
                rusqlite::params![
                    filter.engine,
                    filter.workload,
                    filter.step,
                    filter.setup,
                    filter.since
                ],
                |r| {
                    Ok(Point {
                        started_at: r.get(0)?,
                        engine_version: r.get(1)?,
                        setup: r.get(2)?,
                        value: r.get(3)?,
                    })
                },
            )?
            .collect::<Result<Vec<_>, _>>()?;
        if points.is_empty() {
            anyhow::bail!(
                "{}: no finished run of step `{}` of workload `{}` on engine `{}`{}",
                path.display(),
                filter.step,
                filter.workload,
                filter.engine,
                filter
                    .setup
                    .as_ref()
                    .map_or(String::new(), |s| format!(" with setup `{s}`"))
            );
        }
        if filter.by_version {
            points.sort_by_key(|p| version_key(&p.engine_version));
        }
        let values: Vec<f64> = points.iter().map(|p| p.value).collect();
        let changes = changepoint::changes(&values, &Search::default());
        Ok(History { points, changes })
    }
}
