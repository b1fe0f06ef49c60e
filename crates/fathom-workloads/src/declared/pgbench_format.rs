//! pgbench's end-of-run lines (`--format pgbench`), for users whose scripts read pgbench's
//! output (PostgreSQL 15's pgbench: its header, the transaction counts, `latency average` and
//! `tps`, and with several scripts a section per script). Per step of a run, as pgbench ends a
//! run. Where fathom has no figure pgbench prints, the line is left out rather than made up: the
//! initial connection time, a script's weight and its latency standard deviation, and the
//! statement latencies of `-r`. As pgbench does without `-r` or `--progress`, the run's
//! `latency average` is the duration times the clients over the transactions; a script's is
//! its transactions' measured mean. fathom runs each client on a thread of its own, so
//! `number of threads` is the clients.

use crate::report::Original;
use fathom_schema::result::StepSummary;
use fathom_schema::store::LoadedRun;
use std::collections::BTreeMap;
use std::fmt::Write;

/// `--format pgbench`.
pub const ORIGINAL: Original = Original {
    name: "pgbench",
    alias: None,
    about: "pgbench's end-of-run lines (transactions, latency average, tps, per script), per step",
    render: |runs| Ok(render(runs)),
};

/// A block per step of each run that ran operations, but its load: pgbench -i is a command of
/// its own, which prints no such lines.
pub fn render(runs: &[LoadedRun]) -> String {
    crate::report::per_step(runs, |s| s.ops > 0 && s.step != "load", step)
}

/// How pgbench names a script: its built-in ones as `<builtin: …>`, a file by its name.
fn script_title(kind: &str) -> String {
    match kind {
        "tpcb-like" => "<builtin: TPC-B (sort of)>".into(),
        "simple-update" => "<builtin: simple update>".into(),
        "select-only" => "<builtin: select only>".into(),
        other => other.into(),
    }
}

/// Failed transactions and their share, as pgbench prints them.
fn failed(failed: u64, done: u64) -> String {
    let all = failed + done;
    let share = if all == 0 {
        0.0
    } else {
        100.0 * failed as f64 / all as f64
    };
    format!("{failed} ({share:.3}%)")
}

/// pgbench's -s: `--param scale=N`, else `--param vars=scale=N`, else the file's own, which
/// for the bundled pgbench files is 1 (the report has no file to read it from).
fn scale(params: &BTreeMap<String, String>) -> String {
    let given = params.get("scale").filter(|v| !v.is_empty() && *v != "0");
    let in_vars = || {
        let vars = params.get("vars")?;
        vars.split(',')
            .find_map(|v| v.trim().strip_prefix("scale="))
            .map(|v| v.trim().to_string())
    };
    given
        .cloned()
        .or_else(in_vars)
        .unwrap_or_else(|| "1".into())
}

/// pgbench's -M: `prepared` when the statements were prepared, else `simple` (text with the
/// values written in, pgbench's default and the bundled files' original).
fn query_mode(params: &BTreeMap<String, String>) -> &'static str {
    match params.get("statements").map(String::as_str) {
        Some("prepared") => "prepared",
        _ => "simple",
    }
}

/// One step's lines. `params`: the run's (`scale`, pgbench's -s; `statements`, its -M).
fn step(s: &StepSummary, params: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let kinds: Vec<_> = s.by_op.iter().collect();
    let failed_all: u64 = kinds.iter().map(|(_, o)| o.failed).sum();
    let kind_type = match kinds.as_slice() {
        [(kind, _)] => script_title(kind),
        _ => "multiple scripts".into(),
    };
    let lines = [
        format!("transaction type: {kind_type}"),
        format!("scaling factor: {}", scale(params)),
        format!("query mode: {}", query_mode(params)),
        format!("number of clients: {}", s.clients),
        format!("number of threads: {}", s.clients),
        "maximum number of tries: 1".into(),
        format!("duration: {:.0} s", s.seconds),
        format!("number of transactions actually processed: {}", s.ops),
        format!(
            "number of failed transactions: {}",
            failed(failed_all, s.ops)
        ),
    ];
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    if s.ops > 0 {
        let ms = 1000.0 * s.seconds * s.clients as f64 / s.ops as f64;
        let _ = writeln!(out, "latency average = {ms:.3} ms");
    }
    let _ = writeln!(
        out,
        "tps = {:.6} (without initial connection time)",
        s.ops_per_sec
    );
    if kinds.len() > 1 {
        for (i, (kind, o)) in kinds.iter().enumerate() {
            let share = 100.0 * o.ops as f64 / s.ops.max(1) as f64;
            let tps = o.ops as f64 / s.seconds.max(f64::MIN_POSITIVE);
            let _ = writeln!(out, "SQL script {}: {}", i + 1, script_title(kind));
            let _ = writeln!(
                out,
                " - {} transactions ({share:.1}% of total, tps = {tps:.6})",
                o.ops
            );
            let _ = writeln!(
                out,
                " - number of failed transactions: {}",
                failed(o.failed, o.ops)
            );
            let _ = writeln!(
                out,
                " - latency average = {:.3} ms",
                o.latency_us.mean / 1000.0
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::result::OpSummary;

    fn summary(kinds: &[(&str, u64, f64)]) -> StepSummary {
        let mut s = StepSummary {
            step: "run".into(),
            clients: 2,
            seconds: 3.0,
            ..StepSummary::default()
        };
        for (kind, ops, mean_us) in kinds {
            let mut o = OpSummary {
                ops: *ops,
                ..OpSummary::default()
            };
            o.latency_us.mean = *mean_us;
            s.ops += ops;
            s.by_op.insert(kind.to_string(), o);
        }
        s.ops_per_sec = s.ops as f64 / s.seconds;
        s
    }

    #[test]
    fn one_builtin_script_reads_as_pgbench_prints_it() {
        let params = [
            ("scale", "0"),
            ("vars", "scale=4"),
            ("statements", "original"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        let text = step(&summary(&[("tpcb-like", 1200, 4900.0)]), &params);
        let want = "transaction type: <builtin: TPC-B (sort of)>\n\
                    scaling factor: 4\n\
                    query mode: simple\n\
                    number of clients: 2\n\
                    number of threads: 2\n\
                    maximum number of tries: 1\n\
                    duration: 3 s\n\
                    number of transactions actually processed: 1200\n\
                    number of failed transactions: 0 (0.000%)\n\
                    latency average = 5.000 ms\n\
                    tps = 400.000000 (without initial connection time)\n";
        assert_eq!(text, want);
    }

    #[test]
    fn several_scripts_get_a_section_each() {
        let s = summary(&[("select-only", 1500, 113.0), ("simple-update", 500, 5501.0)]);
        let text = step(&s, &Default::default());
        assert!(
            text.starts_with("transaction type: multiple scripts\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "SQL script 2: <builtin: simple update>\n - 500 transactions (25.0% of total, \
                 tps = 166.666667)\n - number of failed transactions: 0 (0.000%)\n - latency \
                 average = 5.501 ms\n"
            ),
            "{text}"
        );
    }
}
