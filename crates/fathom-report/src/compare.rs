//! Relative throughput against a base (seed 004's "QPS for my version / QPS for the base"):
//! per step and client count, the ratio of medians, the change in cpu/o, wKB/o and r/o, and
//! with repeats a bootstrap confidence interval and a verdict that accounts for noise.

use crate::group::{median, median_step, series_of, step_order_of};
use crate::iostat;
use crate::model::{Model, Section, Titled};
use crate::table::{Cell, Style, Table};
use crate::ReportOptions;
use fathom_core::result::StepSummary;
use fathom_core::store::LoadedRun;
use serde::Serialize;

/// Bootstrap resamples per interval.
const RESAMPLES: usize = 10_000;
/// Runs each side needs for a verdict: with fewer, the bootstrap interval of a median is too
/// coarse (two runs against two beat each other by chance one time in three).
pub const MIN_REPEATS: usize = 3;

/// One side of a comparison: a setup's runs from one results directory.
pub struct Side<'a> {
    pub label: String,
    pub runs: Vec<&'a LoadedRun>,
}

/// Splits each operand's runs by setup name, in order; labels are the setup names, prefixed
/// with the operand when two operands hold the same name.
pub fn sides<'a>(operands: &[(String, &'a [LoadedRun])]) -> Vec<Side<'a>> {
    let mut out: Vec<(String, String, Vec<&LoadedRun>)> = Vec::new();
    for (operand, runs) in operands {
        for r in runs.iter() {
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

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    WithinNoise,
    /// Fewer than `MIN_REPEATS` runs on a side: noise cannot be told from change.
    NoVerdict,
}

impl Verdict {
    pub fn text(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "within noise",
            Verdict::NoVerdict => "no verdict",
        }
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
    /// median(NEW) / median(BASE).
    pub ratio: f64,
    /// 95% bootstrap interval of the ratio; `None` without repeats on both sides.
    pub ci95: Option<(f64, f64)>,
    pub verdict: Verdict,
    /// NEW / BASE of the medians of cpu/o, wKB/o and r/o (`None` where unknown or zero).
    pub cpu_ratio: Option<f64>,
    pub write_kb_ratio: Option<f64>,
    pub reads_ratio: Option<f64>,
    /// The engine's exact version in NEW's runs (a release comparison's "ver").
    pub new_version: String,
}

/// A small deterministic generator (SplitMix64), so a report prints the same interval twice.
struct SplitMix(u64);

impl SplitMix {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> 11) as f64 / (1u64 << 53) as f64 * n as f64) as usize
    }
}

/// The 95% percentile-bootstrap interval of median(new) / median(base).
pub fn bootstrap_ratio(base: &[f64], new: &[f64]) -> (f64, f64) {
    let mut rng = SplitMix(0x5eed);
    let mut draw = |v: &[f64]| {
        let sample: Vec<f64> = (0..v.len()).map(|_| v[rng.below(v.len())]).collect();
        median(&sample)
    };
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let b = draw(base);
            draw(new) / b
        })
        .filter(|r| r.is_finite())
        .collect();
    ratios.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

/// The verdict: a change counts when the interval excludes 1 and the median ratio is beyond
/// the threshold; otherwise it is within noise. Without repeats there is no verdict.
pub fn verdict(ratio: f64, ci: Option<(f64, f64)>, threshold: f64) -> Verdict {
    match ci {
        None => Verdict::NoVerdict,
        Some((lo, _)) if lo > 1.0 && ratio >= 1.0 + threshold => Verdict::Faster,
        Some((_, hi)) if hi < 1.0 && ratio <= 1.0 - threshold => Verdict::Slower,
        Some(_) => Verdict::WithinNoise,
    }
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

/// Every step NEW and BASE share, per client count.
pub fn compare(base: &Side, new: &Side, threshold: f64) -> Vec<Row> {
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
            let (bsteps, nsteps) = (b.step(&step), n.step(&step));
            if bsteps.is_empty() || nsteps.is_empty() || bsteps[0].ops == 0 {
                continue;
            }
            let bops: Vec<f64> = bsteps.iter().map(|s| s.ops_per_sec).collect();
            let nops: Vec<f64> = nsteps.iter().map(|s| s.ops_per_sec).collect();
            let ratio = median(&nops) / median(&bops);
            let ci = (bops.len() > 1 && nops.len() > 1).then(|| bootstrap_ratio(&bops, &nops));
            rows.push(Row {
                workload: b.workload.clone(),
                step: step.clone(),
                clients: b.clients,
                base: base.label.clone(),
                new: new.label.clone(),
                ratio,
                ci95: ci,
                verdict: if bops.len() >= MIN_REPEATS && nops.len() >= MIN_REPEATS {
                    verdict(ratio, ci, threshold)
                } else {
                    Verdict::NoVerdict
                },
                cpu_ratio: figure_ratio(&bsteps, &nsteps, |s| s.per_op.cpu_us),
                write_kb_ratio: figure_ratio(&bsteps, &nsteps, |s| s.per_op.write_kb),
                reads_ratio: figure_ratio(&bsteps, &nsteps, |s| s.per_op.reads),
                base_ops_per_sec: bops,
                new_ops_per_sec: nops,
                new_version: n
                    .runs
                    .first()
                    .map(|r| r.manifest.setup.engine_version.clone())
                    .unwrap_or_default(),
            });
        }
    }
    rows
}

pub const COLUMNS: &[&str] = &[
    "step",
    "clients",
    "base ops/s",
    "new ops/s",
    "new/base",
    "95% CI",
    "verdict",
    "cpu/o",
    "wKB/o",
    "r/o",
    "n",
    "new",
    "ver",
];

/// The comparison table; figure columns are NEW/BASE ratios of the medians.
pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(COLUMNS);
    let ratio = |x: Option<f64>| Cell::fixed(x, 2);
    for r in rows {
        t.push(vec![
            Cell::text(&r.step),
            Cell::count(r.clients as f64),
            Cell::num(median(&r.base_ops_per_sec)),
            Cell::num(median(&r.new_ops_per_sec)),
            Cell::Number(r.ratio, Style::Fixed(3)),
            r.ci95.map_or(Cell::Missing, |(lo, hi)| {
                Cell::Pair(lo, hi, Style::Fixed(3), '-')
            }),
            Cell::text(r.verdict.text()),
            ratio(r.cpu_ratio),
            ratio(r.write_kb_ratio),
            ratio(r.reads_ratio),
            Cell::Pair(
                r.base_ops_per_sec.len() as f64,
                r.new_ops_per_sec.len() as f64,
                Style::Fixed(0),
                '/',
            ),
            Cell::text(&r.new),
            Cell::text(&r.new_version),
        ]);
    }
    t
}

/// How to read the table.
pub fn legend(base: &str, threshold: f64) -> String {
    format!(
        "base: {base}. new/base: ratio of median ops/s; 95% CI: percentile bootstrap of that ratio \
         ({RESAMPLES} resamples); verdict: faster or slower when the interval excludes 1 and the \
         ratio is beyond ±{:.1}%, else within noise; with fewer than {MIN_REPEATS} runs on a side, no verdict. \
         cpu/o, wKB/o, r/o: new/base of the medians. n: runs base/new.\n",
        threshold * 100.0
    )
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
}

/// Each setup against its base as `pairs` chooses them. `empty` hears of each setup with no
/// step in common with its base.
pub fn against_bases<'a>(
    sides: &'a [Side],
    base: Option<&str>,
    threshold: f64,
    mut empty: impl FnMut(&Side, &Side),
) -> anyhow::Result<Against<'a>> {
    let labels: Vec<&str> = sides.iter().map(|s| s.label.as_str()).collect();
    let pairs = pairs(&labels, base)?;
    let mut rows = Vec::new();
    for &(b, n) in &pairs {
        let r = compare(&sides[b], &sides[n], threshold);
        if r.is_empty() {
            empty(&sides[b], &sides[n]);
        }
        rows.extend(r);
    }
    let mut bases: Vec<&str> = pairs
        .iter()
        .map(|&(b, _)| sides[b].label.as_str())
        .collect();
    bases.dedup();
    Ok(Against { rows, pairs, bases })
}

/// The iostat tables of `--iostat STEP` (each setup's figures, then each against its base)
/// and their legend.
pub fn iostat_tables(
    sides: &[Side],
    pairs: &[(usize, usize)],
    step: &str,
) -> anyhow::Result<(Vec<Titled>, String)> {
    let table = iostat::table(sides, step)
        .ok_or_else(|| anyhow::anyhow!("--iostat: no setup ran a step `{step}`"))?;
    let mut tables = vec![Titled {
        title: format!("iostat during {step}"),
        table,
    }];
    if let Some(table) = iostat::relative(sides, pairs, step) {
        tables.push(Titled {
            title: format!("iostat during {step}, relative to the base"),
            table,
        });
    }
    let device = sides
        .iter()
        .flat_map(|s| s.runs.iter().flat_map(|r| r.steps.iter()))
        .find_map(|s| s.host.device.clone());
    Ok((tables, iostat::legend(step, device.as_deref())))
}

/// `fathom compare`'s model: the comparison as its main table, the iostat tables when asked
/// for, the legend as its notes; the JSON format prints the rows.
pub fn model(
    sides: &[Side],
    opts: &ReportOptions,
    empty: impl FnMut(&Side, &Side),
) -> anyhow::Result<Model> {
    let against = against_bases(sides, opts.base.as_deref(), opts.threshold, empty)?;
    if against.rows.is_empty() {
        anyhow::bail!("no steps in common between the base and the others");
    }
    let mut notes = legend(&against.bases.join(", "), opts.threshold);
    let mut sections = Vec::new();
    if let Some(step) = &opts.iostat {
        let (tables, legend) = iostat_tables(sides, &against.pairs, step)?;
        let mut section = Section::new(format!("iostat during {step}"));
        section.tables = tables;
        sections.push(section);
        notes += &legend;
    }
    if let Some(section) = crate::profile_diff::section(sides, &against.pairs)? {
        notes += section.legend.unwrap_or_default();
        sections.push(section);
    }
    Ok(Model {
        title: format!("fathom compare against {}", against.bases.join(", ")),
        runs: Vec::new(),
        main: Titled {
            title: "comparison".into(),
            table: table(&against.rows),
        },
        sections,
        intervals: None,
        notes,
        json: Some(serde_json::to_value(&against.rows)?),
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
        let (lo, hi) = bootstrap_ratio(&base, &faster);
        assert!(lo > 1.05 && hi < 1.15, "{lo} {hi}");
        assert_eq!(verdict(1.10, Some((lo, hi)), 0.03), Verdict::Faster);
        let ci = bootstrap_ratio(&faster, &base);
        assert_eq!(verdict(100.0 / 110.0, Some(ci), 0.03), Verdict::Slower);
        let ci = bootstrap_ratio(&base, &same);
        assert!(ci.0 <= 1.0 && ci.1 >= 1.0, "{ci:?}");
        assert_eq!(verdict(1.0, Some(ci), 0.03), Verdict::WithinNoise);
        // A real but small change stays within noise under the threshold.
        assert_eq!(
            verdict(1.01, Some((1.005, 1.02)), 0.03),
            Verdict::WithinNoise
        );
        assert_eq!(verdict(1.5, None, 0.03), Verdict::NoVerdict);
    }
}
