//! The step table: throughput, latency and what each operation cost the host, one row per step
//! and setup with the seeds' column names and a `setup` column last; and the per-interval time
//! series.

use crate::group::{median_step, Series};
use crate::model::Input;
use crate::table::{num, opt, Table};
use fathom_core::recorder::Latency;
use fathom_core::result::{PerOp, StepSummary};

pub const COLUMNS: &[&str] = &[
    "step", "ops/s", "p50", "p99", "p99.9", "max", "r/o", "rKB/o", "wKB/o", "erKB/o", "ewKB/o",
    "cs/o", "cpu/o", "eng/o", "fathom/o", "db.gb", "rss", "w-amp", "setup",
];

const INTERVAL_COLUMNS: &[&str] = &[
    "step", "t", "ops/s", "p50", "p99", "max", "r/o", "wKB/o", "cs/o", "cpu/o", "db.gb", "rss",
    "setup",
];

/// The harness's CPU per operation in µs: measured on its own process for a server engine,
/// calibrated on the null engine for an embedded one.
pub fn harness_us(s: &StepSummary) -> Option<f64> {
    s.per_op
        .cpu_us_harness
        .or(s.harness_ns_per_op.map(|ns| ns / 1000.0))
}

/// What a step and an interval both have, for the cells their tables share.
struct Figures<'a> {
    /// False shows latencies as `-` (a step without operations).
    latency_known: bool,
    latency: &'a Latency,
    per_op: &'a PerOp,
    rss_gb: f64,
}

impl<'a> Figures<'a> {
    fn new(latency_known: bool, latency: &'a Latency, per_op: &'a PerOp, rss_gb: f64) -> Self {
        Figures {
            latency_known,
            latency,
            per_op,
            rss_gb,
        }
    }
}

/// The cell of a column the step table and the intervals table share.
fn shared_cell(column: &str, f: &Figures) -> String {
    let lat = |v: f64| if f.latency_known { num(v) } else { "-".into() };
    match column {
        "p50" => lat(f.latency.p50),
        "p99" => lat(f.latency.p99),
        "p99.9" => lat(f.latency.p99_9),
        "max" => lat(f.latency.max),
        "r/o" => opt(f.per_op.reads),
        "rKB/o" => opt(f.per_op.read_kb),
        "wKB/o" => opt(f.per_op.write_kb),
        "erKB/o" => opt(f.per_op.engine_read_kb),
        "ewKB/o" => opt(f.per_op.engine_write_kb),
        "cs/o" => opt(f.per_op.cs),
        "cpu/o" => opt(f.per_op.cpu_us),
        "eng/o" => opt(f.per_op.cpu_us_engine),
        "rss" => format!("{}G", num(f.rss_gb)),
        other => unreachable!("no shared column `{other}`"),
    }
}

/// Operations per second as the seeds print them, whole; below 10 with decimals, so a slow
/// step (a few requests a second, one check in minutes) does not read as none.
fn rate(x: f64) -> String {
    if x >= 9.95 || x <= 0.0 {
        format!("{x:.0}")
    } else if x >= 0.095 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

fn row(label: &str, s: &StepSummary) -> Vec<String> {
    let has_ops = s.ops > 0;
    let f = Figures::new(has_ops, &s.latency_us, &s.per_op, s.rss_gb);
    let cell = |column: &str| match column {
        "step" if s.interrupted => format!("{}*", s.step),
        "step" => s.step.clone(),
        "ops/s" if has_ops => rate(s.ops_per_sec),
        "ops/s" => "-".into(),
        "fathom/o" => opt(harness_us(s).filter(|_| has_ops)),
        "db.gb" => format!("{}/{}", num(s.db_gb.allocated), num(s.db_gb.apparent)),
        "w-amp" => opt(s.engine_stats.w_amp),
        "setup" => label.to_string(),
        shared => shared_cell(shared, &f),
    };
    COLUMNS.iter().map(|c| cell(c)).collect()
}

/// All steps of all series: grouped by step (in first-seen order), one row per series, each
/// figure the median over the series' repeats.
pub fn table(input: &Input) -> Table {
    let mut t = Table::new(COLUMNS);
    for step in &input.steps {
        for s in &input.series {
            let repeats = s.step(step);
            if !repeats.is_empty() {
                t.push(row(&s.label(&input.series), &median_step(&repeats)));
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
    let mut t = Table::new(INTERVAL_COLUMNS);
    for s in all {
        for (n, run) in s.runs.iter().enumerate() {
            let label = if s.runs.len() > 1 {
                format!("{}.r{}", s.label(all), n + 1)
            } else {
                s.label(all)
            };
            for step in &run.steps {
                for i in run.intervals(step)? {
                    let f = Figures::new(true, &i.latency_us, &i.per_op, i.rss_gb);
                    let cell = |column: &str| match column {
                        "step" => i.step.clone(),
                        "t" => format!("{:.0}", i.t_end),
                        "ops/s" => rate(i.ops_per_sec),
                        "db.gb" => num(i.db_gb.allocated),
                        "setup" => label.clone(),
                        shared => shared_cell(shared, &f),
                    };
                    t.push(INTERVAL_COLUMNS.iter().map(|c| cell(c)).collect());
                }
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    #[test]
    fn slow_rates_keep_their_decimals() {
        use super::rate;
        assert_eq!(rate(12345.6), "12346");
        assert_eq!(rate(10.0), "10");
        assert_eq!(rate(0.4), "0.4");
        assert_eq!(rate(0.0056), "0.006");
        assert_eq!(rate(0.0), "0");
    }
}
