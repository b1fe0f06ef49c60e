//! Runs grouped the way reports read them: a series is one setup running one workload at one
//! client count, holding its repeats; a step of a series is summarised by the median of each
//! figure over the repeats.

use fathom_core::recorder::Latency;
use fathom_core::result::{PerOp, StepSummary};
use fathom_core::store::LoadedRun;

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
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn median_of(steps: &[&StepSummary], f: impl Fn(&StepSummary) -> f64) -> f64 {
    median(&steps.iter().map(|s| f(s)).collect::<Vec<_>>())
}

fn median_opt(steps: &[&StepSummary], f: impl Fn(&StepSummary) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = steps.iter().filter_map(|s| f(s)).collect();
    (!v.is_empty()).then(|| median(&v))
}

/// One summary standing for a step's repeats: each figure is the median over them. With one
/// repeat it is that repeat's summary unchanged.
pub fn median_step(steps: &[&StepSummary]) -> StepSummary {
    let mut m = steps[0].clone();
    if steps.len() == 1 {
        return m;
    }
    m.ops = median_of(steps, |s| s.ops as f64) as u64;
    m.seconds = median_of(steps, |s| s.seconds);
    m.ops_per_sec = median_of(steps, |s| s.ops_per_sec);
    m.mb_per_sec = median_of(steps, |s| s.mb_per_sec);
    m.usec_op = median_of(steps, |s| s.usec_op);
    let lat = |f: fn(&Latency) -> f64| median_of(steps, |s| f(&s.latency_us));
    m.latency_us = Latency {
        min: lat(|l| l.min),
        p25: lat(|l| l.p25),
        p50: lat(|l| l.p50),
        p75: lat(|l| l.p75),
        p95: lat(|l| l.p95),
        p99: lat(|l| l.p99),
        p99_9: lat(|l| l.p99_9),
        p99_99: lat(|l| l.p99_99),
        max: lat(|l| l.max),
        mean: lat(|l| l.mean),
    };
    m.per_op = PerOp::from_fields(|f| median_opt(steps, |s| f(&s.per_op)));
    m.db_gb.allocated = median_of(steps, |s| s.db_gb.allocated);
    m.db_gb.apparent = median_of(steps, |s| s.db_gb.apparent);
    m.rss_gb = median_of(steps, |s| s.rss_gb);
    for (k, v) in m.engine_stats.iter_mut() {
        *v = median_opt(steps, |s| s.engine_stats.get(k).copied()).unwrap_or(*v);
    }
    m.host.idle_pct = median_of(steps, |s| s.host.idle_pct);
    m.host.rps = median_opt(steps, |s| s.host.rps);
    m.host.wps = median_opt(steps, |s| s.host.wps);
    m.host.rmbps = median_opt(steps, |s| s.host.rmbps);
    m.host.wmbps = median_opt(steps, |s| s.host.wmbps);
    m.host.us_pct = median_of(steps, |s| s.host.us_pct);
    m.host.sy_pct = median_of(steps, |s| s.host.sy_pct);
    m.host.cs_per_sec = median_of(steps, |s| s.host.cs_per_sec);
    m.rows = median_of(steps, |s| s.rows as f64) as u64;
    m.rows_per_sec = median_of(steps, |s| s.rows_per_sec);
    m.window_seconds = median_of(steps, |s| s.window_seconds);
    if let Some(b) = m.background.as_mut() {
        b.rows_per_sec = median_of(steps, |s| {
            s.background.as_ref().map_or(0.0, |b| b.rows_per_sec)
        });
    }
    m.retries_per_sec = median_of(steps, |s| s.retries_per_sec);
    m.host.steal_pct = median_of(steps, |s| s.host.steal_pct);
    m.harness_ns_per_op = median_opt(steps, |s| s.harness_ns_per_op);
    m.maintenance_seconds = median_of(steps, |s| s.maintenance_seconds);
    m.interrupted = steps.iter().any(|s| s.interrupted);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        let a = StepSummary {
            ops_per_sec: 10.0,
            per_op: PerOp {
                reads: Some(1.0),
                ..Default::default()
            },
            ..Default::default()
        };
        let b = StepSummary {
            ops_per_sec: 30.0,
            ..Default::default()
        };
        let c = StepSummary {
            ops_per_sec: 20.0,
            per_op: PerOp {
                reads: Some(3.0),
                ..Default::default()
            },
            ..Default::default()
        };
        let m = median_step(&[&a, &b, &c]);
        assert_eq!(m.ops_per_sec, 20.0);
        assert_eq!(m.per_op.reads, Some(2.0));
        assert_eq!(m.per_op.cpu_us, None);
    }
}
