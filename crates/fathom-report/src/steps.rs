//! The per-step table: throughput, latency and what each operation cost the host, one row per
//! step and setup, with the seeds' column names and a `setup` column last.

use crate::table::{num, opt, Table};
use fathom_core::result::StepSummary;
use fathom_core::store::LoadedRun;

pub const COLUMNS: &[&str] = &[
    "step", "ops/s", "p50", "p99", "p99.9", "max", "r/o", "rKB/o", "wKB/o", "cs/o", "cpu/o",
    "fathom/o", "db.gb", "rss", "w-amp", "setup",
];

/// The harness's CPU per operation in µs: measured on its own process for a server engine,
/// calibrated on the null engine for an embedded one.
pub fn harness_us(s: &StepSummary) -> Option<f64> {
    s.per_op
        .cpu_us_harness
        .or(s.harness_ns_per_op.map(|ns| ns / 1000.0))
}

/// The setup column: the setup's name, with `.c<clients>` when the runs in the report differ
/// in client count.
fn label(run: &LoadedRun, runs: &[LoadedRun]) -> String {
    let m = &run.manifest;
    if runs.iter().any(|r| r.manifest.clients != m.clients) {
        format!("{}.c{}", m.setup.name, m.clients)
    } else {
        m.setup.name.clone()
    }
}

fn row(run: &LoadedRun, runs: &[LoadedRun], s: &StepSummary) -> Vec<String> {
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
        opt(harness_us(s).filter(|_| has_ops)),
        format!("{}/{}", num(s.db_gb.allocated), num(s.db_gb.apparent)),
        format!("{}G", num(s.rss_gb)),
        opt(s.engine_stats.get("w_amp").copied()),
        label(run, runs),
    ]
}

/// All steps of all runs: grouped by step (in first-seen order), one row per run in each.
pub fn table(runs: &[LoadedRun]) -> Table {
    let mut order: Vec<&str> = Vec::new();
    for r in runs {
        for s in &r.steps {
            if !order.contains(&s.step.as_str()) {
                order.push(&s.step);
            }
        }
    }
    let mut t = Table::new(COLUMNS);
    for step in order {
        for r in runs {
            for s in r.steps.iter().filter(|s| s.step == step) {
                t.push(row(r, runs, s));
            }
        }
    }
    t
}

/// The terminal report: a line per run saying what ran, the table, then notes.
pub fn text(runs: &[LoadedRun]) -> String {
    let mut out = String::new();
    for r in runs {
        let m = &r.manifest;
        out += &format!(
            "# {}: {} {} ({}), workload {}, {} client{}, {} cores, device {}{}{}\n",
            label(r, runs),
            m.setup.engine,
            m.setup.engine_version,
            m.status,
            m.workload,
            m.clients,
            if m.clients == 1 { "" } else { "s" },
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
                format!("\n#   options: {}", m.setup.options)
            },
        );
    }
    out += &table(runs).text();
    out += &notes(runs);
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

fn notes(runs: &[LoadedRun]) -> String {
    let mut out = String::from(
        "\nlatency in µs; r/o, rKB/o, wKB/o: device reads, KB read, KB written per op; cs/o: context switches per op;\n\
         cpu/o: host us+sy µs per op; fathom/o: the harness's own µs per op (calibrated on the null engine when the\n\
         engine is embedded); db.gb: GiB allocated/apparent; w-amp: (flush + compaction writes) / ingest.\n",
    );
    for r in runs {
        if r.manifest.host.note.is_some()
            || r.steps
                .iter()
                .any(|s| s.background.is_some() || s.interrupted)
        {
            out += &format!("{}:\n", label(r, runs));
        }
        if let Some(n) = &r.manifest.host.note {
            out += &format!("  {n}\n");
        }
        for s in &r.steps {
            if let Some(b) = &s.background {
                out += &format!(
                    "  {}: background writer {:.2} MB/s (target {:.2}), {} puts, excluded from the row\n",
                    s.step,
                    b.bytes_per_sec / 1048576.0,
                    b.target_bytes_per_sec / 1048576.0,
                    b.ops
                );
            }
            if s.maintenance_seconds > 0.05 {
                out += &format!(
                    "  {}: {:.1}s of flush/compaction wait after the operations, charged to its per-op figures\n",
                    s.step, s.maintenance_seconds
                );
            }
            if s.interrupted {
                out += &format!(
                    "  {}*: interrupted (Ctrl-C); figures cover the part that ran\n",
                    s.step
                );
            }
        }
    }
    out
}
