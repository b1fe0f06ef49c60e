//! The step table: throughput, latency and what each operation cost the host, one row per step
//! and setup with the seeds' column names and a `setup` column last; and the per-interval time
//! series.

use crate::group::{median_step, Series};
use crate::model::Input;
use crate::table::{num, opt, Table};
use fathom_core::result::StepSummary;

pub const COLUMNS: &[&str] = &[
    "step", "ops/s", "p50", "p99", "p99.9", "max", "r/o", "rKB/o", "wKB/o", "cs/o", "cpu/o",
    "eng/o", "fathom/o", "db.gb", "rss", "w-amp", "setup",
];

/// The harness's CPU per operation in µs: measured on its own process for a server engine,
/// calibrated on the null engine for an embedded one.
pub fn harness_us(s: &StepSummary) -> Option<f64> {
    s.per_op
        .cpu_us_harness
        .or(s.harness_ns_per_op.map(|ns| ns / 1000.0))
}

fn row(label: String, s: &StepSummary) -> Vec<String> {
    let has_ops = s.ops > 0;
    let lat = |v: f64| if has_ops { num(v) } else { "-".into() };
    let mut step = s.step.clone();
    if s.interrupted {
        step += "*";
    }
    vec![
        step,
        if has_ops {
            format!("{:.0}", s.ops_per_sec)
        } else {
            "-".into()
        },
        lat(s.latency_us.p50),
        lat(s.latency_us.p99),
        lat(s.latency_us.p99_9),
        lat(s.latency_us.max),
        opt(s.per_op.reads),
        opt(s.per_op.read_kb),
        opt(s.per_op.write_kb),
        opt(s.per_op.cs),
        opt(s.per_op.cpu_us),
        opt(s.per_op.cpu_us_engine),
        opt(harness_us(s).filter(|_| has_ops)),
        format!("{}/{}", num(s.db_gb.allocated), num(s.db_gb.apparent)),
        format!("{}G", num(s.rss_gb)),
        opt(s.engine_stats.w_amp),
        label,
    ]
}

/// All steps of all series: grouped by step (in first-seen order), one row per series, each
/// figure the median over the series' repeats.
pub fn table(input: &Input) -> Table {
    let mut t = Table::new(COLUMNS);
    for step in &input.steps {
        for s in &input.series {
            let repeats = s.step(step);
            if !repeats.is_empty() {
                t.push(row(s.label(&input.series), &median_step(&repeats)));
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
    let mut t = Table::new(&[
        "step", "t", "ops/s", "p50", "p99", "max", "r/o", "wKB/o", "cs/o", "cpu/o", "db.gb", "rss",
        "setup",
    ]);
    for s in all {
        for (n, run) in s.runs.iter().enumerate() {
            let label = if s.runs.len() > 1 {
                format!("{}.r{}", s.label(all), n + 1)
            } else {
                s.label(all)
            };
            for step in &run.steps {
                for i in run.intervals(step)? {
                    t.push(vec![
                        i.step.clone(),
                        format!("{:.0}", i.t_end),
                        format!("{:.0}", i.ops_per_sec),
                        num(i.latency_us.p50),
                        num(i.latency_us.p99),
                        num(i.latency_us.max),
                        opt(i.per_op.reads),
                        opt(i.per_op.write_kb),
                        opt(i.per_op.cs),
                        opt(i.per_op.cpu_us),
                        num(i.db_gb.allocated),
                        format!("{}G", num(i.rss_gb)),
                        label.clone(),
                    ]);
                }
            }
        }
    }
    Ok(t)
}
