//! The step table: throughput, latency and what each operation cost the host, one row per step
//! and setup with the seeds' column names and a `setup` column last; and the per-interval time
//! series.

use crate::section::Input;
use fathom_core::group::{median_step, Series};
use fathom_core::recorder::Latency;
use fathom_core::result::{DbGb, PerOp, StepSummary};
use fathom_core::table::{Cell, Style, Table};
use fathom_core::verdict::cv;

pub const COLUMNS: &[&str] = &[
    "step",
    "!",
    "ops/s",
    "±",
    "p50",
    "p99",
    "p99.9",
    "max",
    "r/o",
    "rKB/o",
    "wKB/o",
    "erKB/o",
    "ewKB/o",
    "cs/o",
    "cpu/o",
    "vmstat cpu/o",
    "eng/o",
    "fathom/o",
    "db.gb",
    "rss",
    "w-amp",
    "setup",
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
fn shared_cell(column: &str, f: &Figures) -> Cell {
    let lat = |v: f64| Cell::styled(f.latency_known.then_some(v), Style::Auto);
    match column {
        "p50" => lat(f.latency.p50),
        "p99" => lat(f.latency.p99),
        "p99.9" => lat(f.latency.p99_9),
        "max" => lat(f.latency.max),
        "r/o" => Cell::opt(f.per_op.reads),
        "rKB/o" => Cell::opt(f.per_op.read_kb),
        "wKB/o" => Cell::opt(f.per_op.write_kb),
        "erKB/o" => Cell::opt(f.per_op.engine_read_kb),
        "ewKB/o" => Cell::opt(f.per_op.engine_write_kb),
        "cs/o" => Cell::opt(f.per_op.cs),
        "cpu/o" => Cell::opt(f.per_op.cpu_us),
        "eng/o" => Cell::opt(f.per_op.cpu_us_engine),
        "rss" => Cell::Number(f.rss_gb, Style::Gib),
        other => unreachable!("no shared column `{other}`"),
    }
}

/// The seeds' cpu/o: vmstat's us+sy percent over ops/s, times 10⁶ — fathom's host µs per
/// operation (all cores) times 100 over the host's cores.
pub fn vmstat_cpu(cpu_us: Option<f64>, cores: Option<usize>) -> Option<f64> {
    Some(cpu_us? * 100.0 / cores.filter(|c| *c > 0)? as f64)
}

/// A step's row; `spread` is the coefficient of variation of its ops/s over the repeats, and
/// `disturbed` marks it `!` (another process used the host during a repeat) in a column of its
/// own, so the step's name stays a key in csv and json. `cores` is the host's.
fn row(
    label: &str,
    s: &StepSummary,
    spread: Option<f64>,
    disturbed: bool,
    cores: Option<usize>,
) -> Vec<Cell> {
    let has_ops = s.ops > 0;
    let f = Figures::new(has_ops, &s.latency_us, &s.per_op, s.rss_gb);
    let cell = |column: &str| match column {
        "step" if s.interrupted => Cell::Text(format!("{}*", s.step)),
        "step" => Cell::text(&s.step),
        "!" => Cell::text(if disturbed { "!" } else { "" }),
        "ops/s" => Cell::styled(has_ops.then_some(s.ops_per_sec), Style::Rate),
        "±" => Cell::styled(spread.filter(|_| has_ops), Style::Spread),
        "fathom/o" => Cell::opt(harness_us(s).filter(|_| has_ops)),
        "vmstat cpu/o" => Cell::opt(vmstat_cpu(s.per_op.cpu_us, cores)),
        "db.gb" => db_gb(&s.db_gb),
        "w-amp" => Cell::opt(s.engine_stats.w_amp),
        "setup" => Cell::text(label),
        shared => shared_cell(shared, &f),
    };
    COLUMNS.iter().map(|c| cell(c)).collect()
}

/// GiB allocated/apparent.
pub fn db_gb(d: &DbGb) -> Cell {
    Cell::Pair(d.allocated, d.apparent, Style::Auto, '/')
}

/// All steps of all series: grouped by step (in first-seen order), one row per series, each
/// figure the median over the series' repeats, its ops/s beside their spread.
pub fn table(input: &Input) -> Table {
    let mut t = Table::new(COLUMNS);
    for step in &input.steps {
        for s in &input.series {
            let repeats = s.step(step);
            if !repeats.is_empty() {
                let label = s.label(&input.series);
                let ops: Vec<f64> = repeats.iter().map(|r| r.ops_per_sec).collect();
                let disturbed = repeats
                    .iter()
                    .any(|r| r.host.disturbance(r.window_seconds).is_some());
                let cores = s.runs.first().map(|r| r.manifest.host.cores);
                let mut row = row(&label, &median_step(&repeats), cv(&ops), disturbed, cores);
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
                        "step" => Cell::text(&i.step),
                        "t" => Cell::Number(i.t_end, Style::Fixed(0)),
                        "ops/s" => Cell::Number(i.ops_per_sec, Style::Rate),
                        "db.gb" => Cell::num(i.db_gb.allocated),
                        "setup" => Cell::text(&label),
                        shared => shared_cell(shared, &f),
                    };
                    t.push(INTERVAL_COLUMNS.iter().map(|c| cell(c)).collect());
                }
            }
        }
    }
    Ok(t)
}
