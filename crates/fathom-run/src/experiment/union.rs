//! Several results directories read as one experiment: the shards of a sharded run, each
//! host's directory. They must hold runs of one definition and no cell twice; a difference is
//! named by the first line their saved experiment files differ at. Directories of runs outside
//! any experiment (one `fathom run --engine a,b` makes a directory per engine) are read
//! together as they are.

use fathom_schema::store::LoadedRun;
use std::path::{Path, PathBuf};

/// One results directory's runs.
pub struct Loaded {
    pub dir: PathBuf,
    pub runs: Vec<LoadedRun>,
}

/// The experiment a directory's runs belong to: its name and definition digest, if they are
/// an experiment's.
fn experiment_of(runs: &[LoadedRun]) -> Option<(&str, &str)> {
    runs.iter().find_map(|r| {
        let e = r.manifest.experiment.as_ref()?;
        Some((e.name.as_str(), e.definition.as_str()))
    })
}

/// The cells a directory holds.
fn cells(runs: &[LoadedRun]) -> Vec<&str> {
    runs.iter()
        .filter_map(|r| Some(r.manifest.experiment.as_ref()?.cell.as_str()))
        .collect()
}

/// True when `b` holds more shards of the experiment `a` holds: the same experiment name and
/// definition, and no cell in both.
pub fn same_experiment(a: &[LoadedRun], b: &[LoadedRun]) -> bool {
    match (experiment_of(a), experiment_of(b)) {
        (Some(x), Some(y)) => x == y && !cells(a).iter().any(|c| cells(b).contains(c)),
        _ => false,
    }
}

/// Checks that every directory holds the same experiment, each cell once; the runs of all.
pub fn one_experiment(dirs: Vec<Loaded>) -> anyhow::Result<Vec<LoadedRun>> {
    for (i, a) in dirs.iter().enumerate() {
        for b in &dirs[i + 1..] {
            check_pair(a, b)?;
        }
    }
    Ok(dirs.into_iter().flat_map(|d| d.runs).collect())
}

fn check_pair(a: &Loaded, b: &Loaded) -> anyhow::Result<()> {
    let ((an, ad), (bn, bd)) = match (experiment_of(&a.runs), experiment_of(&b.runs)) {
        // Runs outside any experiment: read together as they are.
        (None, None) => return Ok(()),
        (Some(x), Some(y)) => (x, y),
        (x, _) => anyhow::bail!(
            "{} and {}: several results directories are read as shards of one experiment, and {} holds no experiment's runs (directories of runs outside experiments are read together only with each other)",
            a.dir.display(),
            b.dir.display(),
            if x.is_none() { a.dir.display() } else { b.dir.display() }
        ),
    };
    if an != bn {
        anyhow::bail!(
            "{} holds experiment `{an}` and {} experiment `{bn}`: several directories are read as shards of one experiment (`fathom compare` compares different ones)",
            a.dir.display(),
            b.dir.display()
        );
    }
    if ad != bd {
        anyhow::bail!(
            "{} and {} hold differently defined runs of experiment `{an}` ({}); shards must run one definition",
            a.dir.display(),
            b.dir.display(),
            definition_difference(&a.dir, &b.dir)
        );
    }
    if let Some(c) = cells(&a.runs)
        .into_iter()
        .find(|c| cells(&b.runs).contains(c))
    {
        anyhow::bail!(
            "{} and {} both hold cell {c}: shards hold different cells (compare two runs of one experiment with `fathom compare`)",
            a.dir.display(),
            b.dir.display()
        );
    }
    Ok(())
}

/// Where the experiment files two directories saved differ.
fn definition_difference(a: &Path, b: &Path) -> String {
    let read = |d: &Path| std::fs::read_to_string(d.join("experiment.toml")).ok();
    match (read(a), read(b)) {
        (Some(x), Some(y)) if x != y => format!(
            "their experiment.toml differ at {}",
            super::resume::first_difference(&x, &y)
        ),
        (Some(_), Some(_)) => {
            "the same experiment.toml, run with different --repeats or settings".into()
        }
        _ => "no experiment.toml to tell how".into(),
    }
}
