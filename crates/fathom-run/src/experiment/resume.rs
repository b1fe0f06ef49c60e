//! Running an experiment's cells into its results directory, resuming: a cell that finished
//! with the same definition is skipped, one that did not finish is set aside (in
//! `RESULTS/.incomplete/`, where reports do not look) and run again.

use super::Experiment;
use crate::runner::{Observer, Place};
use anyhow::Context;
use fathom_schema::result::{ExperimentCell, RunManifest, RunStatus};
use fathom_schema::store::{read_json, MANIFEST};
use std::path::{Path, PathBuf};

/// Where a cell stands in the results directory.
enum CellState {
    New,
    Finished,
    /// A run that did not finish (how it ended): set aside and run again.
    Unfinished(String),
}

fn cell_state(dir: &Path, fingerprints: &[String]) -> anyhow::Result<CellState> {
    let manifest_path = dir.join(MANIFEST);
    if !dir.exists() {
        return Ok(CellState::New);
    }
    if !manifest_path.exists() {
        return Ok(CellState::Unfinished("without run.json".into()));
    }
    let m: RunManifest = read_json(&manifest_path)?;
    let same = m
        .experiment
        .as_ref()
        .is_some_and(|c| fingerprints.contains(&c.fingerprint));
    match (m.status, same) {
        (RunStatus::Finished, true) => Ok(CellState::Finished),
        (RunStatus::Finished, false) => anyhow::bail!(
            "{} holds a finished run of a different definition of this cell (the experiment file changed); \
             move it away or run into another --results directory",
            dir.display()
        ),
        _ => Ok(CellState::Unfinished(format!("`{}`", m.status))),
    }
}

/// Moves an unfinished run into `RESULTS/.incomplete/`.
fn set_aside(results: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    let aside = results.join(".incomplete");
    std::fs::create_dir_all(&aside)?;
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let mut n = 1;
    let mut to = aside.join(format!("{name}.{n}"));
    while to.exists() {
        n += 1;
        to = aside.join(format!("{name}.{n}"));
    }
    std::fs::rename(dir, &to)
        .with_context(|| format!("moving {} to {}", dir.display(), to.display()))?;
    Ok(to)
}

/// Copies the experiment file into `results` as `experiment.toml` (without a password a server
/// URL in it may hold). A different file saved there by an earlier run stays: this one is saved
/// beside it as `experiment.N.toml`, and the first line that differs is named.
fn save_definition(exp: &Experiment, results: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&exp.file)
        .with_context(|| format!("reading {}", exp.file.display()))?;
    let text = fathom_api::secret::redact(&text);
    let first = results.join("experiment.toml");
    let saved = std::fs::read_to_string(&first).ok();
    let to = match &saved {
        None => first.clone(),
        Some(old) if *old == text => return Ok(()),
        Some(_) => (2..)
            .map(|n| results.join(format!("experiment.{n}.toml")))
            .find(|p| std::fs::read_to_string(p).map_or(true, |t| t == text))
            .expect("an unbounded range has a free name"),
    };
    std::fs::write(&to, text.as_bytes())
        .with_context(|| format!("copying {} into {}", exp.file.display(), to.display()))?;
    if let Some(old) = saved {
        eprintln!(
            "fathom: {} holds a different experiment file ({}); kept it, this one saved as {}",
            first.display(),
            first_difference(&old, &text),
            to.display()
        );
    }
    Ok(())
}

/// The first line two texts differ at, as `line N: `old` -> `new``.
pub(super) fn first_difference(old: &str, new: &str) -> String {
    let (mut a, mut b) = (old.lines(), new.lines());
    for n in 1.. {
        match (a.next(), b.next()) {
            (None, None) => break,
            (x, y) if x == y => continue,
            (x, y) => {
                return format!(
                    "line {n}: `{}` -> `{}`",
                    x.unwrap_or("(end)").trim(),
                    y.unwrap_or("(end)").trim()
                )
            }
        }
    }
    "line endings".into()
}

/// A run of the experiment that failed: its cell's name and why.
pub struct Failed {
    pub cell: String,
    pub error: anyhow::Error,
}

/// What an invocation did: the cells it covered (its shard's, the rounds it ran; a cell
/// finished before counts) and those that failed.
pub struct Outcome {
    pub cells: usize,
    pub failed: Vec<Failed>,
}

/// Runs every cell not yet finished into `results`, saying what it does on stderr; a cell that
/// fails is reported and the next one runs. With adaptive repeats, the rounds past `min` run
/// the cells of the comparisons still undecided. `how` is what every cell's `Place` starts
/// from: whether the harness's cost is measured, the executable a cell that needs a process of
/// its own is run with (`supervise`), and the stop token.
pub fn run(
    exp: &Experiment,
    results: &Path,
    how: &Place,
    observer: &mut dyn Observer,
) -> anyhow::Result<Outcome> {
    let stop = &how.stop;
    std::fs::create_dir_all(results)
        .with_context(|| format!("creating results directory {}", results.display()))?;
    save_definition(exp, results)?;
    let rounds = &exp.rounds;
    let mine = match exp.shard {
        Some(shard) => exp.shard_cells(shard)?,
        None => (0..exp.cells.len()).collect(),
    };
    let first: Vec<usize> = mine
        .into_iter()
        .filter(|&n| exp.cells[n].repeat <= rounds.min)
        .collect();
    announce(exp, results, first.len());
    let mut runner = Cells {
        exp,
        results,
        how,
        failed: Vec::new(),
    };
    runner.run(&first, "", observer)?;
    let mut covered = first.len();
    for round in rounds.min + 1..=rounds.max {
        if stop.requested() {
            break;
        }
        let super::rounds::Pending { cells: need, open } =
            super::rounds::undecided(exp, results, round)?;
        if open.is_empty() {
            eprintln!(
                "fathom: every compared step decided after {} rounds",
                round - 1
            );
            break;
        }
        let cells: Vec<usize> = (0..exp.cells.len())
            .filter(|&n| {
                let c = &exp.cells[n];
                c.repeat == round && need.contains(&(c.workload, c.clients, c.setup))
            })
            .collect();
        eprintln!(
            "fathom: round {round} of at most {}: {} undecided ({}); {} runs",
            rounds.max,
            open.len(),
            super::rounds::some(&open, 4),
            cells.len()
        );
        runner.run(&cells, &format!("round {round}: "), observer)?;
        covered += cells.len();
    }
    if rounds.adaptive() && !stop.requested() {
        let pending = super::rounds::undecided(exp, results, rounds.max + 1)?;
        for o in &pending.open {
            eprintln!(
                "fathom: {} still {} after {} rounds (the most)",
                o.what,
                o.verdict.text(),
                rounds.max
            );
        }
    }
    Ok(Outcome {
        cells: covered,
        failed: runner.failed,
    })
}

/// Says on stderr what the experiment runs first, and where.
fn announce(exp: &Experiment, results: &Path, first: usize) {
    let rounds = &exp.rounds;
    let most = if rounds.adaptive() {
        format!(
            "; up to {} rounds while a comparison is undecided at ±{:.1}%",
            rounds.max,
            rounds.threshold * 100.0
        )
    } else {
        String::new()
    };
    let shard = exp
        .shard
        .map_or(String::new(), |s| format!(", shard {s} of the matrix"));
    eprintln!(
        "fathom: experiment {} ({first} runs{shard}{most}) -> {}",
        exp.name,
        results.display()
    );
    if !exp.description.is_empty() {
        eprintln!("fathom: {}", exp.description.trim());
    }
}

/// Runs cells of an experiment, resuming: what one run of `run` shares between its rounds.
struct Cells<'a> {
    exp: &'a Experiment,
    results: &'a Path,
    /// What every cell's place starts from.
    how: &'a Place,
    failed: Vec<Failed>,
}

impl Cells<'_> {
    /// Runs the cells at these indexes that have not finished; `label` goes before each
    /// one's count.
    fn run(
        &mut self,
        cells: &[usize],
        label: &str,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<()> {
        let (exp, results) = (self.exp, self.results);
        for (i, &n) in cells.iter().enumerate() {
            if self.how.stop.requested() {
                break;
            }
            let cell = &exp.cells[n];
            let name = exp.cell_name(cell);
            let dir = results.join(&name);
            let at = format!("[{label}{}/{}] {name}", i + 1, cells.len());
            let fingerprints = [exp.fingerprint(cell), exp.legacy_fingerprint(cell)];
            match cell_state(&dir, &fingerprints)? {
                CellState::Finished => {
                    eprintln!("fathom: {at}: finished before, skipped");
                    continue;
                }
                CellState::Unfinished(how) => {
                    let to = set_aside(results, &dir)?;
                    eprintln!(
                        "fathom: {at}: an earlier attempt ended {how}; set aside in {}",
                        to.display()
                    );
                }
                CellState::New => {}
            }
            eprintln!("fathom: {at}");
            let place = place(exp, results, self.how, n);
            match crate::runner::run(exp.spec(cell), &place, observer) {
                Ok(dir) => crate::records::record_or_say(&exp.store, &dir),
                Err(error) => {
                    eprintln!("fathom: {at} failed: {error:#}; going on with the next run");
                    self.failed.push(Failed { cell: name, error });
                }
            }
        }
        Ok(())
    }
}

/// Where and as what cell `n` runs, the rest as `how` says.
fn place(exp: &Experiment, results: &Path, how: &Place, n: usize) -> Place {
    let cell = &exp.cells[n];
    let name = exp.cell_name(cell);
    Place {
        results: results.to_path_buf(),
        dir_name: Some(name.clone()),
        calibrate: how.calibrate,
        launcher: how.launcher.clone(),
        stop: how.stop.clone(),
        cell: Some(ExperimentCell {
            name: exp.name.clone(),
            cell: name,
            repeat: cell.repeat,
            fingerprint: exp.fingerprint(cell),
            max_repeats: exp.rounds.adaptive().then_some(exp.rounds.max),
            min_repeats: exp.rounds.adaptive().then_some(exp.rounds.min),
            definition: exp.definition(),
            shard: exp.shard.map(|s| s.to_string()),
            setup_order: Some(exp.setup_order.name().to_string()),
            place: Some(cell.place),
        }),
        gate: exp.gate.clone(),
        host_link: how.host_link.clone(),
        ..Place::default()
    }
}
