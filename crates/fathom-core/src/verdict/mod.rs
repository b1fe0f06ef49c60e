//! Whether a setup is faster than its base, beyond the noise of repeats: per step and client
//! count, the ratio of throughputs, its t interval, and a verdict against a threshold band.
//! `fathom compare` prints it; an experiment with adaptive repeats runs rounds until each
//! compared step has one.

pub mod adjust;
pub mod costs;
pub mod gate;
pub mod log_ratio;
#[cfg(test)]
mod simulation;

pub use adjust::Adjust;
pub use log_ratio::{LogRatio, ALPHA};

use crate::group::{median_step, series_of, step_order_of};
use crate::result::StepSummary;
use crate::store::LoadedRun;
use serde::Serialize;

/// Runs each side needs for a verdict. The t interval holds its level with two (the
/// simulation of docs/verdicts.md measures it), but two runs a side cannot show a disturbed
/// run for what it is: a verdict waits for a third.
pub const MIN_REPEATS: usize = 3;

/// One side of a comparison: a setup's runs from one results directory.
pub struct Side<'a> {
    pub label: String,
    pub runs: Vec<&'a LoadedRun>,
}

/// Whether a run's figures are judged: as adaptive rounds judge, a run that failed is left
/// out (its finished steps stay in the other tables).
fn judged(run: &LoadedRun) -> bool {
    run.manifest.status != crate::result::RunStatus::Failed
}

/// Splits each operand's runs by setup name, in order; labels are the setup names, prefixed
/// with the operand when two operands hold the same name. Runs that failed are left out.
pub fn sides<'a>(operands: &[(String, &'a [LoadedRun])]) -> Vec<Side<'a>> {
    let mut out: Vec<(String, String, Vec<&LoadedRun>)> = Vec::new();
    for (operand, runs) in operands {
        for r in runs.iter().filter(|r| judged(r)) {
            let name = &r.manifest.setup.name;
            match out.iter_mut().find(|(o, n, _)| o == operand && n == name) {
                Some(side) => side.2.push(r),
                None => out.push((operand.clone(), name.clone(), vec![r])),
            }
        }
    }
    let clash = |n: &str| out.iter().filter(|(_, m, _)| m == n).count() > 1;
    out.iter()
        .map(|(operand, name, runs)| Side {
            label: if clash(name) {
                format!("{operand}:{name}")
            } else {
                name.clone()
            },
            runs: runs.clone(),
        })
        .collect()
}

/// Where a comparison stands. The band is 1 ± the threshold: an interval wholly above it is
/// faster, wholly below slower, wholly inside it the same (an equivalence, which a mere
/// overlap with 1 is not); one that crosses an edge of the band is undecided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    Same,
    Undecided,
    /// Fewer than `MIN_REPEATS` runs on a side: noise cannot be told from change.
    NoVerdict,
}

impl Verdict {
    pub fn text(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::Undecided => "undecided",
            Verdict::NoVerdict => "no verdict",
        }
    }

    /// True when more runs could not change the answer's kind: faster, slower or same.
    pub fn decided(&self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Slower | Verdict::Same)
    }
}

/// One step at one client count, NEW against BASE.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub workload: String,
    pub step: String,
    pub clients: usize,
    pub base: String,
    pub new: String,
    pub base_ops_per_sec: Vec<f64>,
    pub new_ops_per_sec: Vec<f64>,
    /// NEW / BASE of the geometric means of ops/s (the centre of the interval).
    pub ratio: f64,
    /// The ratio's 95% t interval (Welch's, on the logarithms); `None` without two runs on
    /// both sides.
    pub ci95: Option<(f64, f64)>,
    /// The verdict's one-sided p-value, after the looks of adaptive rounds and any adjustment
    /// for the number of verdicts; the verdict holds where it is at most `ALPHA`.
    pub p: Option<f64>,
    /// How many times adaptive rounds could have judged this comparison (1: fixed repeats).
    pub looks: usize,
    /// The adjustment for the number of verdicts and that number, when one was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjusted: Option<(Adjust, usize)>,
    /// Coefficients of variation of BASE's and NEW's ops/s over their repeats.
    pub base_cv: Option<f64>,
    pub new_cv: Option<f64>,
    pub verdict: Verdict,
    /// Repeats of the step (both sides) that other processes disturbed, and whether they were
    /// left out of the figures.
    pub disturbed: usize,
    pub disturbed_excluded: bool,
    /// The most rounds the experiment would run (adaptive repeats' `max`), when its runs say.
    pub max_rounds: Option<usize>,
    /// Each cost figure's verdict (cpu/o, wKB/o, r/o, rKB/o), judged as ops/s is.
    pub costs: Vec<costs::CostVerdict>,
    /// NEW / BASE of the medians of cpu/o, wKB/o and r/o (`None` where unknown or zero).
    pub cpu_ratio: Option<f64>,
    pub write_kb_ratio: Option<f64>,
    pub reads_ratio: Option<f64>,
    /// The engine's exact version in NEW's runs (a release comparison's "ver").
    pub new_version: String,
    /// How the hosts of the two sides' runs differ, when they do (the same line `compare`
    /// prints as a warning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_difference: Option<String>,
}

/// The geometric mean of positive figures (0 where one is not).
fn geometric_mean(xs: &[f64]) -> f64 {
    if xs.iter().any(|x| *x <= 0.0) {
        return 0.0;
    }
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

/// The coefficient of variation (sample standard deviation over mean); `None` for fewer than
/// two values or a mean of zero.
pub fn cv(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 || mean == 0.0 {
        return None;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean.abs())
}

fn figure_ratio(
    base: &[&StepSummary],
    new: &[&StepSummary],
    f: fn(&StepSummary) -> Option<f64>,
) -> Option<f64> {
    let b = f(&median_step(base))?;
    let n = f(&median_step(new))?;
    (b > 0.0).then_some(n / b)
}

/// How many times adaptive rounds could judge a comparison of these runs: once a round from
/// the first with `MIN_REPEATS` runs a side to the last (a run recorded before its
/// experiment's `min` was, counts from `MIN_REPEATS`); 1 for fixed repeats.
fn looks(base: &[&LoadedRun], new: &[&LoadedRun]) -> usize {
    let rounds = |r: &&LoadedRun| {
        let e = r.manifest.experiment.as_ref()?;
        let first = e.min_repeats.unwrap_or(MIN_REPEATS).max(MIN_REPEATS);
        Some((e.max_repeats? + 1).saturating_sub(first).max(1))
    };
    base.iter().chain(new).filter_map(rounds).max().unwrap_or(1)
}

/// The experiment's most rounds, when both sides' runs ran under adaptive repeats.
fn max_rounds(base: &[&LoadedRun], new: &[&LoadedRun]) -> Option<usize> {
    let max = |runs: &[&LoadedRun]| {
        runs.iter()
            .filter_map(|r| r.manifest.experiment.as_ref()?.max_repeats)
            .max()
    };
    max(base).max(max(new))
}

impl Row {
    /// The verdict as the tables print it: an undecided step that ran its experiment's most
    /// rounds is "undecided at max".
    pub fn verdict_text(&self) -> String {
        let runs = self.base_ops_per_sec.len().min(self.new_ops_per_sec.len());
        let mut text = match self.max_rounds {
            Some(max) if self.verdict == Verdict::Undecided && runs >= max => "undecided at max",
            _ => self.verdict.text(),
        }
        .to_string();
        if let Some((how, of)) = self.adjusted {
            text = format!("{text} ({} of {of})", how.text());
        }
        match (self.disturbed, self.disturbed_excluded) {
            (0, _) => text,
            (n, false) => format!("{text}, {n} disturbed"),
            (n, true) => format!("{text}, {n} disturbed left out"),
        }
    }
}

/// How a comparison judges: the band, whether repeats of a step that other processes
/// disturbed are left out, and how its verdicts are adjusted for their number.
#[derive(Clone, Copy, Debug)]
pub struct Judge {
    pub threshold: f64,
    pub exclude_disturbed: bool,
    pub adjust: Adjust,
}

impl Judge {
    pub fn new(threshold: f64) -> Judge {
        Judge {
            threshold,
            exclude_disturbed: false,
            adjust: Adjust::None,
        }
    }
}

/// A step's repeats, split into those kept and the number of disturbed ones.
fn kept<'a>(steps: Vec<&'a StepSummary>, judge: &Judge) -> (Vec<&'a StepSummary>, usize) {
    let disturbed = |s: &&StepSummary| s.host.disturbance(s.window_seconds).is_some();
    let n = steps.iter().filter(|s| disturbed(s)).count();
    if judge.exclude_disturbed {
        (steps.into_iter().filter(|s| !disturbed(s)).collect(), n)
    } else {
        (steps, n)
    }
}

/// Every step NEW and BASE share, per client count.
pub fn compare<'a>(base: &Side<'a>, new: &Side<'a>, judge: &Judge) -> Vec<Row> {
    let threshold = judge.threshold;
    let bs = series_of(&base.runs);
    let ns = series_of(&new.runs);
    let mut rows = Vec::new();
    for step in step_order_of(&base.runs) {
        for b in &bs {
            let Some(n) = ns
                .iter()
                .find(|n| n.workload == b.workload && n.clients == b.clients)
            else {
                continue;
            };
            let (bsteps, bd) = kept(b.step(&step), judge);
            let (nsteps, nd) = kept(n.step(&step), judge);
            // A repeat that measured nothing (a step without operations, as flush; or one
            // that failed to run any) has no throughput to judge.
            let timed = |v: Vec<&'a StepSummary>| -> Vec<&'a StepSummary> {
                v.into_iter().filter(|s| s.ops > 0).collect()
            };
            let (bsteps, nsteps) = (timed(bsteps), timed(nsteps));
            if bsteps.is_empty() || nsteps.is_empty() {
                continue;
            }
            let bops: Vec<f64> = bsteps.iter().map(|s| s.ops_per_sec).collect();
            let nops: Vec<f64> = nsteps.iter().map(|s| s.ops_per_sec).collect();
            let test = LogRatio::of(&bops, &nops);
            let looks = looks(&b.runs, &n.runs);
            let enough = bops.len() >= MIN_REPEATS && nops.len() >= MIN_REPEATS;
            let (verdict, p) = match test {
                Some(t) if enough => {
                    let (v, p) = log_ratio::decide(t.nearest(threshold), looks);
                    (v, Some(p))
                }
                _ => (Verdict::NoVerdict, None),
            };
            rows.push(Row {
                workload: b.workload.clone(),
                step: step.clone(),
                clients: b.clients,
                base: base.label.clone(),
                new: new.label.clone(),
                ratio: test.map_or_else(
                    || geometric_mean(&nops) / geometric_mean(&bops),
                    |t| t.ratio(),
                ),
                ci95: test.map(|t| t.interval(ALPHA)),
                p,
                looks,
                adjusted: None,
                base_cv: cv(&bops),
                new_cv: cv(&nops),
                verdict,
                max_rounds: max_rounds(&b.runs, &n.runs),
                costs: costs::judge(&bsteps, &nsteps, threshold, looks, MIN_REPEATS),
                cpu_ratio: figure_ratio(&bsteps, &nsteps, |s| s.per_op.cpu_us),
                write_kb_ratio: figure_ratio(&bsteps, &nsteps, |s| s.per_op.write_kb),
                reads_ratio: figure_ratio(&bsteps, &nsteps, |s| s.per_op.reads),
                disturbed: bd + nd,
                disturbed_excluded: judge.exclude_disturbed,
                base_ops_per_sec: bops,
                new_ops_per_sec: nops,
                new_version: n
                    .runs
                    .first()
                    .map(|r| r.manifest.setup.engine_version.clone())
                    .unwrap_or_default(),
                host_difference: None,
            });
        }
    }
    rows
}

/// Which setup each other setup is compared with, as (base, new) indexes into `labels`. With no
/// base, the first setup is the base of every other; with a setup's name, that setup. With a
/// name no setup has but that begins some names, as a version does (`8.0.0` in
/// `8.0.0.leveled.buffered`), each configuration has its own base: `8.6.7.leveled.buffered` is
/// compared with `8.0.0.leveled.buffered`, `8.6.7.universal` with `8.0.0.universal`.
pub fn pairs(labels: &[&str], base: Option<&str>) -> anyhow::Result<Vec<(usize, usize)>> {
    let others = |b: usize| {
        (0..labels.len())
            .filter(move |&i| i != b)
            .map(move |i| (b, i))
    };
    let Some(base) = base else {
        return Ok(others(0).collect());
    };
    if let Some(b) = labels.iter().position(|l| *l == base) {
        return Ok(others(b).collect());
    }
    let prefix = format!("{base}.");
    let mut pairs = Vec::new();
    for (b, label) in labels.iter().enumerate() {
        let Some(rest) = label.strip_prefix(&prefix) else {
            continue;
        };
        let suffix = format!(".{rest}");
        pairs.extend(
            labels
                .iter()
                .enumerate()
                .filter(|&(i, l)| i != b && l.ends_with(&suffix))
                .map(|(i, _)| (b, i)),
        );
    }
    if pairs.is_empty() {
        anyhow::bail!(
            "--base: no setup `{base}`, and none named `{base}.…`; the setups are: {}",
            labels.join(", ")
        );
    }
    Ok(pairs)
}

/// Each setup against its base, as `pairs` chose them.
pub struct Against<'a> {
    pub rows: Vec<Row>,
    /// (base, new) indexes into the sides.
    pub pairs: Vec<(usize, usize)>,
    /// The bases' names, in order.
    pub bases: Vec<&'a str>,
    /// Each comparison whose runs came from hosts that differ, and how.
    pub host_differences: Vec<String>,
    /// How many tests the rows hold (a verdict or "undecided", of ops/s and of the costs): the
    /// number a reader weighs the verdicts' 2.5% against.
    pub verdicts: usize,
    /// How the verdicts were adjusted for that number.
    pub adjust: Adjust,
}

/// How the hosts of two sides' runs differ (the first difference found between any two of
/// them), as a line naming the comparison; `None` when every run's host is alike.
pub fn host_difference(base: &Side, new: &Side) -> Option<String> {
    let hosts: Vec<&crate::result::HostFacts> = base
        .runs
        .iter()
        .chain(&new.runs)
        .map(|r| &r.manifest.host)
        .collect();
    let first = hosts.first()?;
    let what = hosts
        .iter()
        .map(|h| first.differences(h))
        .find(|d| !d.is_empty())?;
    Some(format!(
        "{} vs {}: the runs come from hosts that differ ({})",
        new.label,
        base.label,
        what.join(", ")
    ))
}

/// Each setup against its base as `pairs` chooses them. `empty` hears of each setup with no
/// step in common with its base.
pub fn against_bases<'a>(
    sides: &'a [Side],
    base: Option<&str>,
    judge: &Judge,
    mut empty: impl FnMut(&Side, &Side),
) -> anyhow::Result<Against<'a>> {
    let labels: Vec<&str> = sides.iter().map(|s| s.label.as_str()).collect();
    let pairs = pairs(&labels, base)?;
    let mut rows = Vec::new();
    let mut host_differences = Vec::new();
    for &(b, n) in &pairs {
        let mut r = compare(&sides[b], &sides[n], judge);
        if r.is_empty() {
            empty(&sides[b], &sides[n]);
        }
        if let Some(d) = host_difference(&sides[b], &sides[n]) {
            r.iter_mut()
                .for_each(|row| row.host_difference = Some(d.clone()));
            host_differences.push(d);
        }
        rows.extend(r);
    }
    let verdicts = adjust::apply(&mut rows, judge.adjust);
    let mut bases: Vec<&str> = pairs
        .iter()
        .map(|&(b, _)| sides[b].label.as_str())
        .collect();
    bases.dedup();
    Ok(Against {
        rows,
        pairs,
        bases,
        host_differences,
        verdicts,
        adjust: judge.adjust,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_as_base_pairs_each_configuration_with_its_own() {
        let labels = ["8.0.0.lev", "8.6.7.lev", "8.0.0.uni", "8.6.7.uni", "other"];
        assert_eq!(pairs(&labels, Some("8.0.0")).unwrap(), vec![(0, 1), (2, 3)]);
        assert_eq!(pairs(&labels, Some("8.6.7.uni")).unwrap().len(), 4);
        assert_eq!(pairs(&labels, None).unwrap()[0], (0, 1));
        let e = pairs(&labels, Some("9.0")).unwrap_err().to_string();
        assert!(
            e.contains("no setup `9.0`") && e.contains("8.6.7.uni"),
            "{e}"
        );
    }

    #[test]
    fn verdicts() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let same = [100.2, 99.8, 100.9, 99.1, 100.0];
        let faster = [110.0, 111.0, 109.0, 110.5, 109.5];
        let judge = |b: &[f64], n: &[f64]| {
            let t = LogRatio::of(b, n).unwrap();
            (log_ratio::decide(t.nearest(0.03), 1).0, t.interval(ALPHA))
        };
        let (v, (lo, hi)) = judge(&base, &faster);
        assert!(lo > 1.05 && hi < 1.15, "{lo} {hi}");
        assert_eq!(v, Verdict::Faster);
        assert_eq!(judge(&faster, &base).0, Verdict::Slower);
        let (v, (lo, hi)) = judge(&base, &same);
        assert!(lo <= 1.0 && hi >= 1.0, "{lo} {hi}");
        assert_eq!(v, Verdict::Same);
        // Three runs a side 10% apart: the interval is wider than the band either way.
        let (v, _) = judge(&[90.0, 100.0, 110.0], &[95.0, 105.0, 115.0]);
        assert_eq!(v, Verdict::Undecided);
        assert!(Verdict::Same.decided() && !Verdict::Undecided.decided());
    }

    /// A step is judged on the repeats that measured something, whichever they are: one base
    /// repeat without operations leaves two, too few for a verdict, and the step still has
    /// its row.
    #[test]
    fn a_repeat_without_operations_is_left_out_of_the_judgement() {
        let run = |setup: &str, ops: u64| LoadedRun {
            path: format!("{setup}{ops}").into(),
            manifest: crate::result::RunManifest {
                setup: crate::result::SetupRecord {
                    name: setup.into(),
                    ..Default::default()
                },
                workload: "w".into(),
                clients: 1,
                status: crate::result::RunStatus::Finished,
                ..Default::default()
            },
            steps: vec![StepSummary {
                step: "s".into(),
                ops,
                ops_per_sec: ops as f64,
                ..Default::default()
            }],
        };
        let new = [run("b", 100), run("b", 102), run("b", 99)];
        fn side<'a>(label: &str, runs: &'a [LoadedRun]) -> Side<'a> {
            Side {
                label: label.into(),
                runs: runs.iter().collect(),
            }
        }
        // The run without operations first (where it was the only one looked at), then second.
        for base in [
            [run("a", 0), run("a", 100), run("a", 101)],
            [run("a", 100), run("a", 0), run("a", 101)],
        ] {
            let rows = compare(&side("a", &base), &side("b", &new), &Judge::new(0.03));
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].base_ops_per_sec, vec![100.0, 101.0]);
            assert_eq!(rows[0].verdict, Verdict::NoVerdict);
        }
        // A failed run is left out of the sides, as adaptive rounds leave it out.
        let mut failed = run("b", 50);
        failed.manifest.status = crate::result::RunStatus::Failed;
        let all = [run("b", 100), failed];
        let operands = [("x".to_string(), &all[..])];
        let s = sides(&operands);
        assert_eq!(s[0].runs.len(), 1);
    }

    #[test]
    fn spread() {
        assert_eq!(cv(&[5.0]), None);
        let c = cv(&[90.0, 100.0, 110.0]).unwrap();
        assert!((c - 0.1).abs() < 1e-12, "{c}");
    }
}
