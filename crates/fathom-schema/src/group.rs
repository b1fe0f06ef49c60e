//! Runs grouped the way reports read them: a series is one setup running one workload with one
//! set of parameters at one client count, holding its repeats; a step of a series is
//! summarised by the median of each figure over the repeats. Runs of one setup name whose
//! parameters differ (two `num_keys`, a full run and a check-only one) are two series, never
//! one with two modes.

use crate::result::{RunManifest, StepSummary};
use crate::store::LoadedRun;
use std::collections::BTreeMap;

/// Parameters that vary from run to run without changing what is measured.
pub const NOT_DEFINING: &[&str] = &["seed"];

/// Settings that name a process rather than configure the engine (an attached server's
/// `pid`): they differ from run to run of one setup.
pub const NOT_DEFINING_SETTINGS: &[&str] = &["pid"];

/// The parameters that define what a run measured: all it recorded but `NOT_DEFINING`.
pub fn defining_params(m: &RunManifest) -> BTreeMap<String, String> {
    let mut params = m.params.clone();
    params.retain(|k, _| !NOT_DEFINING.contains(&k.as_str()));
    params
}

/// A key whose values differ: the key, the first set's value and the second's (`-` for none).
pub type Difference = (String, String, String);

/// The keys whose values differ between two sets of parameters (a key one lacks counts), in
/// order, as `num_keys 1000 against 2000`.
pub fn param_differences(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Vec<Difference> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let value = |m: &BTreeMap<String, String>, k: &String| m.get(k).cloned().unwrap_or("-".into());
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| (k.clone(), value(a, k), value(b, k)))
        .collect()
}

/// One setup × workload × parameters × client count, with its repeats in run order.
pub struct Series<'a> {
    pub setup: String,
    pub workload: String,
    pub clients: usize,
    /// The defining parameters its runs share (`defining_params`).
    pub params: BTreeMap<String, String>,
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

    /// Each step's repeats with their runs (only repeats that have the step).
    pub fn step_runs(&self, name: &str) -> Vec<(&'a LoadedRun, &'a StepSummary)> {
        self.runs
            .iter()
            .filter_map(|r| Some((*r, r.steps.iter().find(|s| s.step == name)?)))
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
    /// several client counts, and the parameters that tell it from another series of the same
    /// setup, workload and clients (`a [num_keys=1000]`), when there is one.
    pub fn label(&self, all: &[Series]) -> String {
        let mut label = if all.iter().any(|s| s.clients != self.clients) {
            format!("{}.c{}", self.setup, self.clients)
        } else {
            self.setup.clone()
        };
        let mut differ: Vec<String> = Vec::new();
        for other in all.iter().filter(|o| {
            o.setup == self.setup
                && o.workload == self.workload
                && o.clients == self.clients
                && o.params != self.params
        }) {
            for (k, _, _) in param_differences(&self.params, &other.params) {
                if !differ.contains(&k) {
                    differ.push(k);
                }
            }
        }
        if !differ.is_empty() {
            let parts: Vec<String> = differ
                .iter()
                .map(|k| format!("{k}={}", self.params.get(k).map_or("-", |v| v.as_str())))
                .collect();
            label += &format!(" [{}]", parts.join(","));
        }
        label
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
        let params = defining_params(m);
        match out.iter_mut().find(|s| {
            s.setup == m.setup.name
                && s.workload == m.workload
                && s.clients == m.clients
                && s.params == params
        }) {
            Some(s) => s.runs.push(r),
            None => out.push(Series {
                setup: m.setup.name.clone(),
                workload: m.workload.clone(),
                clients: m.clients,
                params,
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
    fathom_api::combine::median_of(xs)
}

/// One summary standing for a step's repeats: every figure is the median over the repeats that
/// have it (`fathom_api::combine`), so a figure added to `StepSummary` (or to a per-operation
/// summary, a background writer, an engine's statistics) is covered without being listed
/// here. Whole numbers stay whole (rounded), flags are set when any repeat set them, and text
/// is the first repeat's. With one repeat it is that repeat's summary unchanged.
pub fn median_step(steps: &[&StepSummary]) -> StepSummary {
    fathom_api::combine::median(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::PerOp;

    /// A full TPC-C run and check-only runs of the same setup in one directory are two series,
    /// each labelled by the steps it ran, not repeats of one.
    #[test]
    fn runs_of_other_steps_are_another_series() {
        let run = |steps: &str| {
            let mut manifest = crate::result::RunManifest::default();
            manifest.setup.name = "innodb".into();
            manifest.workload = "tpcc".into();
            manifest.clients = 2;
            manifest.params.insert("warehouses".into(), "1".into());
            manifest.params.insert("steps".into(), steps.into());
            manifest
                .params
                .insert("seed".into(), steps.len().to_string());
            LoadedRun {
                path: steps.into(),
                manifest,
                steps: Vec::new(),
            }
        };
        let runs = vec![run("prepare,run,check"), run("check"), run("check")];
        let all = series(&runs);
        assert_eq!(all.len(), 2);
        assert_eq!(
            all[1].runs.len(),
            2,
            "the check-only runs are repeats of one"
        );
        assert_eq!(all[0].label(&all), "innodb [steps=prepare,run,check]");
        assert_eq!(all[1].label(&all), "innodb [steps=check]");
    }

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
