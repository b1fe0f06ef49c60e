//! db_bench's `report.tsv` (docs/workloads.md §4.4), for users who keep spreadsheets of
//! benchmark.sh output: the same column names, units and test names. Two differences, on
//! purpose: w_amp counts flush bytes once, and u_cpu/s_cpu are the engine's CPU seconds over
//! the step (benchmark.sh divides /usr/bin/time's seconds by 1000; so does this).

use crate::report::{Original, ReportHooks};
use fathom_schema::result::StepSummary;
use fathom_schema::store::LoadedRun;

const HEADER: &[&str] = &[
    "ops_sec", "mb_sec", "lsm_sz", "c_wgb", "w_amp", "c_wsecs", "c_csecs", "usec_op", "p50", "p99",
    "p99.9", "p99.99", "pmax", "stall%", "u_cpu", "s_cpu", "rss", "test", "date", "version",
];

/// benchmark_compare.sh's test name for a step.
pub fn test_name(s: &StepSummary, value_size: &str) -> String {
    let t = s.clients;
    match s.step.as_str() {
        "fillseq" => format!("fillseq.wal_disabled.v{value_size}"),
        "revrange" => "revrange.t1".to_string(),
        "overwritesome" | "overwriteandwait" => format!("{}.t{t}.s0", s.step),
        other => format!("{other}.t{t}"),
    }
}

/// What db_bench adds to reports: benchmark.sh's `report.tsv` as `--format dbbench`.
pub const HOOKS: ReportHooks = ReportHooks {
    originals: &[Original {
        name: "dbbench",
        alias: Some("tsv"),
        about: "db_bench's report.tsv columns",
        render: |runs| Ok(render(runs)),
    }],
    ..ReportHooks::NONE
};

/// The header, then a line per step that ran operations.
pub fn render(runs: &[LoadedRun]) -> String {
    let mut out = HEADER.join("\t") + "\n";
    for r in runs {
        let m = &r.manifest;
        let value_size = m.params.get("value_size").map_or("400", String::as_str);
        for s in r.steps.iter().filter(|s| s.ops > 0) {
            let e = &s.engine_stats;
            let f1 = |x: Option<f64>| x.map_or("NA".to_string(), |v| format!("{v:.1}"));
            let l = &s.latency_us;
            let row = [
                format!("{:.0}", s.ops_per_sec),
                format!("{:.1}", s.mb_per_sec),
                e.lsm_gb.map_or("NA".into(), |g| format!("{g:.1}GB")),
                f1(e.c_wgb),
                f1(e.w_amp),
                e.c_wsecs.map_or("NA".into(), |v| format!("{v:.0}")),
                e.c_csecs.map_or("NA".into(), |v| format!("{v:.0}")),
                format!("{:.1}", s.usec_op),
                format!("{:.1}", l.p50),
                format!("{:.0}", l.p99),
                format!("{:.0}", l.p99_9),
                format!("{:.0}", l.p99_99),
                format!("{:.0}", l.max),
                f1(e.stall_pct),
                format!("{:.1}", s.host.engine_user_secs / 1000.0),
                format!("{:.1}", s.host.engine_system_secs / 1000.0),
                format!("{:.1}", s.rss_gb),
                test_name(s, value_size),
                s.started_at.trim_end_matches('Z').to_string(),
                m.setup.engine_version.clone(),
            ];
            out += &(row.join("\t") + "\n");
        }
    }
    out
}
