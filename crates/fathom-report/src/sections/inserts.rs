//! What each insert (and each query beside rate-limited inserts) cost, in seed 001's layout:
//! iostat and vmstat rates and those rates divided by the insert or query rate, a table per
//! step with a row per setup. Steps between them (index creation, cleanup) get their time and
//! rates, so their cost shows too.

use crate::section::{Input, Section, Titled};

use fathom_api::kind::Role;
use fathom_schema::group::median_step;
use fathom_schema::result::StepSummary;
use fathom_schema::table::{Cell, Style, Table};

/// How a step's figures are normalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Every operation inserts or deletes rows: per inserted row.
    Inserts,
    /// Queries while a background writer inserts rows: per query.
    Queries,
    /// Anything else in a run that has one of the above (l.x, cleanup): time and rates.
    Other,
}

fn kind(s: &StepSummary) -> Kind {
    // Results written before kinds had roles count as inserts when they insert rows.
    let writes_only = s
        .by_op
        .values()
        .all(|o| o.role.is_none_or(Role::inserts_or_deletes));
    if s.background.as_ref().is_some_and(|b| b.rows > 0) {
        Kind::Queries
    } else if s.rows > 0 && writes_only {
        Kind::Inserts
    } else {
        Kind::Other
    }
}

const INSERT_COLUMNS: &[&str] = &[
    "r/s",
    "rmb/s",
    "wmb/s",
    "r/i",
    "rkb/i",
    "wkb/i",
    "ewkb/i",
    "us+sy",
    "cs/i",
    "(us+sy)/i",
    "ips",
    "secs",
    "db.gb",
    "rss",
    "setup",
];
const QUERY_COLUMNS: &[&str] = &[
    "r/s",
    "rmb/s",
    "wmb/s",
    "r/q",
    "rkb/q",
    "wkb/q",
    "ewkb/q",
    "us+sy",
    "cs/q",
    "(us+sy)/q",
    "qps",
    "q.p50",
    "q.p99",
    "q.max",
    "ips",
    "db.gb",
    "rss",
    "setup",
];
const OTHER_COLUMNS: &[&str] = &[
    "secs", "r/s", "rmb/s", "wmb/s", "us+sy", "cs/s", "db.gb", "rss", "setup",
];

/// KB the engine's processes wrote (dirtied) per inserted row, or per query.
fn engine_write_kb(s: &StepSummary, k: Kind) -> Option<f64> {
    let per_op = s.per_op.engine_write_kb?;
    match k {
        Kind::Inserts => (s.rows > 0).then(|| per_op * s.ops as f64 / s.rows as f64),
        _ => Some(per_op),
    }
}

/// The row of one step of one setup.
fn row(s: &StepSummary, k: Kind, setup: &str) -> Vec<Cell> {
    let fixed = Cell::fixed;
    let h = &s.host;
    let us_sy = h.us_pct + h.sy_pct;
    // Per unit: the step's rates over the insert (or query) rate, as the seed divides them.
    let rate = match k {
        Kind::Inserts => s.rows_per_sec,
        _ => s.ops_per_sec,
    };
    let per = |x: Option<f64>| x.filter(|_| rate > 0.0).map(|v| v / rate);
    let rates = [fixed(h.rps, 1), fixed(h.rmbps, 1), fixed(h.wmbps, 1)];
    let per_unit = [
        fixed(per(h.rps), 6),
        fixed(per(h.rmbps.map(|m| m * 1024.0)), 3),
        fixed(per(h.wmbps.map(|m| m * 1024.0)), 3),
        fixed(engine_write_kb(s, k), 3),
        Cell::Number(us_sy, Style::Percent),
        fixed(per(Some(h.cs_per_sec)), 1),
        fixed(per(Some(us_sy)), 6),
    ];
    let size = [
        Cell::db_gb(&s.db_gb),
        Cell::Number(s.rss_gb, Style::Gib),
        Cell::text(setup),
    ];
    let mut out: Vec<Cell> = Vec::new();
    match k {
        Kind::Inserts => {
            out.extend(rates);
            out.extend(per_unit);
            out.push(Cell::Number(s.rows_per_sec, Style::Rate));
            out.push(Cell::Number(s.window_seconds, Style::Seconds));
        }
        Kind::Queries => {
            let bg = s.background.as_ref().map_or(0.0, |b| b.rows_per_sec);
            let l = &s.latency_us;
            out.extend(rates);
            out.extend(per_unit);
            out.push(Cell::Number(s.ops_per_sec, Style::Rate));
            out.extend([Cell::num(l.p50), Cell::num(l.p99), Cell::num(l.max)]);
            out.push(Cell::Number(bg, Style::Rate));
        }
        Kind::Other => {
            out.push(Cell::Number(s.window_seconds, Style::Seconds));
            out.extend(rates);
            out.push(Cell::Number(us_sy, Style::Percent));
            out.push(Cell::Number(h.cs_per_sec, Style::Fixed(0)));
        }
    }
    out.extend(size);
    out
}

/// A table per step when some step inserts rows; nothing otherwise.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let all = &input.series;
    let summaries = |step: &str| -> Vec<(String, StepSummary)> {
        all.iter()
            .filter_map(|s| {
                let reps = s.step(step);
                (!reps.is_empty()).then(|| (s.label(all), median_step(&reps)))
            })
            .collect()
    };
    let has_inserts = input
        .steps
        .iter()
        .any(|st| summaries(st).iter().any(|(_, s)| kind(s) != Kind::Other));
    if !has_inserts {
        return Ok(Vec::new());
    }
    let mut section = Section::new("What each insert and query cost");
    for step in &input.steps {
        let rows = summaries(step);
        let Some(k) = rows.iter().map(|(_, s)| kind(s)).min_by_key(|k| *k as u8) else {
            continue;
        };
        let (columns, what) = match k {
            Kind::Inserts => (INSERT_COLUMNS, "per insert"),
            Kind::Queries => (QUERY_COLUMNS, "per query, beside the background inserts"),
            Kind::Other => (OTHER_COLUMNS, "time and rates"),
        };
        let mut t = Table::new(columns);
        for (label, s) in &rows {
            t.push(row(s, k, label));
        }
        section.tables.push(Titled {
            title: format!("{step}: {what}"),
            table: t,
        });
    }
    section.legend = Some(LEGEND);
    Ok(section.if_any().into_iter().collect())
}

/// How to read the tables.
const LEGEND: &str = "\
per insert / per query (seed 001's columns): r/s, rmb/s, wmb/s: iostat reads/s and MB/s read and written;\n\
r/i, rkb/i, wkb/i: those divided by the insert rate (per query: /q); us+sy: vmstat CPU percent; cs/i:\n\
context switches per insert; (us+sy)/i: us+sy divided by the insert rate; ips: rows inserted per second\n\
(for query steps, by the background inserters); secs: the step's length; q.*: query latency in µs.\n\
ewkb/i, ewkb/q: KB the engine's processes wrote per insert or query, from /proc/PID/io: counted when the\n\
data is written to the page cache, where wkb/i counts it when the kernel writes it back to the device (a\n\
short step's writes show here, and in wkb/i of a later step).\n";

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::result::{Background, HostRates, OpSummary};

    fn summary() -> StepSummary {
        StepSummary {
            rows: 25_000,
            rows_per_sec: 24923.0,
            ops_per_sec: 498.0,
            window_seconds: 1.0,
            host: HostRates {
                rps: Some(77.8),
                rmbps: Some(0.9),
                wmbps: Some(176.6),
                us_pct: 20.0,
                sy_pct: 2.3,
                cs_per_sec: 174_461.0,
                ..HostRates::default()
            },
            by_op: [(
                "insert".to_string(),
                OpSummary {
                    role: Some(Role::Insert),
                    ..OpSummary::default()
                },
            )]
            .into(),
            ..StepSummary::default()
        }
    }

    #[test]
    fn per_insert_figures_divide_the_rates_by_ips_as_the_seed() {
        // rocksdb.def in seed 001: r/s 77.8, wmb/s 176.6, ips 24923 → r/i 0.003122, wkb/i 7.256.
        let r = row(&summary(), Kind::Inserts, "rocksdb.def");
        let col =
            |name: &str| r[INSERT_COLUMNS.iter().position(|c| *c == name).unwrap()].to_string();
        assert_eq!(col("r/i"), "0.003122");
        assert_eq!(col("wkb/i"), "7.256");
        assert_eq!(col("us+sy"), "22.3");
        assert_eq!(col("cs/i"), "7.0");
        assert_eq!(col("(us+sy)/i"), "0.000895");
        assert_eq!(col("ips"), "24923");
    }

    #[test]
    fn steps_are_told_apart() {
        let mut s = summary();
        assert_eq!(kind(&s), Kind::Inserts);
        s.background = Some(Background {
            rows: 100,
            ..Background::default()
        });
        assert_eq!(kind(&s), Kind::Queries);
        let mut s = summary();
        s.by_op.insert(
            "create_index".into(),
            OpSummary {
                role: Some(Role::Maintenance),
                ..OpSummary::default()
            },
        );
        assert_eq!(kind(&s), Kind::Other);
    }
}
