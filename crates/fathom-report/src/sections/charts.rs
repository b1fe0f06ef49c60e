//! The page's chart sections: throughput and p99 latency over time (the median over repeats of
//! each interval) and latency percentiles, a chart per step with a line per series.

use crate::draw::svg::{Line, LineChart};
use crate::section::{Chart, Input, Section};
use fathom_schema::group::{median, median_step, Series};
use fathom_schema::result::IntervalRecord;

/// The median over repeats of each interval's figure, up to the shortest repeat.
fn median_series(s: &Series, step: &str, f: fn(&IntervalRecord) -> f64) -> Vec<(f64, f64)> {
    let per_run: Vec<Vec<(f64, f64)>> = s
        .runs
        .iter()
        .filter_map(|r| {
            let summary = r.steps.iter().find(|x| x.step == step)?;
            let iv = r.intervals(summary).ok()?;
            // Intervals cut short (a step's last) rate on too little time.
            let whole = IntervalRecord::whole(&iv);
            Some(whole.into_iter().map(|i| (i.t_end, f(i))).collect())
        })
        .filter(|v: &Vec<(f64, f64)>| !v.is_empty())
        .collect();
    let n = per_run.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|k| {
            let ys: Vec<f64> = per_run.iter().map(|v| v[k].1).collect();
            (per_run[0][k].0, median(&ys))
        })
        .collect()
}

/// The heading of the charts over time, which the page shows right after its summary.
pub const OVER_TIME: &str = "Over time";

/// Throughput and p99 latency over time.
pub fn over_time(input: &Input) -> anyhow::Result<Vec<Section>> {
    type Figure = (&'static str, &'static str, fn(&IntervalRecord) -> f64, bool);
    let figures: [Figure; 2] = [
        ("throughput", "ops/s", |i| i.ops_per_sec, false),
        ("p99 latency", "µs", |i| i.latency_us.p99, true),
    ];
    let all = &input.series;
    let mut section = Section::new(OVER_TIME);
    for step in &input.steps {
        for (what, unit, f, log_y) in figures {
            let lines: Vec<Line> = all
                .iter()
                .map(|s| Line {
                    name: s.label(all),
                    points: median_series(s, step, f),
                })
                .filter(|l| l.points.len() > 1)
                .collect();
            if !lines.is_empty() {
                section.charts.push(Chart::Line(LineChart {
                    title: format!("{step}: {what} over time"),
                    x_label: "seconds into the step".into(),
                    y_label: unit.into(),
                    lines,
                    log_y,
                    x_names: vec![],
                }));
            }
        }
    }
    Ok(section.if_any().into_iter().collect())
}

/// p50 to max of each step, the median over repeats.
pub fn percentiles(input: &Input) -> anyhow::Result<Vec<Section>> {
    let names = ["p50", "p75", "p99", "p99.9", "p99.99", "max"];
    let all = &input.series;
    let mut section = Section::new("Latency percentiles");
    for step in &input.steps {
        let lines: Vec<Line> = all
            .iter()
            .filter_map(|s| {
                let reps = s.step(step);
                if reps.is_empty() || reps[0].ops == 0 {
                    return None;
                }
                let l = median_step(&reps).latency_us;
                let v = [l.p50, l.p75, l.p99, l.p99_9, l.p99_99, l.max];
                Some(Line {
                    name: s.label(all),
                    points: v.iter().enumerate().map(|(i, &y)| (i as f64, y)).collect(),
                })
            })
            .collect();
        if !lines.is_empty() {
            section.charts.push(Chart::Line(LineChart {
                title: format!("{step}: latency percentiles"),
                x_label: "percentile".into(),
                y_label: "µs".into(),
                lines,
                log_y: true,
                x_names: names.iter().map(|s| s.to_string()).collect(),
            }));
        }
    }
    Ok(section.if_any().into_iter().collect())
}
