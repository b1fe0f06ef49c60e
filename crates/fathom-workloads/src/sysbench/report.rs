//! sysbench's own output (docs/workloads.md §3.6), for users who compare against logs of the
//! real tool: per run and step, a `[ Ns ] thds: tps: qps: (r/w/o) lat (ms,95%): err/s:` line per
//! interval, then the SQL statistics, general statistics and latency blocks.

use crate::report::{Original, ReportHooks};
use fathom_schema::result::{QueryMix, StepSummary};
use fathom_schema::store::LoadedRun;
use std::fmt::Write;

fn mix(s: &StepSummary) -> QueryMix {
    s.query_mix.unwrap_or(QueryMix {
        read: 1.0,
        write: 0.0,
        other: 0.0,
    })
}

/// What sysbench adds to reports: how to read an event, and its own output as
/// `--format sysbench`.
pub const HOOKS: ReportHooks = ReportHooks {
    legend: "sysbench steps: an op is an event (a transaction of several queries except \
             oltp_point_select and select_random_points).\n",
    originals: &[Original {
        name: "sysbench",
        alias: None,
        about: "sysbench's interval lines and statistics blocks",
        render,
    }],
    ..ReportHooks::NONE
};

/// Every step of every run that ran operations, prepare aside.
pub fn render(runs: &[LoadedRun]) -> anyhow::Result<String> {
    let mut out = String::new();
    for r in runs {
        let m = &r.manifest;
        for s in r.steps.iter().filter(|s| s.ops > 0 && s.step != "prepare") {
            let q = mix(s);
            let _ = writeln!(
                out,
                "# {} {} / {} {} with {} threads ({})\n",
                m.setup.name,
                m.setup.engine_version,
                m.workload,
                s.step,
                s.clients,
                r.path.display()
            );
            // A final sliver of an interval with nothing in it is the step's edge, not a second.
            for i in r
                .intervals(s)?
                .into_iter()
                .filter(|i| i.ops > 0 || i.t_end - i.t_start > 0.5)
            {
                let secs = (i.t_end - i.t_start).max(1e-9);
                let tps = i.ops_per_sec;
                let _ = writeln!(
                    out,
                    "[ {:.0}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,95%): {:.2} err/s: {:.2} reconn/s: 0.00",
                    i.t_end,
                    s.clients,
                    tps,
                    tps * q.total(),
                    tps * q.read,
                    tps * q.write,
                    tps * q.other,
                    i.latency_us.p95 / 1000.0,
                    i.retries as f64 / secs,
                );
            }
            let n = s.ops as f64;
            let per = |x: f64| x * s.ops_per_sec;
            let ignored = s.retries_per_sec * s.seconds;
            let _ = write!(
                out,
                "\nSQL statistics:\n    queries performed:\n        read:                            {:.0}\n        write:                           {:.0}\n        other:                           {:.0}\n        total:                           {:.0}\n",
                n * q.read,
                n * q.write,
                n * q.other,
                n * q.total()
            );
            let _ = write!(
                out,
                "    transactions:                        {}  ({:.2} per sec.)\n    queries:                             {:.0} ({:.2} per sec.)\n    ignored errors:                      {:.0}      ({:.2} per sec.)\n    reconnects:                          0      (0.00 per sec.)\n\n",
                s.ops,
                s.ops_per_sec,
                n * q.total(),
                per(q.total()),
                ignored,
                s.retries_per_sec
            );
            let l = &s.latency_us;
            let _ = write!(
                out,
                "General statistics:\n    total time:                          {:.4}s\n    total number of events:              {}\n\nLatency (ms):\n         min:                             {:8.2}\n         avg:                             {:8.2}\n         max:                             {:8.2}\n         95th percentile:                 {:8.2}\n         sum:                             {:8.2}\n\n",
                s.seconds,
                s.ops,
                l.min / 1000.0,
                l.mean / 1000.0,
                l.max / 1000.0,
                l.p95 / 1000.0,
                l.mean * n / 1000.0
            );
        }
    }
    Ok(out)
}
