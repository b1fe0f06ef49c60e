//! The per-step tables: throughput, latency and what each operation cost the host, one row per
//! step and setup with the seeds' column names and a `setup` column last; the concurrency
//! sweep; the per-interval time series; and the notes that say how to read them.

use crate::group::{median_step, series, step_order, Series};
use crate::table::{num, opt, Table};
use fathom_core::result::StepSummary;
use fathom_core::store::LoadedRun;

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
pub fn table(runs: &[LoadedRun]) -> Table {
    let all = series(runs);
    let mut t = Table::new(COLUMNS);
    for step in step_order(runs) {
        for s in &all {
            let repeats = s.step(&step);
            if !repeats.is_empty() {
                t.push(row(s.label(&all), &median_step(&repeats)));
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

/// A figure of a step summary.
type Figure = fn(&StepSummary) -> Option<f64>;

/// One titled table of the report beside the step table (a sweep's figure, a step's costs).
#[derive(Clone)]
pub struct SweepTable {
    pub title: String,
    pub table: Table,
}

/// The concurrency sweep as seed 003 prints it: per step, a table per figure — queries (or
/// operations) per second, disk reads per second (iostat r/s), disk reads per query — with a
/// column per client count and a row per setup, each the median over repeats. Empty when one
/// client count ran.
pub fn sweep(runs: &[LoadedRun]) -> Vec<SweepTable> {
    let all = series(runs);
    let mut clients: Vec<usize> = all.iter().map(|s| s.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    if clients.len() < 2 {
        return Vec::new();
    }
    let mut setups: Vec<&str> = Vec::new();
    for s in &all {
        if !setups.contains(&s.setup.as_str()) {
            setups.push(&s.setup);
        }
    }
    let mut header: Vec<String> = clients.iter().map(|c| c.to_string()).collect();
    header.push("clients".into());
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for step in step_order(runs) {
        let cell = |setup: &str, c: usize| -> Option<StepSummary> {
            let s = all.iter().find(|s| s.setup == setup && s.clients == c)?;
            let reps = s.step(&step);
            (!reps.is_empty() && reps[0].ops > 0).then(|| median_step(&reps))
        };
        let queries = counts_queries(&all, &step);
        // Operations that insert rows in batches (at least a row each): a load.
        let rows = all
            .iter()
            .flat_map(|s| s.step(&step))
            .any(|s| s.rows > 0 && s.rows >= s.ops);
        let unit = if queries { "query" } else { "op" };
        // A step that inserts rows in batches is read by its rows (seed 002's IPS).
        let rate: (String, Figure, usize) = if rows {
            (
                "rows inserted per second".to_string(),
                |s| Some(s.rows_per_sec),
                0,
            )
        } else {
            (
                if queries {
                    "queries per second"
                } else {
                    "operations per second"
                }
                .to_string(),
                |s| Some(s.ops_per_sec * queries_per_op(s)),
                0,
            )
        };
        let figures: [(String, Figure, usize); 3] = [
            rate,
            (
                "disk reads per second (iostat r/s)".to_string(),
                |s| s.host.rps,
                0,
            ),
            (
                format!("disk reads per {unit}"),
                |s| s.per_op.reads.map(|r| r / queries_per_op(s)),
                2,
            ),
        ];
        for (title, f, decimals) in figures {
            let mut t = Table::new(&header);
            for setup in &setups {
                let cells: Vec<Option<f64>> = clients
                    .iter()
                    .map(|&c| cell(setup, c).and_then(|s| f(&s)))
                    .collect();
                if cells.iter().all(Option::is_none) {
                    continue;
                }
                let mut row: Vec<String> = cells
                    .iter()
                    .map(|v| v.map_or("-".into(), |x| format!("{x:.decimals$}")))
                    .collect();
                row.push(setup.to_string());
                t.push(row);
            }
            if !t.rows.is_empty() {
                out.push(SweepTable {
                    title: format!("{step}: {title}"),
                    table: t,
                });
            }
        }
    }
    out
}

/// One row per interval of every step of every run (the time series).
pub fn intervals(runs: &[LoadedRun]) -> anyhow::Result<Table> {
    let all = series(runs);
    let mut t = Table::new(&[
        "step", "t", "ops/s", "p50", "p99", "max", "r/o", "wKB/o", "cs/o", "cpu/o", "db.gb", "rss",
        "setup",
    ]);
    for s in &all {
        for (n, run) in s.runs.iter().enumerate() {
            let label = if s.runs.len() > 1 {
                format!("{}.r{}", s.label(&all), n + 1)
            } else {
                s.label(&all)
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

/// The terminal and Markdown report: a line per series saying what ran, the step table, the
/// sweep when several client counts ran, then the notes.
pub fn text(runs: &[LoadedRun], markdown: bool) -> String {
    let all = series(runs);
    let render = |t: Table| if markdown { t.markdown() } else { t.text() };
    let mut out = String::new();
    for s in &all {
        let m = &s.runs[0].manifest;
        let mut statuses: Vec<&str> = s.runs.iter().map(|r| r.manifest.status.as_str()).collect();
        statuses.dedup();
        out += &format!(
            "# {}: {} {} ({}), workload {}, {} client{}, {}{} cores, device {}{}{}\n",
            s.label(&all),
            m.setup.engine,
            m.setup.engine_version,
            statuses.join("/"),
            m.workload,
            m.clients,
            if m.clients == 1 { "" } else { "s" },
            if s.runs.len() > 1 {
                format!("median of {} repeats, ", s.runs.len())
            } else {
                String::new()
            },
            m.host.cores,
            m.host.device.as_deref().unwrap_or("none"),
            m.setup
                .memory_limit_bytes
                .map_or(String::new(), |b| format!(
                    ", memory limit {}",
                    human_bytes(b)
                )),
            if m.setup.options.is_empty() {
                String::new()
            } else {
                // Options files (my.cnf lines) keep their lines, each under the header.
                format!(
                    "\n#   options: {}",
                    m.setup.options.trim().replace('\n', "\n#            ")
                )
            },
        );
    }
    if markdown {
        out += "\n";
    }
    out += &render(table(runs));
    let per_insert = crate::inserts::tables(runs);
    let linkbench = [
        crate::linkbench::load_table(runs).map(|table| SweepTable {
            title: "LinkBench load, per node inserted".into(),
            table,
        }),
        crate::linkbench::exact_table(runs).map(|table| SweepTable {
            title: "LinkBench requests, latency per operation in µs".into(),
            table,
        }),
    ];
    for t in sweep(runs)
        .into_iter()
        .chain(per_insert.iter().cloned())
        .chain(linkbench.into_iter().flatten())
    {
        out += &format!("\n{} (median over repeats):\n", t.title);
        if markdown {
            out += "\n";
        }
        out += &render(t.table);
    }
    out += &notes(runs);
    if !per_insert.is_empty() {
        out += crate::inserts::NOTE;
    }
    out
}

fn human_bytes(b: u64) -> String {
    let g = b as f64 / fathom_core::units::GIB;
    if g >= 1.0 {
        format!("{}G", num(g))
    } else {
        format!("{}M", num(b as f64 / (1u64 << 20) as f64))
    }
}

/// Share of the engine's CPU per operation that was fathom's own, above which the report
/// warns that the client may have been the bottleneck.
pub const HARNESS_SHARE_WARN: f64 = 0.25;
/// Host idle CPU (percent) below which the report warns the same.
pub const IDLE_WARN_PCT: f64 = 5.0;
/// Steal time (percent) above which the report warns the same.
pub const STEAL_WARN_PCT: f64 = 10.0;

/// Fewer operations than this in a step say nothing about the client as a bottleneck.
const FEW_OPS: u64 = 100;

/// Why the client may have limited a step's throughput, if it may have.
pub fn bottleneck(s: &StepSummary) -> Option<String> {
    // A step of a few long operations (index creation, cleanup) is not the client's to limit.
    if s.ops < FEW_OPS || s.window_seconds <= 0.0 {
        return None;
    }
    let mut why = Vec::new();
    if let (Some(h), Some(e)) = (harness_us(s), s.per_op.cpu_us_engine.or(s.per_op.cpu_us)) {
        // Embedded: the engine's figure is the whole process, harness included; a server's
        // excludes fathom, so compare against the sum.
        let whole = if s.per_op.cpu_us_harness.is_some() {
            e + h
        } else {
            e
        };
        if whole > 0.0 && h / whole > HARNESS_SHARE_WARN {
            why.push(format!(
                "fathom used {:.0}% of the CPU per op",
                100.0 * h / whole
            ));
        }
    }
    // A window shorter than a second holds too few CPU ticks to say anything.
    let sampled = s.window_seconds >= 1.0 && s.host.idle_pct + s.host.us_pct + s.host.sy_pct > 0.0;
    if sampled && s.host.idle_pct < IDLE_WARN_PCT {
        why.push(format!("host idle {:.1}%", s.host.idle_pct));
    }
    if sampled && s.host.steal_pct > STEAL_WARN_PCT {
        why.push(format!("steal {:.1}%", s.host.steal_pct));
    }
    (!why.is_empty()).then(|| why.join(", "))
}

fn notes(runs: &[LoadedRun]) -> String {
    let mut out = String::from(
        "\nlatency in µs; r/o, rKB/o, wKB/o: device reads, KB read, KB written per op; cs/o: context switches per op;\n\
         cpu/o: host us+sy µs per op; eng/o: the engine's processes (the server; fathom's whole process when the\n\
         engine is embedded); fathom/o: the harness's own µs per op (measured on its process beside a server,\n\
         calibrated on the null engine when embedded); rss: the engine's resident memory (a server's processes'\n\
         proportional sizes); db.gb: GiB allocated/apparent; w-amp: (flush + compaction writes) / ingest.\n\
         sysbench steps: an op is an event (a transaction of several queries except oltp_point_select and\n\
         select_random_points).\n",
    );
    let mut host_notes: Vec<&str> = Vec::new();
    for r in runs {
        if let Some(n) = &r.manifest.host.note {
            if !host_notes.contains(&n.as_str()) {
                host_notes.push(n);
            }
        }
    }
    for n in host_notes {
        out += &format!("{n}\n");
    }
    let all = series(runs);
    for s in &all {
        let mut lines = Vec::new();
        let mut limited = Vec::new();
        for step in s.step_names() {
            let m = median_step(&s.step(step));
            if let Some(b) = m
                .background
                .as_ref()
                .filter(|b| b.target_rows_per_sec > 0.0)
            {
                lines.push(format!(
                    "{}: background inserter and deleter {:.0} rows/s (target {:.0}), {} statements, excluded from the row",
                    m.step, b.rows_per_sec, b.target_rows_per_sec, b.ops
                ));
            } else if let Some(b) = &m.background {
                lines.push(format!(
                    "{}: background writer {:.2} MB/s (target {:.2}), {} puts, excluded from the row",
                    m.step,
                    b.bytes_per_sec / 1048576.0,
                    b.target_bytes_per_sec / 1048576.0,
                    b.ops
                ));
            }
            if let (Some(q), Some(rate)) = (&m.queue_us, m.arrival_rate) {
                lines.push(format!(
                    "{}: open loop at {rate:.0} ops/s ({}); waits to begin: p50 {} µs, p99 {} µs, max {} µs; latency counts from the intended start",
                    m.step,
                    if m.shared_queue { "one queue for all clients" } else { "a queue per client" },
                    num(q.p50),
                    num(q.p99),
                    num(q.max),
                ));
            }
            if m.maintenance_seconds > 0.05 {
                lines.push(format!(
                    "{}: {:.1}s of flush/compaction wait after the operations, charged to its per-op figures",
                    m.step, m.maintenance_seconds
                ));
            }
            if m.interrupted {
                lines.push(format!(
                    "{}*: interrupted (Ctrl-C); figures cover the part that ran",
                    m.step
                ));
            }
            if let Some(why) = bottleneck(&m) {
                limited.push(format!("{} ({why})", m.step));
            }
        }
        if !limited.is_empty() {
            lines.push(format!(
                "the client may have been the bottleneck in {}",
                limited.join(", ")
            ));
        }
        if !lines.is_empty() {
            out += &format!("{}:\n", s.label(&all));
            for l in lines {
                out += &format!("  {l}\n");
            }
        }
    }
    out
}
