//! Runs grouped the way reports read them: a series is one setup running one workload at one
//! client count, holding its repeats; a step of a series is summarised by the median of each
//! figure over the repeats.

use crate::result::StepSummary;
use crate::store::LoadedRun;

/// One setup × workload × client count, with its repeats in run order.
pub struct Series<'a> {
    pub setup: String,
    pub workload: String,
    pub clients: usize,
    pub runs: Vec<&'a LoadedRun>,
}

impl<'a> Series<'a> {
    /// Each step's summaries over the repeats (only repeats that have the step).
    pub fn step(&self, name: &str) -> Vec<&'a StepSummary> {
        self.runs
            .iter()
            .filter_map(|r| r.steps.iter().find(|s| s.step == name))
            .collect()
    }

    /// Step names in run order.
    pub fn step_names(&self) -> Vec<&'a str> {
        let mut names: Vec<&str> = Vec::new();
        for r in &self.runs {
            for s in &r.steps {
                if !names.contains(&s.step.as_str()) {
                    names.push(&s.step);
                }
            }
        }
        names
    }

    /// The label reports print: the setup name, with `.c<clients>` when the report holds
    /// several client counts.
    pub fn label(&self, all: &[Series]) -> String {
        if all.iter().any(|s| s.clients != self.clients) {
            format!("{}.c{}", self.setup, self.clients)
        } else {
            self.setup.clone()
        }
    }
}

/// Groups runs into series, in first-seen order.
pub fn series(runs: &[LoadedRun]) -> Vec<Series<'_>> {
    series_of(&runs.iter().collect::<Vec<_>>())
}

/// `series` of borrowed runs.
pub fn series_of<'a>(runs: &[&'a LoadedRun]) -> Vec<Series<'a>> {
    let mut out: Vec<Series> = Vec::new();
    for &r in runs {
        let m = &r.manifest;
        match out
            .iter_mut()
            .find(|s| s.setup == m.setup.name && s.workload == m.workload && s.clients == m.clients)
        {
            Some(s) => s.runs.push(r),
            None => out.push(Series {
                setup: m.setup.name.clone(),
                workload: m.workload.clone(),
                clients: m.clients,
                runs: vec![r],
            }),
        }
    }
    out
}

/// Step names across runs, in first-seen order.
pub fn step_order(runs: &[LoadedRun]) -> Vec<String> {
    step_order_of(&runs.iter().collect::<Vec<_>>())
}

/// `step_order` of borrowed runs.
pub fn step_order_of(runs: &[&LoadedRun]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for r in runs {
        for s in &r.steps {
            if !order.contains(&s.step) {
                order.push(s.step.clone());
            }
        }
    }
    order
}

/// The median (the mean of the middle two for an even count); NaN for none.
pub fn median(xs: &[f64]) -> f64 {
    crate::combine::median_of(xs)
}

/// One summary standing for a step's repeats: every figure is the median over the repeats that
/// have it (`crate::combine`), so a figure added to `StepSummary` (or to a per-operation
/// summary, a background writer, an engine's statistics) is covered without being listed
/// here. Whole numbers stay whole (rounded), flags are set when any repeat set them, and text
/// is the first repeat's. With one repeat it is that repeat's summary unchanged.
pub fn median_step(steps: &[&StepSummary]) -> StepSummary {
    crate::combine::median(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::PerOp;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        let step = |ops_per_sec: f64, reads: Option<f64>| StepSummary {
            ops_per_sec,
            per_op: PerOp {
                reads,
                ..Default::default()
            },
            ..Default::default()
        };
        let (a, b, c) = (
            step(10.0, Some(1.0)),
            step(30.0, None),
            step(20.0, Some(3.0)),
        );
        let m = median_step(&[&a, &b, &c]);
        assert_eq!(m.ops_per_sec, 20.0);
        assert_eq!(m.per_op.reads, Some(2.0));
        assert_eq!(m.per_op.cpu_us, None);
    }

    /// Every figure is a median, per-operation latency and counts included (the LinkBench
    /// latency table once showed the first repeat's).
    #[test]
    fn per_operation_figures_are_medians_too() {
        let step = |p99: f64, ops: u64, w_amp: Option<f64>| {
            let mut get = crate::result::OpSummary {
                ops,
                ..Default::default()
            };
            get.latency_us.p99 = p99;
            let mut s = StepSummary {
                ops,
                ..StepSummary::default()
            };
            s.by_op.insert("GET_NODE".into(), get);
            s.interrupted = ops == 30;
            s.engine_stats.w_amp = w_amp;
            s
        };
        let (a, b, c) = (
            step(900.0, 10, Some(4.0)),
            step(100.0, 30, None),
            step(500.0, 20, Some(2.0)),
        );
        let m = median_step(&[&a, &b, &c]);
        assert_eq!(m.by_op["GET_NODE"].latency_us.p99, 500.0);
        assert_eq!(m.by_op["GET_NODE"].ops, 20);
        assert_eq!(m.ops, 20);
        assert_eq!(m.engine_stats.w_amp, Some(3.0), "the repeats that have it");
        assert!(m.interrupted, "any repeat interrupted");
        let m = median_step(&[&a, &c]);
        assert_eq!(m.ops, 15, "whole numbers stay whole");
    }
}
