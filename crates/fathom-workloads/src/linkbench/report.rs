//! LinkBench's additions to reports (docs/workloads.md §1.4.3, §1.7.5): seed 000's per-node
//! load costs and each request step's exact per-operation latency as tables; LinkBench's own
//! output (the load line, the latency lines in its bucket format, the REQUEST PHASE COMPLETED
//! line, the consistency check's outcome) as `--format linkbench`; and the check's drift note.

use super::kinds::{LinkBenchKind as K, REQUEST};
use crate::report::{Original, ReportHooks};
use fathom_schema::group::{median_step, series, Series};
use fathom_schema::latency::Latency;
use fathom_schema::result::StepSummary;
use fathom_schema::store::LoadedRun;
use fathom_schema::table::{Cell, Style, Table, Titled};

/// What LinkBench adds to reports.
pub const HOOKS: ReportHooks = ReportHooks {
    heading: "LinkBench",
    tables,
    step_notes: drift_note,
    kinds_shown: true,
    explained_failures: &[K::DriftedCount.name()],
    legend: "",
    originals: &[Original {
        name: "linkbench",
        alias: None,
        about: "LinkBench's load line, per-operation latency lines and completion lines",
        render: |runs| Ok(render(runs)),
    }],
};

/// The check's pairs whose count drifted from their visible links, said apart from failures.
fn drift_note(m: &StepSummary) -> Vec<String> {
    let drifted = m.by_op.get(K::DriftedCount.name()).map_or(0, |o| o.failed);
    if drifted == 0 {
        return Vec::new();
    }
    vec![format!(
        "{}: {drifted} (id1, link type) counts differ from their visible links: the writes ran \
         without transactions (LinkbenchX on a server without them), so racing clients drift",
        m.step
    )]
}

/// Request operations in LinkBench's enum order, the load's bulk kinds and the check, as the
/// workload declares them.
const OPS: &[K] = REQUEST;
const NODES: &str = K::LoadNodeBulk.name();
const LINKS: &str = K::LoadLinksBulk.name();

/// Java's `#.##`/`#.###`: at most `decimals`, no trailing zeros.
fn java_decimal(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The LinkBench histogram bucket holding a latency of `us` microseconds, in ms.
pub fn bucket(us: f64) -> (f64, f64) {
    let ms = (us / 1000.0).floor();
    if ms < 1.0 {
        let k = (us / 100.0).floor();
        (k / 10.0, (k + 1.0) / 10.0)
    } else if ms < 100.0 {
        (ms, ms + 1.0)
    } else if ms < 1000.0 {
        let b = (ms / 100.0).floor() * 100.0;
        (b, b + 100.0)
    } else if ms < 10_000.0 {
        let b = (ms / 1000.0).floor() * 1000.0;
        (b, b + 1000.0)
    } else {
        (10_000.0, 100_000.0)
    }
}

fn bucket_text(us: f64) -> String {
    let (a, b) = bucket(us);
    format!("[{},{}]", java_decimal(a, 2), java_decimal(b, 2))
}

/// One operation's line as LinkBench prints it at the end of a request phase.
pub fn latency_line(op: &str, count: u64, l: &Latency) -> String {
    format!(
        "{op} count = {count}  p25 = {}ms  p50 = {}ms  p75 = {}ms  p95 = {}ms  p99 = {}ms  max = {}ms  mean = {}ms",
        bucket_text(l.p25),
        bucket_text(l.p50),
        bucket_text(l.p75),
        bucket_text(l.p95),
        bucket_text(l.p99),
        java_decimal(l.max / 1000.0, 3),
        java_decimal(l.mean / 1000.0, 3),
    )
}

fn is_load(s: &StepSummary) -> bool {
    s.by_op.contains_key(LINKS) || s.by_op.contains_key(NODES)
}

fn is_request(s: &StepSummary) -> bool {
    OPS.iter().any(|op| s.by_op.contains_key(op.name()))
}

/// The load's per-node costs and the requests' exact latencies, when the runs have them.
pub fn tables(all: &[Series]) -> Vec<Titled> {
    [
        ("LinkBench load, per node inserted", load_table(all)),
        (
            "LinkBench requests, latency per operation in µs",
            exact_table(all),
        ),
    ]
    .into_iter()
    .filter_map(|(title, table)| {
        Some(Titled {
            title: title.into(),
            table: table?,
        })
    })
    .collect()
}

/// The load of every setup: nodes, links, links per node, seconds, links/s, and per node
/// inserted: disk reads, KB written, context switches and CPU µs (seed 000's load table).
fn load_table(all: &[Series]) -> Option<Table> {
    let mut t = Table::new(&[
        "nodes",
        "links",
        "links/node",
        "secs",
        "links/s",
        "nodes/s",
        "r/node",
        "wKB/node",
        "cs/node",
        "cpu/node",
        "db.gb",
        "rss",
        "setup",
    ]);
    for s in all {
        let reps: Vec<&StepSummary> = s
            .runs
            .iter()
            .flat_map(|r| &r.steps)
            .filter(|x| is_load(x))
            .collect();
        if reps.is_empty() {
            continue;
        }
        let m = median_step(&reps);
        let rows_of = |kind: &str| m.by_op.get(kind).map_or(0, |o| o.rows);
        let (nodes, links) = (rows_of(NODES), rows_of(LINKS));
        let secs = m.seconds.max(f64::MIN_POSITIVE);
        // Per-op figures are per bulk batch; per node is that times batches over nodes.
        let per_node = |x: Option<f64>| {
            x.filter(|_| nodes > 0)
                .map(|v| v * m.ops as f64 / nodes as f64)
        };
        t.push(vec![
            Cell::count(nodes as f64),
            Cell::count(links as f64),
            Cell::fixed((nodes > 0).then(|| links as f64 / nodes as f64), 2),
            Cell::Number(m.seconds, Style::Seconds),
            Cell::Number(links as f64 / secs, Style::Rate),
            Cell::Number(nodes as f64 / secs, Style::Rate),
            Cell::opt(per_node(m.per_op.reads)),
            Cell::opt(per_node(m.per_op.write_kb)),
            Cell::opt(per_node(m.per_op.cs)),
            Cell::opt(per_node(m.per_op.cpu_us)),
            Cell::db_gb(&m.db_gb),
            Cell::Number(m.rss_gb, Style::Gib),
            Cell::Text(s.label(all)),
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

/// LinkBench's own output for every run: the load line, then per request step the latency
/// lines and the completion line, then the check.
pub fn render(runs: &[LoadedRun]) -> String {
    let all = series(runs);
    let mut out = String::new();
    for s in &all {
        for (n, run) in s.runs.iter().enumerate() {
            let label = if s.runs.len() > 1 {
                format!("{}.r{}", s.label(&all), n + 1)
            } else {
                s.label(&all)
            };
            out += &format!("# {label}\n");
            for step in &run.steps {
                if is_load(step) {
                    let rows_of = |k: &str| step.by_op.get(k).map_or(0, |o| o.rows);
                    let (nodes, links) = (rows_of(NODES), rows_of(LINKS));
                    let expected = run
                        .manifest
                        .params
                        .get("maxid1")
                        .zip(run.manifest.params.get("startid1"))
                        .and_then(|(a, b)| Some(a.parse::<i64>().ok()? - b.parse::<i64>().ok()?))
                        .unwrap_or(0);
                    out += &format!(
                        "LOAD PHASE COMPLETED.  Loaded {nodes} nodes (Expected {expected}). Loaded {links} links ({:.2} links per node).  Took {:.1} seconds.  Links/second = {:.0}\n",
                        links as f64 / nodes.max(1) as f64,
                        step.seconds,
                        links as f64 / step.seconds.max(f64::MIN_POSITIVE)
                    );
                } else if is_request(step) {
                    out += &format!("[{}]\n", step.step);
                    for op in OPS {
                        if let Some(o) = step.by_op.get(op.name()) {
                            out += &latency_line(op.name(), o.ops, &o.latency_us);
                            out += "\n";
                        }
                    }
                    let ms = (step.seconds * 1000.0) as u64;
                    out += &format!(
                        "REQUEST PHASE COMPLETED. {} requests done in {} seconds. Requests/second = {}\n",
                        step.ops,
                        ms / 1000,
                        (1000 * step.ops).checked_div(ms).unwrap_or(0)
                    );
                } else if step.by_op.contains_key(K::Check.name()) {
                    out += &format!(
                        "CONSISTENCY CHECK PASSED. Every count row equals its visible links ({:.1} seconds).\n",
                        step.seconds.max(step.window_seconds)
                    );
                }
            }
        }
    }
    out
}

/// Exact per-operation latency of each request step, µs: a row per operation and setup.
fn exact_table(all: &[Series]) -> Option<Table> {
    let mut t = Table::new(&[
        "step", "op", "count", "p50", "p99", "p99.9", "max", "mean", "setup",
    ]);
    for s in all {
        for name in s.step_names() {
            let reps = s.step(name);
            if !reps.iter().any(|r| is_request(r)) {
                continue;
            }
            let m = median_step(&reps);
            for op in OPS {
                if let Some(o) = m.by_op.get(op.name()) {
                    let l = &o.latency_us;
                    t.push(vec![
                        Cell::text(name),
                        Cell::text(op.name()),
                        Cell::count(o.ops as f64),
                        Cell::num(l.p50),
                        Cell::num(l.p99),
                        Cell::num(l.p99_9),
                        Cell::num(l.max),
                        Cell::num(l.mean),
                        Cell::Text(s.label(all)),
                    ]);
                }
            }
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_linkbenchs() {
        let cases = [
            (850.0, "[0.8,0.9]"),
            (1_500.0, "[1,2]"),
            (150_000.0, "[100,200]"),
            (2_500_000.0, "[2000,3000]"),
            (26_278_336.0, "[10000,100000]"),
        ];
        for (us, bucket) in cases {
            assert_eq!(bucket_text(us), bucket, "{us} µs");
        }
    }

    #[test]
    fn a_latency_line_reads_as_linkbench_prints_it() {
        // From seed 002: ADD_NODE count = 893692 p50 = [0.2,0.3]ms p99 = [3,4]ms
        // max = 262.96ms mean = 0.37ms.
        let l = Latency {
            p25: 150.0,
            p50: 250.0,
            p75: 400.0,
            p95: 2_100.0,
            p99: 3_500.0,
            max: 262_960.0,
            mean: 370.0,
            ..Latency::default()
        };
        assert_eq!(
            latency_line("ADD_NODE", 893692, &l),
            "ADD_NODE count = 893692  p25 = [0.1,0.2]ms  p50 = [0.2,0.3]ms  p75 = [0.4,0.5]ms  \
             p95 = [2,3]ms  p99 = [3,4]ms  max = 262.96ms  mean = 0.37ms"
        );
    }

    /// The table says "median over repeats": with three repeats whose GET_NODE latency
    /// differs, it shows the middle one, not the first repeat's.
    #[test]
    fn the_latency_table_over_repeats_shows_medians() {
        use fathom_schema::result::{RunManifest, SetupRecord};
        let repeat = |p99: f64, ops: u64| {
            let get = fathom_schema::result::OpSummary {
                ops,
                latency_us: Latency {
                    p99,
                    ..Latency::default()
                },
                ..Default::default()
            };
            let mut step = StepSummary {
                ops,
                by_op: [("GET_NODE".to_string(), get)].into(),
                ..StepSummary::default()
            };
            step.step = "request".into();
            step.index = 1;
            LoadedRun {
                path: "r".into(),
                manifest: RunManifest {
                    setup: SetupRecord {
                        name: "rx".into(),
                        ..SetupRecord::default()
                    },
                    workload: "linkbench".into(),
                    clients: 2,
                    ..RunManifest::default()
                },
                steps: vec![step],
            }
        };
        let runs = [repeat(900.0, 10), repeat(100.0, 30), repeat(500.0, 20)];
        let t = exact_table(&series(&runs)).expect("a request step");
        assert_eq!(t.rows.len(), 1);
        let col = |name: &str| {
            let i = t.header.iter().position(|h| h == name).unwrap();
            t.rows[0][i].clone()
        };
        assert_eq!(col("p99"), Cell::num(500.0));
        assert_eq!(col("count").to_string(), "20");
    }
}
