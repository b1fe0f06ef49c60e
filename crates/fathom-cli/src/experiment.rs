//! Experiments: a TOML file naming setups, workloads, client counts and repeats, run as a
//! matrix in a stated order into one results directory. Each cell is a run directory named
//! after it; a re-run skips the cells that finished with the same definition and sets aside
//! those that did not finish, so an interrupted experiment resumes where it stopped.

use crate::execute::{self, Place, Plan};
use anyhow::Context;
use fathom_core::interrupt;
use fathom_core::pace::Spacing;
use fathom_core::result::{ExperimentCell, RunManifest};
use fathom_core::store::{read_json, slug, MANIFEST};
use fathom_core::units::{parse_duration, parse_size};
use fathom_workloads::params::Params;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The loops of the matrix, outermost first, when the file does not say.
pub const DEFAULT_ORDER: [&str; 4] = ["repeat", "workload", "clients", "setup"];

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ExperimentFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(rename = "setup")]
    setups: Vec<SetupSpec>,
    #[serde(rename = "workload")]
    workloads: Vec<WorkloadSpec>,
    #[serde(default = "default_clients")]
    clients: Vec<usize>,
    #[serde(default = "default_repeats")]
    repeats: usize,
    order: Option<Vec<String>>,
    duration: Option<String>,
    interval: Option<String>,
    memory_limit: Option<String>,
    rate: Option<f64>,
    arrivals: Option<String>,
    queue: Option<String>,
}

fn default_clients() -> Vec<usize> {
    vec![2]
}

fn default_repeats() -> usize {
    1
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct SetupSpec {
    name: String,
    engine: String,
    #[serde(default)]
    options: String,
    options_file: Option<PathBuf>,
    #[serde(default)]
    settings: BTreeMap<String, toml::Value>,
    memory_limit: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct WorkloadSpec {
    name: String,
    #[serde(default)]
    params: BTreeMap<String, toml::Value>,
}

/// One run of the matrix.
pub struct Cell {
    pub setup: usize,
    pub workload: usize,
    pub clients: usize,
    pub repeat: usize,
}

/// An experiment file, resolved and checked.
pub struct Experiment {
    pub file: PathBuf,
    pub name: String,
    pub description: String,
    /// Plans indexed [workload][setup].
    plans: Vec<Vec<Plan>>,
    pub cells: Vec<Cell>,
}

/// A TOML scalar as the string `--set`/`--param` would have given.
fn scalar(v: &toml::Value, key: &str) -> anyhow::Result<String> {
    Ok(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        other => anyhow::bail!(
            "{key}: expected a string, number or boolean, found {}",
            other.type_str()
        ),
    })
}

fn scalars(
    map: &BTreeMap<String, toml::Value>,
    prefix: &str,
) -> anyhow::Result<BTreeMap<String, String>> {
    map.iter()
        .map(|(k, v)| Ok((k.clone(), scalar(v, &format!("{prefix}.{k}"))?)))
        .collect()
}

impl Experiment {
    /// Reads and checks `file`; `duration` overrides every workload's step length.
    pub fn load(file: &Path, duration: Option<&str>) -> anyhow::Result<Experiment> {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read experiment file {}", file.display()))?;
        let spec: ExperimentFile =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        Self::resolve(file, spec, duration)
            .map_err(|e| anyhow::anyhow!("{}: {e:#}", file.display()))
    }

    fn resolve(
        file: &Path,
        spec: ExperimentFile,
        duration: Option<&str>,
    ) -> anyhow::Result<Experiment> {
        if spec.name.trim().is_empty() || slug(&spec.name) != spec.name {
            anyhow::bail!(
                "name: `{}` should be a non-empty name of letters, digits, `.` and `-`",
                spec.name
            );
        }
        if spec.setups.is_empty() {
            anyhow::bail!("expected at least one [[setup]] table");
        }
        if spec.workloads.is_empty() {
            anyhow::bail!("expected at least one [[workload]] table");
        }
        if spec.clients.is_empty() || spec.clients.contains(&0) {
            anyhow::bail!(
                "clients: expected a list of counts of at least 1, got {:?}",
                spec.clients
            );
        }
        if spec.repeats == 0 {
            anyhow::bail!("repeats: expected at least 1");
        }
        let order = spec
            .order
            .unwrap_or_else(|| DEFAULT_ORDER.iter().map(|s| s.to_string()).collect());
        let mut sorted = order.clone();
        sorted.sort();
        let mut expected = DEFAULT_ORDER.to_vec();
        expected.sort();
        if sorted != expected {
            anyhow::bail!(
                "order: expected the four loops {DEFAULT_ORDER:?} in some order, outermost first; got {order:?}"
            );
        }
        let interval = spec.interval.as_deref().unwrap_or("1s");
        let interval = parse_duration(interval).map_err(|e| anyhow::anyhow!("interval: {e}"))?;
        let default_limit = spec
            .memory_limit
            .as_deref()
            .map(|m| parse_size(m).map_err(|e| anyhow::anyhow!("memory_limit: {e}")))
            .transpose()?;
        let open_loop = execute::open_loop(
            spec.rate,
            spec.arrivals.as_deref(),
            spec.queue.as_deref(),
            ("rate", "arrivals", "queue"),
        )?;
        let mut names = Vec::new();
        for (i, s) in spec.setups.iter().enumerate() {
            if s.name.trim().is_empty() || names.contains(&s.name) {
                anyhow::bail!(
                    "setup[{i}].name: expected a name no other setup has, got `{}`",
                    s.name
                );
            }
            names.push(s.name.clone());
        }
        let base_dir = file.parent().unwrap_or(Path::new("."));
        let mut plans = Vec::new();
        for (w, ws) in spec.workloads.iter().enumerate() {
            let at = format!("workload[{w}] ({})", ws.name);
            let workload =
                fathom_workloads::find(&ws.name).map_err(|e| anyhow::anyhow!("{at}.name: {e}"))?;
            let mut params = Params::new(scalars(&ws.params, &format!("{at}.params"))?);
            if let Some(d) = duration.or(spec.duration.as_deref()) {
                parse_duration(d).map_err(|e| anyhow::anyhow!("duration: {e}"))?;
                params.set("duration", d);
            }
            let mut row = Vec::new();
            for (i, s) in spec.setups.iter().enumerate() {
                let at = format!("setup[{i}] ({})", s.name);
                let engine = fathom_engines::find(&s.engine)
                    .map_err(|e| anyhow::anyhow!("{at}.engine: {e}"))?;
                let options = match &s.options_file {
                    Some(_) if !s.options.is_empty() => {
                        anyhow::bail!("{at}: expected `options` or `options_file`, not both")
                    }
                    Some(f) => execute::read_options_file(&base_dir.join(f), engine)
                        .map_err(|e| anyhow::anyhow!("{at}.options_file: {e:#}"))?,
                    None => s.options.clone(),
                };
                let memory_limit = match &s.memory_limit {
                    Some(m) => {
                        Some(parse_size(m).map_err(|e| anyhow::anyhow!("{at}.memory_limit: {e}"))?)
                    }
                    None => default_limit,
                };
                let plan = Plan {
                    engine,
                    workload,
                    options,
                    settings: scalars(&s.settings, &format!("{at}.settings"))?,
                    params: params.clone(),
                    name: s.name.clone(),
                    memory_limit,
                    open_loop,
                    interval,
                };
                plan.check(&spec.clients)
                    .map_err(|e| anyhow::anyhow!("{at} with workload[{w}] ({}): {e:#}", ws.name))?;
                row.push(plan);
            }
            plans.push(row);
        }
        let cells = matrix(
            &order,
            spec.repeats,
            spec.workloads.len(),
            &spec.clients,
            spec.setups.len(),
        );
        Ok(Experiment {
            file: file.to_path_buf(),
            name: spec.name,
            description: spec.description,
            plans,
            cells,
        })
    }

    pub fn plan(&self, cell: &Cell) -> &Plan {
        &self.plans[cell.workload][cell.setup]
    }

    /// The run directory name of a cell.
    pub fn cell_name(&self, cell: &Cell) -> String {
        let p = self.plan(cell);
        slug(&format!(
            "{}.{}.c{}.r{}",
            p.name, p.workload.name, cell.clients, cell.repeat
        ))
    }

    /// A digest of everything that defines a cell's run, repeat aside.
    pub fn fingerprint(&self, cell: &Cell) -> String {
        let p = self.plan(cell);
        // A shared queue is added only when set, so per-client cells keep their digests.
        let open_loop = p
            .open_loop
            .map(|o| (o.ops_per_sec, o.spacing == Spacing::Poisson));
        let shared = if p.open_loop.is_some_and(|o| o.shared) {
            "shared"
        } else {
            ""
        };
        let text = format!(
            "{}\u{1}{}\u{1}{:?}\u{1}{:?}\u{1}{}\u{1}{:?}\u{1}{}\u{1}{:?}{shared}\u{1}{:?}",
            p.engine.name,
            p.options,
            p.settings,
            p.memory_limit,
            p.workload.name,
            p.params,
            cell.clients,
            open_loop,
            p.interval,
        );
        // FNV-1a, 64 bits: stable across builds, unlike std's hasher.
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        format!("{hash:016x}")
    }
}

/// The cells in the order the loops nest, outermost first.
fn matrix(
    order: &[String],
    repeats: usize,
    workloads: usize,
    clients: &[usize],
    setups: usize,
) -> Vec<Cell> {
    let len = |dim: &str| match dim {
        "repeat" => repeats,
        "workload" => workloads,
        "clients" => clients.len(),
        _ => setups,
    };
    let total: usize = order.iter().map(|d| len(d)).product();
    (0..total)
        .map(|mut n| {
            let mut at = BTreeMap::new();
            for dim in order.iter().rev() {
                at.insert(dim.as_str(), n % len(dim));
                n /= len(dim);
            }
            Cell {
                repeat: at["repeat"] + 1,
                workload: at["workload"],
                clients: clients[at["clients"]],
                setup: at["setup"],
            }
        })
        .collect()
}

/// Where a cell stands in the results directory.
enum CellState {
    New,
    Finished,
    /// A run that did not finish (how it ended): set aside and run again.
    Unfinished(String),
}

fn cell_state(dir: &Path, fingerprint: &str) -> anyhow::Result<CellState> {
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
        .is_some_and(|c| c.fingerprint == fingerprint);
    match (m.status.as_str(), same) {
        ("finished", true) => Ok(CellState::Finished),
        ("finished", false) => anyhow::bail!(
            "{} holds a finished run of a different definition of this cell (the experiment file changed); \
             move it away or run into another --results directory",
            dir.display()
        ),
        _ => Ok(CellState::Unfinished(format!("`{}`", m.status))),
    }
}

/// Moves an unfinished run into `RESULTS/.incomplete/`, where reports do not look.
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

/// Runs every cell not yet finished; returns the results directory.
pub fn run(exp: &Experiment, results: &Path, calibrate: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(results)
        .with_context(|| format!("creating results directory {}", results.display()))?;
    std::fs::copy(&exp.file, results.join("experiment.toml"))
        .with_context(|| format!("copying {} into {}", exp.file.display(), results.display()))?;
    let total = exp.cells.len();
    eprintln!(
        "fathom: experiment {} ({total} runs) -> {}",
        exp.name,
        results.display()
    );
    if !exp.description.is_empty() {
        eprintln!("fathom: {}", exp.description.trim());
    }
    for (n, cell) in exp.cells.iter().enumerate() {
        if interrupt::requested() {
            break;
        }
        let name = exp.cell_name(cell);
        let fingerprint = exp.fingerprint(cell);
        let dir = results.join(&name);
        match cell_state(&dir, &fingerprint)? {
            CellState::Finished => {
                eprintln!(
                    "fathom: [{}/{total}] {name}: finished before, skipped",
                    n + 1
                );
                continue;
            }
            CellState::Unfinished(how) => {
                let to = set_aside(results, &dir)?;
                eprintln!(
                    "fathom: [{}/{total}] {name}: an earlier attempt ended {how}; set aside in {}",
                    n + 1,
                    to.display()
                );
            }
            CellState::New => {}
        }
        eprintln!("fathom: [{}/{total}] {name}", n + 1);
        let place = Place {
            results: results.to_path_buf(),
            dir_name: Some(name.clone()),
            data_dir: None,
            keep_data: false,
            calibrate,
            cell: Some(ExperimentCell {
                name: exp.name.clone(),
                cell: name.clone(),
                repeat: cell.repeat,
                fingerprint,
            }),
        };
        execute::run_one(&place, exp.plan(cell), cell.clients)
            .with_context(|| format!("experiment {}, run {name}", exp.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> anyhow::Result<Experiment> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("e.toml");
        std::fs::write(&file, text).unwrap();
        Experiment::load(&file, None)
    }

    const GOOD: &str = r#"
name = "t"
clients = [1, 2]
repeats = 2
[[setup]]
name = "a"
engine = "null"
[[setup]]
name = "b"
engine = "null"
[[workload]]
name = "dbbench"
params = { num_keys = 1000, steps = "fillseq" }
"#;

    #[test]
    fn matrix_in_stated_order() {
        let e = load(GOOD).unwrap();
        let names: Vec<String> = e.cells.iter().map(|c| e.cell_name(c)).collect();
        assert_eq!(
            names[..4],
            [
                "a.dbbench.c1.r1",
                "b.dbbench.c1.r1",
                "a.dbbench.c2.r1",
                "b.dbbench.c2.r1"
            ]
        );
        assert_eq!(names.len(), 8);
        let e = load(&GOOD.replace(
            "repeats = 2",
            "repeats = 2\norder = [\"setup\", \"clients\", \"workload\", \"repeat\"]",
        ))
        .unwrap();
        let names: Vec<String> = e.cells.iter().map(|c| e.cell_name(c)).collect();
        assert_eq!(names[..2], ["a.dbbench.c1.r1", "a.dbbench.c1.r2"]);
        assert_ne!(e.fingerprint(&e.cells[0]), e.fingerprint(&e.cells[2]));
        assert_eq!(e.fingerprint(&e.cells[0]), e.fingerprint(&e.cells[1]));
    }

    #[test]
    fn errors_name_file_key_and_expectation() {
        let err = |t: &str| format!("{:#}", load(t).err().expect("should fail"));
        let e = err(&GOOD.replace("clients = [1, 2]", "clients = \"many\""));
        assert!(
            e.contains("e.toml") && e.contains("clients") && e.contains("expected"),
            "{e}"
        );
        let e = err(&GOOD.replace("repeats = 2", "repeats = 2\nclientz = 3"));
        assert!(e.contains("unknown field `clientz`"), "{e}");
        let e = err(&GOOD.replace(
            "engine = \"null\"\n[[setup]]",
            "engine = \"nosuch\"\n[[setup]]",
        ));
        assert!(
            e.contains("setup[0] (a).engine") && e.contains("unknown engine"),
            "{e}"
        );
        let e = err(&GOOD.replace("num_keys = 1000", "num_kees = 1000"));
        assert!(e.contains("no parameter `num_kees`"), "{e}");
        let e = err(&GOOD.replace("name = \"b\"", "name = \"a\""));
        assert!(e.contains("setup[1].name"), "{e}");
        let e = err(&GOOD.replace("repeats = 2", "order = [\"setup\"]"));
        assert!(e.contains("order: expected"), "{e}");
    }
}
