//! An experiment file read and resolved: its tables are the same inputs the command line
//! gives, so every cell's spec comes from the one resolver; errors name the file's keys.

use super::rounds::{Repeats, Rounds, RoundsInput, Threshold};
use super::{Cell, Experiment};
use crate::input::{DriveInput, SetupInput, WorkloadInput};
use crate::resolve::{resolve, Keys};
use anyhow::Context;
use fathom_schema::store::slug;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A loop of the experiment's matrix (`order`).
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Loop {
    Repeat,
    Workload,
    Clients,
    Setup,
}

/// The loops of the matrix, outermost first, when the file does not say.
pub const DEFAULT_ORDER: [Loop; 4] = [Loop::Repeat, Loop::Workload, Loop::Clients, Loop::Setup];

/// The order of the setups within each round (`setup_order`): the runs a comparison pairs ran
/// in the same round, and whichever goes second in a round may gain or lose by it (a warm
/// cache, a cold one, the compaction debt of the run before). Rotating the order from round to
/// round gives each setup each place equally often, so that effect cancels in the verdicts
/// instead of counting as a difference.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SetupOrder {
    /// A Williams square: each round's order a row of it, so each setup runs in each place,
    /// and after each other setup, equally often over its rows (2 rounds for 2 setups).
    #[default]
    Rotate,
    /// An order drawn per round (and workload and client count) from the experiment's `seed`.
    Shuffle,
    /// The file's order in every round.
    Fixed,
}

impl SetupOrder {
    pub fn name(self) -> &'static str {
        match self {
            SetupOrder::Rotate => "rotate",
            SetupOrder::Shuffle => "shuffle",
            SetupOrder::Fixed => "fixed",
        }
    }
}

/// The file's own keys: its name, tables and the experiment's design. The run options beside
/// them (`duration`, `rate`, `allocator` …) are `DriveInput`'s, read from the same text; a key
/// neither knows is refused by `unknown_keys`.
#[derive(Deserialize, Debug)]
struct ExperimentFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(rename = "setup")]
    setups: Vec<SetupInput>,
    #[serde(rename = "workload")]
    workloads: Vec<WorkloadInput>,
    #[serde(default = "default_clients")]
    clients: Vec<usize>,
    repeats: Option<Repeats>,
    base: Option<String>,
    threshold: Option<Threshold>,
    decide: Option<Vec<String>>,
    #[serde(default)]
    exclude_disturbed: bool,
    /// How verdicts are adjusted for their number: `none`, `holm` or `bh`.
    #[serde(default, deserialize_with = "adjust")]
    adjust: fathom_stats::verdict::Adjust,
    #[serde(default)]
    fail_on: Vec<fathom_stats::verdict::gate::FailOn>,
    order: Option<Vec<Loop>>,
    #[serde(default)]
    setup_order: SetupOrder,
    /// What `setup_order = "shuffle"` draws its orders from [default: a hash of `name`].
    seed: Option<u64>,
}

/// `adjust = "holm"`: a name, read as `--adjust` reads it.
fn adjust<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<fathom_stats::verdict::Adjust, D::Error> {
    String::deserialize(d)?
        .parse()
        .map_err(serde::de::Error::custom)
}

fn default_clients() -> Vec<usize> {
    vec![2]
}

impl Experiment {
    /// Reads and checks `file`; the command line's `duration` overrides every workload's step
    /// length, and its `--profile` profiles every setup the file does not say otherwise of.
    pub fn load(file: &Path, cli: &DriveInput) -> anyhow::Result<Experiment> {
        Self::load_with(file, cli, &RoundsInput::default())
    }

    /// `load`, with the command line's `--repeats`, `--base` and `--threshold` over the
    /// file's.
    pub fn load_with(
        file: &Path,
        cli: &DriveInput,
        rounds: &RoundsInput,
    ) -> anyhow::Result<Experiment> {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read experiment file {}", file.display()))?;
        let read = |e: toml::de::Error| anyhow::anyhow!("{}: {e}", file.display());
        let options: DriveInput = toml::from_str(&text).map_err(read)?;
        unknown_keys(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        let spec: ExperimentFile = toml::from_str(&text).map_err(read)?;
        Self::resolve(file, spec, &cli.over(options), rounds)
            .map_err(|e| anyhow::anyhow!("{}: {e:#}", file.display()))
    }

    fn resolve(
        file: &Path,
        spec: ExperimentFile,
        drive: &DriveInput,
        given: &RoundsInput,
    ) -> anyhow::Result<Experiment> {
        check_shape(&spec)?;
        let rounds = rounds(&spec, given)?;
        let order = order(spec.order.clone())?;
        let base = file.parent().unwrap_or(Path::new("."));
        let mut specs = Vec::new();
        for (w, ws) in spec.workloads.iter().enumerate() {
            for (i, s) in spec.setups.iter().enumerate() {
                let keys = Keys::File {
                    setup: format!("setup[{i}] ({})", s.name),
                    workload: format!("workload[{w}] ({})", ws.name),
                };
                for &c in &spec.clients {
                    specs.push(resolve(s, ws, drive, c, &keys, base)?);
                }
            }
        }
        let setup_order = if order.iter().position(|l| *l == Loop::Repeat)
            > order.iter().position(|l| *l == Loop::Setup)
        {
            // Each setup's repeats run in a block: there are no rounds to rotate within.
            SetupOrder::Fixed
        } else {
            spec.setup_order
        };
        let seed = spec
            .seed
            .unwrap_or_else(|| u64::from_str_radix(&super::fnv1a(&spec.name), 16).unwrap_or(0));
        let cells = matrix(
            &order,
            &Places {
                order: setup_order,
                seed,
            },
            rounds.max,
            spec.workloads.len(),
            &spec.clients,
            spec.setups.len(),
        );
        Ok(Experiment {
            file: file.to_path_buf(),
            name: spec.name,
            description: spec.description,
            specs,
            setups: spec.setups.len(),
            setup_names: spec.setups.iter().map(|s| s.name.clone()).collect(),
            workloads: spec.workloads.len(),
            client_counts: spec.clients,
            cells,
            rounds,
            setup_order,
            fail_on: spec.fail_on,
            shard: None,
            gate: Default::default(),
            store: crate::records::Store::Off,
        })
    }
}

/// A top-level key that is neither the file's own nor a run option's, named with its line
/// and what the file takes.
fn unknown_keys(text: &str) -> anyhow::Result<()> {
    let table: toml::Table = toml::from_str(text)?;
    let own = crate::input::serde_keys::<ExperimentFile>();
    let options = crate::input::serde_keys::<DriveInput>();
    let Some(key) = table
        .keys()
        .find(|k| !own.contains(&k.as_str()) && !options.contains(&k.as_str()))
    else {
        return Ok(());
    };
    let line = text
        .lines()
        .position(|l| {
            let l = l.trim_start();
            l.strip_prefix(key.as_str())
                .or_else(|| l.strip_prefix(&format!("\"{key}\"")))
                .is_some_and(|rest| rest.trim_start().starts_with(['=', '.']))
        })
        .map(|n| format!("line {}: ", n + 1))
        .unwrap_or_default();
    let list = |keys: &mut dyn Iterator<Item = &str>| {
        keys.map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    anyhow::bail!(
        "{line}unknown field `{key}`, expected one of {}, or a run option: {}",
        list(&mut own.iter().copied()),
        list(&mut options.iter().copied())
    )
}

/// The file's own keys: a name, tables, counts.
fn check_shape(spec: &ExperimentFile) -> anyhow::Result<()> {
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
    let mut names: Vec<&str> = Vec::new();
    for (i, s) in spec.setups.iter().enumerate() {
        if s.name.trim().is_empty() || names.contains(&s.name.as_str()) {
            anyhow::bail!(
                "setup[{i}].name: expected a name no other setup has, got `{}`",
                s.name
            );
        }
        names.push(&s.name);
    }
    Ok(())
}

/// The rounds: the command line's `--repeats`, `--base` and `--threshold` over the file's
/// `repeats`, `base`, `threshold` and `decide`.
fn rounds(spec: &ExperimentFile, given: &RoundsInput) -> anyhow::Result<Rounds> {
    let Repeats { min, max } = given
        .repeats
        .or(spec.repeats)
        .unwrap_or(Repeats { min: 1, max: 1 });
    let threshold = given
        .threshold
        .or(spec.threshold.map(|t| t.0))
        .unwrap_or(super::rounds::DEFAULT_THRESHOLD);
    let base = given.base.clone().or(spec.base.clone());
    let names: Vec<&str> = spec.setups.iter().map(|s| s.name.as_str()).collect();
    if let Some(b) = &base {
        fathom_stats::verdict::pairs(&names, Some(b)).map_err(|e| {
            anyhow::anyhow!("base: {}", e.to_string().trim_start_matches("--base: "))
        })?;
    }
    let decide = spec.decide.clone().unwrap_or_default();
    if max > min && spec.setups.len() < 2 {
        anyhow::bail!(
            "repeats: {min}..{max} decides comparisons between setups, and there is one setup; give a count"
        );
    }
    Ok(Rounds {
        min,
        max,
        base,
        threshold,
        decide,
        exclude_disturbed: spec.exclude_disturbed,
        adjust: spec.adjust,
    })
}

/// The loops of the matrix, outermost first: each of the four once.
fn order(given: Option<Vec<Loop>>) -> anyhow::Result<[Loop; 4]> {
    let Some(order) = given else {
        return Ok(DEFAULT_ORDER);
    };
    let mut sorted = order.clone();
    sorted.sort();
    sorted.dedup();
    match <[Loop; 4]>::try_from(order.as_slice()) {
        Ok(four) if sorted.len() == 4 => Ok(four),
        _ => anyhow::bail!(
            "order: expected the four loops repeat, workload, clients and setup, each once, \
             outermost first; got {}",
            serde_json::to_string(&order)?
        ),
    }
}

/// How the setups of a round take their places.
struct Places {
    order: SetupOrder,
    seed: u64,
}

impl Places {
    /// The setup at place `at` of the block of `setups` in round `round` (from 0), block
    /// `block` (the workload and client count's position within the round, from 0).
    fn setup(&self, at: usize, setups: usize, round: usize, block: usize) -> usize {
        match self.order {
            SetupOrder::Fixed => at,
            SetupOrder::Rotate => {
                let rows = williams(setups);
                rows[(round + block) % rows.len()][at]
            }
            SetupOrder::Shuffle => {
                let mut order: Vec<usize> = (0..setups).collect();
                let mix = (round as u64) << 32 | block as u64;
                fathom_stats::rng::SplitMix(self.seed ^ mix.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                    .shuffle(&mut order);
                order[at]
            }
        }
    }
}

/// A Williams square of `n` treatments: rows in which each treatment takes each place, and
/// follows each other treatment, equally often (`n` rows for even `n`; for odd `n` those and
/// their mirrors, `2n`).
fn williams(n: usize) -> Vec<Vec<usize>> {
    // The first row 0, 1, n−1, 2, n−2, …; row i adds i to each, modulo n.
    let first: Vec<usize> = (0..n)
        .map(|j| match j {
            0 => 0,
            j if j % 2 == 1 => j.div_ceil(2),
            j => n - j / 2,
        })
        .collect();
    let mut rows: Vec<Vec<usize>> = (0..n)
        .map(|i| first.iter().map(|x| (x + i) % n).collect())
        .collect();
    if n % 2 == 1 {
        let mirrored: Vec<Vec<usize>> = rows
            .iter()
            .map(|r| r.iter().rev().copied().collect())
            .collect();
        rows.extend(mirrored);
    }
    rows
}

/// The cells in the order the loops nest, outermost first; within each block of setups (a
/// round's workload and client count) the setups take their places as `places` says.
fn matrix(
    order: &[Loop; 4],
    places: &Places,
    repeats: usize,
    workloads: usize,
    clients: &[usize],
    setups: usize,
) -> Vec<Cell> {
    let len = |l: Loop| match l {
        Loop::Repeat => repeats,
        Loop::Workload => workloads,
        Loop::Clients => clients.len(),
        Loop::Setup => setups,
    };
    let total: usize = order.iter().map(|&l| len(l)).product();
    (0..total)
        .map(|mut n| {
            let mut at = BTreeMap::new();
            for &l in order.iter().rev() {
                at.insert(l, n % len(l));
                n /= len(l);
            }
            let block = at[&Loop::Workload] * clients.len() + at[&Loop::Clients];
            let place = at[&Loop::Setup];
            Cell {
                repeat: at[&Loop::Repeat] + 1,
                workload: at[&Loop::Workload],
                clients: clients[at[&Loop::Clients]],
                setup: places.setup(place, setups, at[&Loop::Repeat], block),
                place: place + 1,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> anyhow::Result<Experiment> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("e.toml");
        std::fs::write(&file, text).unwrap();
        Experiment::load(&file, &DriveInput::default())
    }

    const GOOD: &str = r#"
name = "t"
clients = [1, 2]
repeats = 2
setup = [{ name = "a", engine = "null" }, { name = "b", engine = "null" }]
workload = [{ name = "dbbench", params = { num_keys = 1000, steps = "fillseq" } }]
"#;

    #[test]
    fn matrix_in_stated_order() {
        let e = load(&GOOD.replace("repeats = 2", "repeats = 2\nsetup_order = \"fixed\"")).unwrap();
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
        // By default the setups rotate: each round, and each block of a round, its own row.
        let e = load(GOOD).unwrap();
        let names: Vec<String> = e.cells.iter().map(|c| e.cell_name(c)).collect();
        assert_eq!(
            names,
            [
                "a.dbbench.c1.r1",
                "b.dbbench.c1.r1",
                "b.dbbench.c2.r1",
                "a.dbbench.c2.r1",
                "b.dbbench.c1.r2",
                "a.dbbench.c1.r2",
                "a.dbbench.c2.r2",
                "b.dbbench.c2.r2",
            ]
        );
        assert_eq!(e.cells[2].place, 1);
        let e = load(&GOOD.replace(
            "repeats = 2",
            "repeats = 2\norder = [\"setup\", \"clients\", \"workload\", \"repeat\"]",
        ))
        .unwrap();
        assert_eq!(
            e.setup_order,
            SetupOrder::Fixed,
            "no rounds to rotate within"
        );
        let names: Vec<String> = e.cells.iter().map(|c| e.cell_name(c)).collect();
        assert_eq!(names[..2], ["a.dbbench.c1.r1", "a.dbbench.c1.r2"]);
        assert_ne!(e.fingerprint(&e.cells[0]), e.fingerprint(&e.cells[2]));
        assert_eq!(e.fingerprint(&e.cells[0]), e.fingerprint(&e.cells[1]));
    }

    /// Williams squares: every setup in every place, and after every other, equally often.
    #[test]
    fn williams_squares_balance_places_and_neighbours() {
        for n in 2..=6 {
            let rows = williams(n);
            let k = rows.len();
            assert_eq!(k, if n % 2 == 0 { n } else { 2 * n });
            for place in 0..n {
                for t in 0..n {
                    let times = rows.iter().filter(|r| r[place] == t).count();
                    assert_eq!(times, k / n, "n {n}: {t} at {place}");
                }
            }
            for a in 0..n {
                for b in (0..n).filter(|b| *b != a) {
                    let times = rows
                        .iter()
                        .filter(|r| r.windows(2).any(|w| w == [a, b]))
                        .count();
                    assert_eq!(times, k / n, "n {n}: {b} after {a}");
                }
            }
        }
        // Shuffled orders are permutations, the same for the same seed.
        let p = Places {
            order: SetupOrder::Shuffle,
            seed: 7,
        };
        let row = |round| {
            (0..4)
                .map(|at| p.setup(at, 4, round, 0))
                .collect::<Vec<_>>()
        };
        let mut sorted = row(3);
        sorted.sort();
        assert_eq!(sorted, vec![0, 1, 2, 3]);
        assert_eq!(row(3), row(3));
        assert!((0..8).any(|r| row(r) != row(0)));
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
            "name = \"a\", engine = \"null\"",
            "name = \"a\", engine = \"nosuch\"",
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
        let e = err(&GOOD.replace("repeats = 2", "setup_order = \"alternate\""));
        assert!(
            e.contains("setup_order") && e.contains("rotate") && e.contains("shuffle"),
            "{e}"
        );
        let e = err(&GOOD.replace("repeats = 2", "repeats = 2\ninterval = \"10ms\""));
        assert!(e.contains("interval: at least 100ms"), "{e}");
    }

    /// A setup's own parameters win over the workload's for that setup's runs alone (seed
    /// 004's universal setups run benchmark_compare.sh's universal sequence).
    #[test]
    fn a_setups_params_take_over_the_workloads() {
        let e = load(&GOOD.replace(
            "{ name = \"b\", engine = \"null\" }",
            "{ name = \"b\", engine = \"null\", params = { steps = \"fillseq,readrandom\" } }",
        ))
        .unwrap();
        let steps = |i: usize| e.specs[i].params.given().get("steps").cloned();
        let (a, b) = (e.specs[0].setup.name.clone(), e.specs[2].setup.name.clone());
        assert_eq!((a.as_str(), steps(0).as_deref()), ("a", Some("fillseq")));
        assert_eq!(
            (b.as_str(), steps(2).as_deref()),
            ("b", Some("fillseq,readrandom"))
        );
        let bad = load(&GOOD.replace(
            "{ name = \"b\", engine = \"null\" }",
            "{ name = \"b\", engine = \"null\", params = { stepz = 1 } }",
        ));
        let e = format!("{:#}", bad.err().expect("should fail"));
        assert!(
            e.contains("setup[1] (b)") && e.contains("no parameter `stepz`"),
            "{e}"
        );
    }

    /// The keys every run shares reach each run, each typed as the flag is.
    #[test]
    fn the_files_drive_keys_reach_every_run() {
        use fathom_api::pace::Spacing;
        let shape = |keys: &str| {
            let e = load(&GOOD.replace("repeats = 2", keys)).unwrap();
            let o = e.specs[0].open_loop;
            o.map(|o| (o.ops_per_sec, o.spacing, o.shared))
        };
        assert_eq!(shape("interval = \"2s\""), None);
        assert_eq!(
            shape("rate = 100.0"),
            Some((100.0, Spacing::Poisson, false))
        );
        assert_eq!(
            shape("rate = 100.0\narrivals = \"uniform\"\nqueue = \"shared\""),
            Some((100.0, Spacing::Uniform, true))
        );
        let e = load(&GOOD.replace("repeats = 2", "interval = \"2s\"")).unwrap();
        assert_eq!(e.specs[0].interval, std::time::Duration::from_secs(2));
    }
}
