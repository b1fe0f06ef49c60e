//! Whether a setup is faster than its base, beyond the noise of repeats: per step and client
//! count, the ratio of throughputs, its t interval, and a verdict against a threshold band.
//! `fathom compare` prints it; an experiment with adaptive repeats runs rounds until each
//! compared step has one.

pub mod adjust;
pub mod boundary;
mod boundary_table;
pub mod costs;
pub mod design;
pub mod gate;
pub mod history;
pub mod log_ratio;
#[cfg(test)]
mod simulation;

pub use adjust::Adjust;
pub use boundary::Looks;
pub use design::{Design, Layout, Placed, Timing};
pub use log_ratio::{LogRatio, ALPHA};

use fathom_schema::group::{series_of, step_order_of, Series};
use fathom_schema::result::StepSummary;
use fathom_schema::store::LoadedRun;
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
    run.manifest.status != fathom_schema::result::RunStatus::Failed
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    Same,
    Undecided,
    /// Fewer than `MIN_REPEATS` runs on a side: noise cannot be told from change.
    #[default]
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
#[derive(Clone, Debug, Default, Serialize)]
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
    /// The p-value a family of verdicts is adjusted with (`LogRatio::nearest`), scaled for
    /// the look as `p` is.
    #[serde(skip)]
    pub p_family: Option<f64>,
    /// How many times adaptive rounds could have judged this comparison (1: fixed repeats).
    pub looks: usize,
    /// The one-sided level the verdict was held to at its look (`ALPHA` for fixed repeats).
    pub level: f64,
    /// Paired by round (a one-sample t on the rounds' log ratios) or unpaired (Welch).
    pub design: Design,
    /// The runs of the base's history a `Design::History` verdict was judged against.
    #[serde(skip_serializing_if = "is_zero")]
    pub history_runs: usize,
    /// Repeats left out of a paired test because the other side has none in their round.
    #[serde(skip_serializing_if = "is_zero")]
    pub unpaired_left_out: usize,
    /// Whether the sides' runs interleave in time, or ran apart (another session).
    pub timing: Timing,
    /// The order the setups ran in within each round, as the runs recorded it (`None`: runs
    /// from before fathom recorded it, or from no experiment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_order: Option<String>,
    /// What going second in a round did to a run's ops/s, where the rounds took both orders:
    /// the ratio second/first and its 95% interval (`Layout::order_effect`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_effect: Option<(f64, f64, f64)>,
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
    /// NEW / BASE of the geometric means of cpu/o, wKB/o and r/o, as their verdicts judge
    /// them (`None` where unknown or zero).
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

fn is_zero(n: &usize) -> bool {
    *n == 0
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

/// The rounds at which adaptive rounds could judge a comparison of these runs: from the first
/// with `MIN_REPEATS` runs a side (or the experiment's `min`, when more) to its `max`; once for
/// fixed repeats. Runs of one experiment resumed with a larger `max` count the widest.
fn looks(base: &[&LoadedRun], new: &[&LoadedRun]) -> Looks {
    let rounds = |r: &&LoadedRun| {
        let e = r.manifest.experiment.as_ref()?;
        let first = e.min_repeats.unwrap_or(MIN_REPEATS).max(MIN_REPEATS);
        Some((first, e.max_repeats?.max(first)))
    };
    let all: Vec<(usize, usize)> = base.iter().chain(new).filter_map(rounds).collect();
    match (all.iter().map(|r| r.0).min(), all.iter().map(|r| r.1).max()) {
        (Some(first), Some(last)) if last > first => Looks { first, last },
        _ => Looks::ONCE,
    }
}

/// The order the setups of these runs ran in within their rounds, when every run says and
/// they agree.
fn setup_order(runs: &[&LoadedRun]) -> Option<String> {
    let orders: Vec<Option<&String>> = runs
        .iter()
        .map(|r| r.manifest.experiment.as_ref()?.setup_order.as_ref())
        .collect();
    let first = (*orders.first()?)?;
    orders
        .iter()
        .all(|o| *o == Some(first))
        .then(|| first.clone())
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
        if self.design == Design::History {
            text += ", against history";
        } else if self.timing == Timing::Apart && self.verdict != Verdict::NoVerdict {
            text += ", runs apart";
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
#[derive(Clone, Debug)]
pub struct Judge {
    pub threshold: f64,
    pub exclude_disturbed: bool,
    pub adjust: Adjust,
    /// Parameters the comparison is across (`--across num_keys`): sides that differ in them
    /// are compared all the same.
    pub across: Vec<String>,
    /// The base's history, for sides that ran apart in time.
    pub history: history::History,
}

impl Judge {
    pub fn new(threshold: f64) -> Judge {
        Judge {
            threshold,
            exclude_disturbed: false,
            adjust: Adjust::None,
            across: Vec::new(),
            history: history::History::default(),
        }
    }
}

/// A comparison of sides that ran apart, judged again against the base's history where the
/// judge has one holding `history::MIN_HISTORY` runs of the base's series before NEW's first:
/// its ratio, interval and verdict then say how NEW's runs sit among the base's sessions.
fn against_history(row: &mut Row, base: &[Repeat], new: &[Repeat], step: &str, judge: &Judge) {
    let Some(source) = &judge.history.0 else {
        return;
    };
    let (Some(b), Some(first)) = (
        base.first(),
        new.iter()
            .filter_map(|(r, _)| Placed::of(&r.manifest).span.map(|s| s.0))
            .min(),
    ) else {
        return;
    };
    let mut past = source.before(&b.0.manifest, step, first);
    let from = past.len().saturating_sub(history::MOST_HISTORY);
    past.drain(..from);
    let Some(t) = LogRatio::against_history(&past, &row.new_ops_per_sec) else {
        return;
    };
    let (verdict, p, family) = log_ratio::decide(t.nearest(judge.threshold), ALPHA);
    row.design = Design::History;
    row.history_runs = past.len();
    row.ratio = t.ratio();
    row.ci95 = Some(t.interval(ALPHA));
    row.verdict = if row.new_ops_per_sec.len() >= MIN_REPEATS {
        verdict
    } else {
        Verdict::NoVerdict
    };
    row.p = Some(p);
    row.p_family = Some(family);
    row.looks = 1;
    row.level = ALPHA;
}

/// A repeat of a step: its run and its summary.
type Repeat<'a> = (&'a LoadedRun, &'a StepSummary);

/// A step's repeats, split into those kept and the number of disturbed ones.
fn kept<'a>(steps: Vec<Repeat<'a>>, judge: &Judge) -> (Vec<Repeat<'a>>, usize) {
    let disturbed = |s: &Repeat| s.1.host.disturbance(s.1.window_seconds).is_some();
    let n = steps.iter().filter(|s| disturbed(s)).count();
    if judge.exclude_disturbed {
        (steps.into_iter().filter(|s| !disturbed(s)).collect(), n)
    } else {
        (steps, n)
    }
}

/// Parameters two sides may differ in and still be compared: which steps ran (the steps both
/// ran are compared) besides those that never define a run (`group::NOT_DEFINING`).
const MAY_DIFFER: &[&str] = &["steps"];

/// NEW's series a BASE series is compared with: the one of the same workload, client count and
/// parameters (which steps ran aside); else, of the same workload and client count, the one
/// whose parameters differ least, with the differences. `None`: no series of that workload
/// and client count.
fn counterpart<'s, 'a>(
    b: &Series<'a>,
    ns: &'s [Series<'a>],
) -> Option<(&'s Series<'a>, Vec<fathom_schema::group::Difference>)> {
    ns.iter()
        .filter(|n| n.workload == b.workload && n.clients == b.clients)
        .map(|n| {
            let mut d = fathom_schema::group::param_differences(&b.params, &n.params);
            d.retain(|(k, _, _)| !MAY_DIFFER.contains(&k.as_str()));
            (n, d)
        })
        .min_by_key(|(_, d)| d.len())
}

/// Whether every run of both sides ran in one experiment (one definition), whose setups may
/// carry parameters of their own: there, parameters that differ are the setups' own.
fn one_experiment(base: &Side, new: &Side) -> bool {
    let definition = |r: &&LoadedRun| {
        r.manifest
            .experiment
            .as_ref()
            .map(|e| (e.name.clone(), e.definition.clone()))
    };
    let mut all = base.runs.iter().chain(&new.runs).map(definition);
    let Some(Some(first)) = all.next() else {
        return false;
    };
    all.all(|d| d.as_ref() == Some(&first))
}

/// Why two sides cannot be compared as they are: series of one workload and client count whose
/// parameters differ, outside one experiment and beyond what `Judge::across` allows.
pub fn mismatch(base: &Side, new: &Side, judge: &Judge) -> Option<String> {
    if one_experiment(base, new) {
        return None;
    }
    let (bs, ns) = (series_of(&base.runs), series_of(&new.runs));
    for b in &bs {
        let Some((_, differ)) = counterpart(b, &ns) else {
            continue;
        };
        let beyond: Vec<String> = differ
            .iter()
            .filter(|(k, _, _)| !judge.across.contains(k))
            .map(|(k, a, n)| format!("{k} {a} against {n}"))
            .collect();
        if !beyond.is_empty() {
            return Some(format!(
                "{} and {} ran {} at {} with different parameters ({}): their figures \
                 measure different things; compare runs of one definition, or name what the \
                 comparison is across with --across {}",
                base.label,
                new.label,
                b.workload,
                fathom_api::units::clients(b.clients),
                beyond.join(", "),
                differ
                    .iter()
                    .filter(|(k, _, _)| !judge.across.contains(k))
                    .map(|(k, _, _)| k.as_str())
                    .collect::<Vec<_>>()
                    .join(" --across ")
            ));
        }
    }
    None
}

/// Why one side cannot be judged as one: runs of one setup name whose settings differ (a
/// setting naming a process aside, `pid`).
pub fn mixed_settings(side: &Side) -> Option<String> {
    let settings = |r: &LoadedRun| {
        let mut s = r.manifest.setup.settings.clone();
        s.retain(|k, _| !fathom_schema::group::NOT_DEFINING_SETTINGS.contains(&k.as_str()));
        s
    };
    let first = side.runs.first()?;
    let a = settings(first);
    side.runs.iter().find_map(|r| {
        let b = settings(r);
        let differ = fathom_schema::group::param_differences(&a, &b);
        (!differ.is_empty()).then(|| {
            let what: Vec<String> = differ
                .iter()
                .map(|(k, x, y)| {
                    format!(
                        "{k} {x} in {} against {y} in {}",
                        first.path.display(),
                        r.path.display()
                    )
                })
                .collect();
            format!(
                "{}: its runs' settings differ ({}): a side is one setup; give the runs \
                 different setup names",
                side.label,
                what.join(", ")
            )
        })
    })
}

/// Every step NEW and BASE share, per client count (and parameters: each BASE series with its
/// counterpart in NEW).
pub fn compare<'a>(base: &Side<'a>, new: &Side<'a>, judge: &Judge) -> Vec<Row> {
    let bs = series_of(&base.runs);
    let ns = series_of(&new.runs);
    let mut rows = Vec::new();
    for step in step_order_of(&base.runs) {
        for b in &bs {
            let Some((n, _)) = counterpart(b, &ns) else {
                continue;
            };
            let (bsteps, bd) = kept(b.step_runs(&step), judge);
            let (nsteps, nd) = kept(n.step_runs(&step), judge);
            if bsteps.is_empty() || nsteps.is_empty() {
                continue;
            }
            let mut row = judge_step(&bsteps, &nsteps, looks(&b.runs, &n.runs), judge);
            if row.timing == Timing::Apart {
                against_history(&mut row, &bsteps, &nsteps, &step, judge);
            }
            row.workload = b.workload.clone();
            row.step = step.clone();
            row.clients = b.clients;
            row.base = base.label.clone();
            row.new = new.label.clone();
            row.disturbed = bd + nd;
            row.max_rounds = max_rounds(&b.runs, &n.runs);
            row.setup_order =
                setup_order(&b.runs).filter(|o| Some(o) == setup_order(&n.runs).as_ref());
            row.new_version = n
                .runs
                .first()
                .map(|r| r.manifest.setup.engine_version.clone())
                .unwrap_or_default();
            rows.push(row);
        }
    }
    rows
}

/// One step's repeats judged: its throughput and costs, paired by round where the design is.
/// A repeat that measured nothing (a step without operations, as flush; or one that failed to
/// run any) has no throughput to judge and is left out first.
fn judge_step<'a>(base: &[Repeat<'a>], new: &[Repeat<'a>], looks: Looks, judge: &Judge) -> Row {
    let timed = |v: &[Repeat<'a>]| -> Vec<Repeat<'a>> {
        v.iter().copied().filter(|(_, s)| s.ops > 0).collect()
    };
    let (b, n) = (timed(base), timed(new));
    let placed =
        |v: &[Repeat]| -> Vec<Placed> { v.iter().map(|x| Placed::of(&x.0.manifest)).collect() };
    let (bplaced, nplaced) = (placed(&b), placed(&n));
    let layout = design::layout(&bplaced, &nplaced, MIN_REPEATS);
    let bsteps: Vec<&StepSummary> = b.iter().map(|x| x.1).collect();
    let nsteps: Vec<&StepSummary> = n.iter().map(|x| x.1).collect();
    let bops: Vec<f64> = bsteps.iter().map(|s| s.ops_per_sec).collect();
    let nops: Vec<f64> = nsteps.iter().map(|s| s.ops_per_sec).collect();
    let rounds = layout.rounds(bops.len(), nops.len());
    let level = looks.level(rounds);
    let test = if bops.is_empty() || nops.is_empty() {
        None
    } else {
        layout.test(&bops, &nops)
    };
    let (verdict, p, p_family) = match test {
        Some(t) if rounds >= MIN_REPEATS => {
            let (v, p, family) = log_ratio::decide(t.nearest(judge.threshold), level);
            (v, Some(p), Some(family))
        }
        _ => (Verdict::NoVerdict, None, None),
    };
    let costs = costs::judge(
        &bsteps,
        &nsteps,
        &layout,
        judge.threshold,
        level,
        MIN_REPEATS,
    );
    let cost_ratio = |name: &str| {
        costs
            .iter()
            .find(|c| c.figure == name)
            .and_then(|c| c.ratio)
    };
    let order_effect = layout.order_effect(&bops, &nops, (&bplaced, &nplaced));
    Row {
        order_effect,
        ratio: test.map_or_else(
            || geometric_mean(&nops) / geometric_mean(&bops),
            |t| t.ratio(),
        ),
        ci95: test.map(|t| t.interval(ALPHA)),
        p,
        p_family,
        looks: looks.count(),
        level,
        design: layout.design,
        unpaired_left_out: layout.unpaired_left_out,
        timing: layout.timing,
        base_cv: cv(&bops),
        new_cv: cv(&nops),
        verdict,
        disturbed_excluded: judge.exclude_disturbed,
        cpu_ratio: cost_ratio("cpu/o"),
        write_kb_ratio: cost_ratio("wKB/o"),
        reads_ratio: cost_ratio("r/o"),
        costs,
        base_ops_per_sec: bops,
        new_ops_per_sec: nops,
        ..Row::default()
    }
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
    let hosts: Vec<&fathom_schema::result::HostFacts> = base
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
    for s in sides {
        if let Some(why) = mixed_settings(s) {
            anyhow::bail!("{why}");
        }
    }
    for &(b, n) in &pairs {
        if let Some(why) = mismatch(&sides[b], &sides[n], judge) {
            anyhow::bail!("{why}");
        }
    }
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
            (
                log_ratio::decide(t.nearest(0.03), ALPHA).0,
                t.interval(ALPHA),
            )
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
            manifest: fathom_schema::result::RunManifest {
                setup: fathom_schema::result::SetupRecord {
                    name: setup.into(),
                    ..Default::default()
                },
                workload: "w".into(),
                clients: 1,
                status: fathom_schema::result::RunStatus::Finished,
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
        failed.manifest.status = fathom_schema::result::RunStatus::Failed;
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
