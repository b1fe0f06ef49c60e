//! Experiments: a TOML file naming setups, workloads, client counts and repeats, run as a
//! matrix in a stated order into one results directory. Each cell is a run directory named
//! after it; a re-run skips the cells that finished with the same definition and sets aside
//! those that did not finish, so an interrupted experiment resumes where it stopped.

mod file;
#[cfg(test)]
mod fuzz;
mod plan;
mod resume;
mod rounds;
mod shard;
mod slurm;
pub mod union;
mod vars;

pub use file::{SetupOrder, DEFAULT_ORDER};
pub use plan::plan;
pub use resume::{run, Failed, Outcome};
pub use rounds::{parse_repeats, Rounds, RoundsInput};
pub use shard::{parse as parse_shard, Shard};

use crate::resolve::RunSpec;
use fathom_schema::store::slug;
use serde::Serialize;
use std::path::PathBuf;

/// One run of the matrix.
pub struct Cell {
    pub setup: usize,
    pub workload: usize,
    pub clients: usize,
    pub repeat: usize,
    /// The setup's place among its round's setups at this workload and client count, from 1.
    pub place: usize,
}

/// An experiment file, resolved and checked: every cell's spec is known before the first runs.
pub struct Experiment {
    pub file: PathBuf,
    pub name: String,
    pub description: String,
    /// Specs of every (workload, setup, client count), in that nesting.
    specs: Vec<RunSpec>,
    setups: usize,
    setup_names: Vec<String>,
    workloads: usize,
    client_counts: Vec<usize>,
    /// Every cell up to `rounds.max` repeats, in the file's order. Rounds past `min` run only
    /// the cells an undecided comparison needs.
    pub cells: Vec<Cell>,
    pub rounds: Rounds,
    /// The order of the setups within each round.
    pub setup_order: SetupOrder,
    /// The verdicts that fail the run once it has reported (`fail_on`): a CI job's gate.
    pub fail_on: Vec<fathom_stats::verdict::gate::FailOn>,
    /// The share of the cells this process runs (`--shard`); `None`: all of them.
    pub shard: Option<Shard>,
    /// When each run's steps may start (`--start-at`, `--barrier`).
    pub gate: crate::gate::Gate,
    /// Where each finished run is also recorded.
    pub store: crate::records::Store,
}

impl Experiment {
    /// Where its runs' live figures go (the same for every run: they are run options).
    pub fn live(&self) -> crate::input::LiveTargets {
        self.specs
            .first()
            .map(|s| s.live.clone())
            .unwrap_or_default()
    }

    /// The spec a cell runs.
    pub fn spec(&self, cell: &Cell) -> &RunSpec {
        let c = self
            .client_counts
            .iter()
            .position(|&c| c == cell.clients)
            .expect("a cell's client count is one of the experiment's");
        &self.specs[(cell.workload * self.setups + cell.setup) * self.client_counts.len() + c]
    }

    /// The run directory name of a cell.
    pub fn cell_name(&self, cell: &Cell) -> String {
        let p = self.spec(cell);
        slug(&format!(
            "{}.{}.c{}.r{}",
            p.setup.name, p.title, cell.clients, cell.repeat
        ))
    }

    /// A digest of the whole experiment's definition, repeats aside: every cell's, in order.
    /// Shards of one experiment share it.
    pub fn definition(&self) -> String {
        let all: Vec<String> = self.specs.iter().map(fingerprint).collect();
        fnv1a(&all.join(","))
    }

    /// A digest of everything that defines a cell's run, repeat aside: a stable hash of its
    /// canonical JSON (maps in key order), the same in every build.
    pub fn fingerprint(&self, cell: &Cell) -> String {
        fingerprint(self.spec(cell))
    }

    /// The digest fathom gave the same cell before fingerprints hashed canonical JSON, so a
    /// results directory written then still resumes.
    pub fn legacy_fingerprint(&self, cell: &Cell) -> String {
        let p = self.spec(cell);
        let open_loop = p.open_loop.map(|o| {
            (
                o.ops_per_sec,
                o.spacing == fathom_api::pace::Spacing::Poisson,
            )
        });
        let shared = if p.open_loop.is_some_and(|o| o.shared) {
            "shared"
        } else {
            ""
        };
        let text = format!(
            "{}\u{1}{}\u{1}{:?}\u{1}{:?}\u{1}{}\u{1}Params {{ values: {:?} }}\u{1}{}\u{1}{:?}{shared}\u{1}{:?}",
            p.setup.engine.name,
            p.setup.options,
            p.setup.settings,
            p.setup.memory_limit,
            p.workload.name,
            p.params.given(),
            cell.clients,
            open_loop,
            p.interval,
        );
        fnv1a(&text)
    }
}

/// What defines a run, for its fingerprint.
#[derive(Serialize)]
struct Definition<'a> {
    engine: &'a str,
    options: &'a str,
    settings: &'a std::collections::BTreeMap<String, String>,
    memory_limit: Option<u64>,
    /// Absent without a profile, so the cells of files written before profiles keep their digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<&'a fathom_schema::result::device::DeviceProfile>,
    workload: &'a str,
    params: &'a std::collections::BTreeMap<String, String>,
    clients: usize,
    rate: Option<f64>,
    poisson: Option<bool>,
    shared_queue: Option<bool>,
    interval_ms: u128,
}

fn fingerprint(spec: &RunSpec) -> String {
    let open = spec.open_loop;
    let definition = Definition {
        engine: spec.setup.engine.name,
        options: &spec.setup.options,
        settings: &spec.setup.settings,
        memory_limit: spec.setup.memory_limit,
        device: spec.setup.device.as_ref(),
        workload: spec.workload.name,
        params: spec.params.given(),
        clients: spec.clients,
        rate: open.map(|o| o.ops_per_sec),
        poisson: open.map(|o| o.spacing == fathom_api::pace::Spacing::Poisson),
        shared_queue: open.map(|o| o.shared),
        interval_ms: spec.interval.as_millis(),
    };
    fnv1a(&serde_json::to_string(&definition).expect("a definition is plain data"))
}

/// FNV-1a, 64 bits, in hex: stable across builds, unlike std's hasher.
pub(crate) fn fnv1a(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}
