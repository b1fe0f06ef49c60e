//! YCSB's end-of-run lines (`--format ycsb`), for users whose scripts read YCSB 0.17.0's output:
//! per step of a run, the `[OVERALL]` run time and throughput, then for each operation kind
//! YCSB's HdrHistogram measurement lines (Operations, AverageLatency(us), MinLatency(us),
//! MaxLatency(us), the 50th, 95th and 99th percentiles, its default `hdrhistogram.percentiles`)
//! and its status counts (`Return=OK`, and `Return=ERROR` for operations that failed). Latencies
//! are whole microseconds, as YCSB's histogram records them; the average is not.

use crate::report::Original;
use fathom_schema::result::StepSummary;
use fathom_schema::store::LoadedRun;
use std::fmt::Write;

/// `--format ycsb`.
pub const ORIGINAL: Original = Original {
    name: "ycsb",
    alias: None,
    about: "YCSB's [OVERALL] and per-operation measurement lines, per step",
    render: |runs| Ok(render(runs)),
};

/// A block per step of each run that ran operations.
pub fn render(runs: &[LoadedRun]) -> String {
    crate::report::per_step(runs, |s| s.ops > 0, |s, _| step(s))
}

/// One step's lines, as YCSB prints them at the end of a run.
fn step(s: &StepSummary) -> String {
    let mut out = String::new();
    let mut line = |metric: &str, measurement: &str, value: String| {
        let _ = writeln!(out, "[{metric}], {measurement}, {value}");
    };
    line(
        "OVERALL",
        "RunTime(ms)",
        format!("{:.0}", s.seconds * 1000.0),
    );
    line("OVERALL", "Throughput(ops/sec)", s.ops_per_sec.to_string());
    for (kind, o) in &s.by_op {
        let l = &o.latency_us;
        let whole = |us: f64| format!("{:.0}", us);
        line(kind, "Operations", o.ops.to_string());
        line(kind, "AverageLatency(us)", l.mean.to_string());
        line(kind, "MinLatency(us)", whole(l.min));
        line(kind, "MaxLatency(us)", whole(l.max));
        line(kind, "50thPercentileLatency(us)", whole(l.p50));
        line(kind, "95thPercentileLatency(us)", whole(l.p95));
        line(kind, "99thPercentileLatency(us)", whole(l.p99));
        line(kind, "Return=OK", o.ops.to_string());
        if o.failed > 0 {
            line(kind, "Return=ERROR", o.failed.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::result::OpSummary;

    #[test]
    fn a_step_reads_as_ycsb_prints_it() {
        let mut s = StepSummary {
            step: "run".into(),
            ops: 1000,
            ops_per_sec: 500.0,
            seconds: 2.0,
            ..StepSummary::default()
        };
        let mut read = OpSummary {
            ops: 1000,
            ..OpSummary::default()
        };
        read.latency_us.mean = 12.5;
        read.latency_us.p95 = 20.4;
        s.by_op.insert("READ".into(), read);
        let text = step(&s);
        assert!(
            text.starts_with("[OVERALL], RunTime(ms), 2000\n[OVERALL], Throughput(ops/sec), 500\n")
        );
        assert!(
            text.contains("[READ], AverageLatency(us), 12.5\n"),
            "{text}"
        );
        assert!(
            text.contains("[READ], 95thPercentileLatency(us), 20\n"),
            "{text}"
        );
        assert!(text.ends_with("[READ], Return=OK, 1000\n"), "{text}");
    }
}
