//! The page's picture of a step's tail: for the repeat whose slowest operations the section
//! explains, its p99 and maximum latency per interval, what the engine did meanwhile as bands,
//! and each kept operation where it ended.

use crate::draw::svg::{short, Line, LineChart};
use crate::draw::timeline::{Band, Mark, Timeline};
use fathom_schema::group::Series;
use fathom_schema::result::tail::Tail;
use fathom_schema::result::{IntervalRecord, StepSummary};

/// The chart of `step` of series `s` (`label` names it among several), from its first repeat
/// that kept a tail `told` accepts; `None` without one or its intervals.
pub fn of(
    s: &Series,
    step: &str,
    label: &str,
    told: fn(&StepSummary) -> Option<(&StepSummary, &Tail)>,
) -> Option<Timeline> {
    let (run, m, tail) = s.step_runs(step).into_iter().find_map(|(r, m)| {
        let (m, tail) = told(m)?;
        Some((r, m, tail))
    })?;
    let intervals = run.intervals(m).ok()?;
    let line = |name: &str, f: fn(&IntervalRecord) -> f64| Line {
        name: name.to_string(),
        points: (intervals.iter())
            .map(|i| (i.t_end, f(i)))
            .filter(|&(_, y)| y > 0.0)
            .collect(),
    };
    let origin = tail.window_us[0];
    let seconds = |us: u64| (us as f64 - origin as f64) / 1e6;
    let bands = (tail.events.iter())
        .map(|e| Band {
            from: seconds(e.start_us),
            to: seconds(e.end_us),
            what: e.what.clone(),
            note: format!("{}: {}", e.what, e.detail),
        })
        .collect();
    let marks = (tail.slowest.iter())
        .map(|o| Mark {
            x: seconds(o.end_us()),
            y: o.latency_us,
            note: format!(
                "{}, client {}: {} ms",
                o.kind,
                o.client,
                short(o.latency_us / 1e3)
            ),
        })
        .collect();
    let of = if label.is_empty() {
        String::new()
    } else {
        format!(" ({label})")
    };
    Some(Timeline {
        chart: LineChart {
            title: format!("{step}: latency, the engine's events, the slowest operations{of}"),
            x_label: "seconds into the step".into(),
            y_label: "µs".into(),
            lines: vec![
                line("p99", |i| i.latency_us.p99),
                line("max", |i| i.latency_us.max),
            ],
            log_y: true,
            x_names: Vec::new(),
        },
        bands,
        marks,
    })
}
