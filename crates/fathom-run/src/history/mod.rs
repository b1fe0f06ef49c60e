//! A figure's history from the results database: one step of one workload on one engine, a
//! point per finished run in the order the runs started (or by engine version), split into
//! series of runs alike in all that defines them (`series.rs`), and the changes E-divisive
//! means finds in each (`fathom_stats::changepoint`).

mod base;
mod series;

pub use series::{Series, SeriesKey};

use crate::records::{Database, Store, Value};
use fathom_schema::figures::{Recorded, StepFigure};
use fathom_stats::changepoint::{self, Search};

/// The figure a history follows: one the results database records (`fathom_schema::figures`),
/// as `--figure` names it.
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    figure: &'static StepFigure,
    recorded: Recorded,
}

impl Default for Figure {
    fn default() -> Figure {
        Figure::named("ops_per_sec").expect("ops/s is recorded")
    }
}

impl Figure {
    /// The recorded figure `--figure NAME` names.
    pub fn named(name: &str) -> Option<Figure> {
        let (figure, recorded) = fathom_schema::figures::by_recorded_name(name)?;
        Some(Figure { figure, recorded })
    }

    /// Which way the figure gets worse: lower for throughput, higher for the rest.
    pub fn worse(self) -> fathom_stats::changepoint::gate::Worse {
        self.figure.worse
    }

    /// The name `--figure` takes.
    pub fn name(self) -> String {
        self.recorded.figure.to_string()
    }

    /// Its column in the `steps` table.
    fn column(self) -> &'static str {
        self.recorded.column
    }
}

/// `--figure`'s values: the recorded figures, each with its meaning for `--help`.
fn figure_parser() -> impl clap::builder::TypedValueParser<Value = Figure> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = fathom_schema::figures::recorded_figures()
        .map(|(f, r)| PossibleValue::new(r.figure).help(format!("{} ({})", f.column, f.unit)));
    PossibleValuesParser::new(names)
        .map(|name| Figure::named(&name).expect("a possible value is a recorded figure"))
}

/// Which runs a history follows: `fathom history`'s flags.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Filter {
    /// The engine whose runs to follow (as recorded: `rocksdb`, `postgres`, ...).
    #[arg(long)]
    pub engine: String,
    /// The workload they ran.
    #[arg(long)]
    pub workload: String,
    /// The step whose figure to follow (`readrandom`, `oltp_point_select`, ...).
    #[arg(long)]
    pub step: String,
    /// Only this setup's runs, or the setups a pattern names (`*.buffered`, with --by-version:
    /// every release's buffered setup in version order).
    #[arg(long, value_name = "SETUP|PATTERN")]
    pub setup: Option<String>,
    /// Only runs that started at or after this time: RFC 3339 UTC (2026-11-01T00:00:00Z) or
    /// Unix seconds.
    #[arg(long, value_name = "TIME", value_parser = fathom_api::units::parse_time)]
    pub since: Option<std::time::SystemTime>,
    /// The figure to follow.
    #[arg(long, value_parser = figure_parser(), default_value = "ops_per_sec")]
    pub figure: Figure,
    /// Order the runs by engine version instead of by when they started.
    #[arg(long)]
    pub by_version: bool,
    /// Split series by engine version (by default a version is a mark on the series' time
    /// axis, and a change that comes with a new version is a change within the series).
    #[arg(long, conflicts_with = "by_version")]
    pub split_version: bool,
    /// Only runs of this many clients.
    #[arg(long, value_name = "N")]
    pub clients: Option<usize>,
    /// Only runs with this workload parameter (repeat for more): `num_keys=1000000`.
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// Only runs made on this host, or the hosts a pattern names (`db-*`).
    #[arg(long, value_name = "HOST|PATTERN")]
    pub host: Option<String>,
}

fn parse_param(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("`{text}`: expected KEY=VALUE, as num_keys=1000000")),
    }
}

impl Filter {
    /// What narrows the selection besides engine, workload and step, as words for an error.
    fn narrowing(&self) -> String {
        let mut out = String::new();
        if let Some(s) = &self.setup {
            out += &format!(" with setup `{s}`");
        }
        if let Some(c) = self.clients {
            out += &format!(" at {}", fathom_api::units::clients(c));
        }
        for (k, v) in &self.params {
            out += &format!(" with {k}={v}");
        }
        if let Some(h) = &self.host {
            out += &format!(" on host `{h}`");
        }
        out
    }
}

/// One run's figure.
#[derive(Clone, Debug)]
pub struct Point {
    pub started_at: String,
    pub engine_version: String,
    pub setup: String,
    pub value: f64,
    /// What defines the run's series.
    pub key: SeriesKey,
}

/// A history: a series for each kind of run the selection holds, each with its changes, and
/// the dimensions in which the series differ.
pub struct History {
    pub series: Vec<Series>,
    pub varies: Vec<String>,
}

/// Orders engine versions as numbers where they are (8.10 after 8.9).
fn version_key(v: &str) -> Vec<(u64, String)> {
    v.split(['.', '-'])
        .map(|p| (p.parse::<u64>().unwrap_or(u64::MAX), p.to_string()))
        .collect()
}

/// Whether `name` matches `pattern`: `*` any run of characters, `?` any one, the rest itself.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic two-pointer match, backing up to the last `*` on a mismatch.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

/// The points of `filter`'s series, in the order the runs started.
fn points(db: &mut dyn Database, filter: &Filter, column: &str) -> anyhow::Result<Vec<Point>> {
    let mut params = vec![
        Value::Text(Some(filter.engine.clone())),
        Value::Text(Some(filter.workload.clone())),
        Value::Text(Some(filter.step.clone())),
    ];
    let mut since = "";
    if let Some(t) = filter.since {
        since = "AND runs.started_at >= ? ";
        // Recorded start times are all this one form, so they compare as text.
        let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let t = fathom_schema::result::utc_timestamp(secs.as_secs());
        params.push(Value::Text(Some(t)));
    }
    let sql = format!(
        "SELECT runs.started_at, runs.engine_version, runs.setup, steps.{column}, \
         runs.manifest FROM runs JOIN steps ON steps.run_id = runs.id \
         WHERE runs.engine = ? AND runs.workload = ? AND steps.step = ? {since}\
         AND steps.{column} IS NOT NULL \
         ORDER BY runs.started_at, runs.id"
    );
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut points = Vec::new();
    for r in db.query(&sql, &params)? {
        let manifest: fathom_schema::result::RunManifest = serde_json::from_str(&text(&r[4]))
            .map_err(|e| anyhow::anyhow!("the run of {} in the database: {e}", text(&r[0])))?;
        let key = SeriesKey::of(&manifest, filter.by_version, filter.split_version);
        if filter
            .setup
            .as_ref()
            .is_some_and(|p| !matches(p, &text(&r[2])))
            || !key.selected(filter)
        {
            continue;
        }
        points.push(Point {
            started_at: text(&r[0]),
            engine_version: text(&r[1]),
            setup: text(&r[2]),
            value: r[3].as_f64().unwrap_or(f64::NAN),
            key,
        });
    }
    Ok(points)
}

impl Store {
    /// The history `filter` asks for, with its changes.
    pub fn history(&self, filter: &Filter) -> anyhow::Result<History> {
        let column = filter.figure.column();
        let Some(mut db) = self.connect(false)? else {
            anyhow::bail!("--store off: no results database to read");
        };
        let mut points = points(db.as_mut(), filter, column)?;
        if points.is_empty() {
            anyhow::bail!(
                "{self}: no finished run of step `{}` of workload `{}` on engine `{}`{}",
                filter.step,
                filter.workload,
                filter.engine,
                filter.narrowing()
            );
        }
        if filter.by_version {
            points.sort_by_key(|p| version_key(&p.engine_version));
        }
        let mut series = Series::split(points);
        for s in &mut series {
            let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
            s.changes = changepoint::changes(&values, &Search::default());
        }
        let varies = SeriesKey::varying(series.iter().map(|s| &s.key));
        Ok(History { series, varies })
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn setup_patterns() {
        assert!(matches("*.buffered", "8.9.1.buffered"));
        assert!(!matches("*.buffered", "8.9.1.direct"));
        assert!(matches("rx.?20", "rx.320"));
        assert!(matches("a*b*c", "axxbyyc"));
        assert!(!matches("a*b*c", "axxbyy"));
        assert!(matches("exact", "exact"));
        assert!(!matches("exact", "exactly"));
        assert!(matches("*", ""));
    }
}
