//! Adaptive repeats: an experiment runs `min` rounds, then, while a compared step's verdict is
//! undecided and `max` is not reached, another round of the cells that step needs. The
//! verdicts are `fathom compare`'s, read from the runs on disk, so a resumed experiment
//! decides as the interrupted one did.

use super::{Cell, Experiment};
use fathom_api::units::parse_threshold;
use fathom_schema::result::RunStatus;
use fathom_schema::store::{LoadedRun, MANIFEST};
use fathom_stats::verdict::{self, Side, Verdict};
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// How many rounds an experiment runs, and what decides between `min` and `max`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rounds {
    pub min: usize,
    pub max: usize,
    /// The setup (or version prefix) the others are compared with; `None`: the first setup.
    pub base: Option<String>,
    /// The band around a ratio of 1 that counts as the same.
    pub threshold: f64,
    /// The steps whose verdicts decide; empty: every step.
    pub decide: Vec<String>,
    /// Leave repeats that other processes disturbed out of the verdicts (a disturbed round
    /// then decides nothing, and another runs).
    pub exclude_disturbed: bool,
    /// How the verdicts are adjusted for their number (`adjust`): the rounds decide as the
    /// report will judge.
    pub adjust: verdict::Adjust,
}

/// The threshold `fathom compare` uses when none is given.
pub const DEFAULT_THRESHOLD: f64 = 0.03;

impl Rounds {
    pub fn adaptive(&self) -> bool {
        self.max > self.min
    }
}

/// The command line's say over an experiment's rounds (`--repeats`, `--base`, `--threshold`).
#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = "Experiments")]
pub struct RoundsInput {
    /// An experiment's repeats: a count (5), or a range (3..12) that runs at least 3 rounds and
    /// then, up to 12, another round of the cells whose comparison with the base is undecided
    /// [default: the file's `repeats`].
    #[arg(long, value_name = "N|MIN..MAX", value_parser = parse_repeats)]
    pub repeats: Option<Repeats>,
    /// The setup an experiment's other setups are compared with, as `fathom compare --base`
    /// [default: the file's `base`, else the first setup].
    #[arg(long, value_name = "SETUP")]
    pub base: Option<String>,
    /// The band of relative change that counts as the same, for an experiment's verdicts
    /// [default: the file's `threshold`, else 3%].
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold)]
    pub threshold: Option<f64>,
}

impl RoundsInput {
    /// Whether any of them was given.
    pub fn given(&self) -> bool {
        self.repeats.is_some() || self.base.is_some() || self.threshold.is_some()
    }
}

/// More repeats than this is a typo, and would make a matrix too large to hold.
const MAX_REPEATS: usize = 10_000;

/// How many rounds: at least `min`, and up to `max` while comparisons stay undecided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeats {
    pub min: usize,
    pub max: usize,
}

impl Repeats {
    fn checked(min: usize, max: usize) -> Result<Repeats, String> {
        if min == 0 || max > MAX_REPEATS || min > max {
            return Err(format!(
                "expected 1 <= min <= max <= {MAX_REPEATS}, got min {min} and max {max}"
            ));
        }
        Ok(Repeats { min, max })
    }
}

/// `5` (fixed) or `3..12` (adaptive, from 3 to 12 rounds).
pub fn parse_repeats(text: &str) -> Result<Repeats, String> {
    let count = |s: &str| s.trim().parse::<usize>().ok();
    let (min, max) = match text.split_once("..") {
        Some((a, b)) => (count(a), count(b.trim_start_matches('='))),
        None => (count(text), count(text)),
    };
    match (min, max) {
        (Some(min), Some(max)) => Repeats::checked(min, max),
        _ => Err(format!(
            "expected a count (3) or a range of rounds (3..12), got `{text}`"
        )),
    }
}

/// `repeats` in an experiment file: a count, `"3..12"`, or `{ min = 3, max = 12 }`.
impl<'de> Deserialize<'de> for Repeats {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Repeats, D::Error> {
        d.deserialize_any(TextOrNumber {
            parse: parse_repeats,
            table: Some(|t| match (t.get("min"), t.get("max"), t.len()) {
                (Some(&min), Some(&max), 2) => {
                    let count =
                        |n: i64| usize::try_from(n).map_err(|_| format!("`{n}` is not a count"));
                    Repeats::checked(count(min)?, count(max)?)
                }
                _ => Err(format!(
                    "expected {{ min = 3, max = 12 }}, two counts, got {t:?}"
                )),
            }),
            expecting: "a count (3), \"3..12\" or { min = 3, max = 12 }",
        })
    }
}

/// An experiment file's `threshold`: `"5%"` or a fraction, `0.05`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Threshold(pub f64);

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Threshold, D::Error> {
        d.deserialize_any(TextOrNumber {
            parse: |text| parse_threshold(text).map(Threshold),
            table: None,
            expecting: "a percentage (\"5%\") or a fraction (0.05)",
        })
    }
}

/// A value's table form, as `{ min = 3, max = 12 }`, and what reads it.
type Table = BTreeMap<String, i64>;
type ReadTable<T> = fn(&Table) -> Result<T, String>;

/// Reads a value written as text, or as a number read as the text it prints, through
/// `parse`; `table` reads the table form, where the value has one.
struct TextOrNumber<T> {
    parse: fn(&str) -> Result<T, String>,
    table: Option<ReadTable<T>>,
    expecting: &'static str,
}

impl<'de, T> Visitor<'de> for TextOrNumber<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        (self.parse)(text).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<T, E> {
        self.visit_str(&n.to_string())
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<T, E> {
        self.visit_str(&n.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        let Some(table) = self.table else {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        };
        let t = Table::deserialize(MapAccessDeserializer::new(map))?;
        table(&t).map_err(de::Error::custom)
    }
}

/// One compared step that is not decided yet, for the progress line.
pub struct Open {
    pub what: String,
    pub verdict: Verdict,
}

/// The first `n` comparisons, and how many more: a progress line's length.
pub fn some(open: &[Open], n: usize) -> String {
    let named: Vec<String> = open
        .iter()
        .take(n)
        .map(|o| match o.verdict {
            Verdict::Undecided => o.what.clone(),
            v => format!("{} ({})", o.what, v.text()),
        })
        .collect();
    match open.len().saturating_sub(n) {
        0 => named.join(", "),
        more => format!("{}, and {more} more", named.join(", ")),
    }
}

/// What the runs of rounds before a round leave undecided.
pub struct Pending {
    /// The cells the round runs, as (workload, clients, setup).
    pub cells: BTreeSet<(usize, usize, usize)>,
    /// The comparisons that need them.
    pub open: Vec<Open>,
}

/// What the runs of rounds before `round` leave undecided: every comparison judged as the
/// report judges it, its verdicts adjusted as the experiment's `adjust` says (a family being a
/// pair of setups and a figure, over the workloads and client counts).
pub fn undecided(exp: &Experiment, results: &Path, round: usize) -> anyhow::Result<Pending> {
    let rounds = &exp.rounds;
    let (decide_costs, decide_steps): (Vec<&String>, Vec<&String>) = rounds
        .decide
        .iter()
        .partition(|d| verdict::costs::is_figure(d));
    let judge = verdict::Judge {
        threshold: rounds.threshold,
        exclude_disturbed: rounds.exclude_disturbed,
        adjust: rounds.adjust,
        across: Vec::new(),
        history: Default::default(),
    };
    // Every comparison's rows, with the cells (workload, clients, setup) each needs.
    let mut rows: Vec<verdict::Row> = Vec::new();
    let mut needs: Vec<[(usize, usize, usize); 2]> = Vec::new();
    for w in 0..exp.workloads {
        for &c in &exp.client_counts {
            let runs = finished_runs(exp, results, round, |cell| {
                cell.workload == w && cell.clients == c
            })?;
            let sides: Vec<Side> = (0..exp.setups)
                .map(|s| Side {
                    label: exp.setup_names[s].clone(),
                    runs: runs
                        .iter()
                        .filter(|(i, _)| *i == s)
                        .map(|(_, r)| r)
                        .collect(),
                })
                .collect();
            let labels: Vec<&str> = exp.setup_names.iter().map(String::as_str).collect();
            for (b, n) in verdict::pairs(&labels, rounds.base.as_deref())? {
                if sides[b].runs.is_empty() || sides[n].runs.is_empty() {
                    continue; // every run of a side failed: nothing to decide with
                }
                for row in verdict::compare(&sides[b], &sides[n], &judge) {
                    rows.push(row);
                    needs.push([(w, c, b), (w, c, n)]);
                }
            }
        }
    }
    verdict::adjust::apply(&mut rows, judge.adjust);
    let steps: BTreeSet<String> = rows.iter().map(|r| r.step.clone()).collect();
    let mut need = BTreeSet::new();
    let mut open = Vec::new();
    for (row, cells) in rows.iter().zip(needs) {
        let counted = decide_steps.is_empty() || decide_steps.contains(&&row.step);
        // A cost named in `decide` must be decided too, where it can be (a figure of zero, as
        // reads of a cached step, has no verdict to wait for).
        let cost_open = row.costs.iter().any(|c| {
            c.verdict == verdict::Verdict::Undecided && decide_costs.iter().any(|d| *d == c.figure)
        });
        if counted && (!row.verdict.decided() || cost_open) {
            need.extend(cells);
            open.push(Open {
                what: format!("{} {} c{} vs {}", row.new, row.step, row.clients, row.base),
                verdict: row.verdict,
            });
        }
    }
    if let Some(d) = decide_steps
        .iter()
        .find(|d| !steps.is_empty() && !steps.contains(**d))
    {
        let figures: Vec<&str> = fathom_schema::figures::judged().map(|f| f.column).collect();
        anyhow::bail!(
            "decide: no compared step is named `{d}`, and it is no cost figure ({}); the steps \
             are {}",
            figures.join(", "),
            steps.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(Pending { cells: need, open })
}

/// The finished runs of this experiment's cells before `round` that `keep` selects, with their
/// setup's index.
fn finished_runs(
    exp: &Experiment,
    results: &Path,
    round: usize,
    keep: impl Fn(&Cell) -> bool,
) -> anyhow::Result<Vec<(usize, LoadedRun)>> {
    let mut runs = Vec::new();
    for cell in exp.cells.iter().filter(|c| c.repeat < round && keep(c)) {
        let dir = results.join(exp.cell_name(cell));
        if !dir.join(MANIFEST).exists() {
            continue;
        }
        let run = LoadedRun::load(&dir)?;
        let mine = run
            .manifest
            .experiment
            .as_ref()
            .is_some_and(|e| e.fingerprint == exp.fingerprint(cell));
        if mine && run.manifest.status == RunStatus::Finished {
            runs.push((cell.setup, run));
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_read_as_a_count_or_a_range() {
        let r = |min, max| Ok(Repeats { min, max });
        assert_eq!(parse_repeats("5"), r(5, 5));
        assert_eq!(parse_repeats("3..12"), r(3, 12));
        assert!(parse_repeats("12..3").unwrap_err().contains("min <= max"));
        assert!(parse_repeats("three")
            .unwrap_err()
            .contains("expected a count"));
        #[derive(Deserialize, Debug)]
        struct File {
            repeats: Repeats,
        }
        let read = |v: &str| {
            toml::from_str::<File>(&format!("repeats = {v}"))
                .map(|f| f.repeats)
                .map_err(|e| e.to_string())
        };
        assert_eq!(read("{ min = 2, max = 8 }"), r(2, 8));
        assert_eq!(read("4"), r(4, 4));
        assert_eq!(read("\"3..5\""), r(3, 5));
        for (v, wanted) in [
            ("{ min = 2 }", "two counts"),
            (
                "{ min = 2, most = 8 }",
                "two counts, got {\"min\": 2, \"most\": 8}",
            ),
            ("0", "1 <= min"),
            ("-1", "got `-1`"),
            ("{ min = 1, max = -1 }", "`-1` is not a count"),
            ("true", "a count (3), \"3..12\" or { min = 3, max = 12 }"),
        ] {
            let e = read(v).unwrap_err();
            assert!(e.contains("line 1") && e.contains(wanted), "{v}: {e}");
        }
    }
}
