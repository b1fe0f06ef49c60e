//! Where a run is written and who watches it: what the runner, its steps and a supervised
//! run in a process of its own all take, in a module that needs none of them.

use crate::resolve::RunSpec;
use fathom_api::leftovers;
use fathom_api::step::StepPlan;
use fathom_api::stop::Stop;
use fathom_schema::result::{ExperimentCell, IntervalRecord, RunManifest, StepSummary};
use std::path::{Path, PathBuf};

/// Where and how a run is written. It crosses to a run's own process (`supervise`) serialized,
/// without its stop token and launcher.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Place {
    /// The results directory the run directory goes in.
    pub results: PathBuf,
    /// The run directory's name; `None` for a timestamped one.
    pub dir_name: Option<String>,
    /// Where the database lives; `None` for RESULTS/.data/RUN, removed afterwards.
    pub data_dir: Option<PathBuf>,
    pub keep_data: bool,
    /// Open the database already in `data_dir` (left by an earlier run with it) instead of
    /// requiring an empty directory: one step per process, as db_bench's `--use_existing_db`.
    pub existing_data: bool,
    /// Measure the harness's own cost per operation on the null engine before each step.
    pub calibrate: bool,
    /// The experiment cell this run is, if any.
    pub cell: Option<ExperimentCell>,
    /// A `fathom` executable (one with `fathom child-run`): with it, an embedded engine under
    /// a memory limit runs in a child process inside the limited group, so that a kill for
    /// memory is recorded and survived, and a run with another allocator gets the process it
    /// needs (`supervise`).
    #[serde(skip)]
    pub launcher: Option<PathBuf>,
    /// When steps may start (`--start-at`, `--barrier`).
    pub gate: crate::gate::Gate,
    /// The run's process is a client host of its own (`--host-namespace`): how it is linked
    /// to the server's namespace, for its host facts; its clients' bytes and round trips are
    /// metered.
    #[serde(default)]
    pub host_link: Option<String>,
    /// Asked to stop (Ctrl-C): the current step ends early, the run is marked interrupted.
    #[serde(skip)]
    pub stop: Stop,
}

/// What a run tells whoever watches it (the command's progress display).
pub trait Observer {
    /// The run's header, once the engine is open and the run directory exists.
    fn run_started(&mut self, manifest: &RunManifest, spec: &RunSpec, dir: &std::path::Path) {
        let _ = (manifest, spec, dir);
    }
    fn step_started(&mut self, index: usize, total: usize, plan: &StepPlan) {
        let _ = (index, total, plan);
    }
    fn interval(&mut self, record: &IntervalRecord) {
        let _ = record;
    }
    fn step_finished(&mut self, summary: &StepSummary) {
        let _ = summary;
    }
}

/// An observer that shows nothing.
pub struct Quiet;
impl Observer for Quiet {}

/// The suffix of the marker beside a data directory in use.
pub(crate) const RUNNING: &str = ".running";

/// Removes the data directories of `RESULTS/.data` whose run was killed (their marker names a
/// process that no longer exists); directories kept on purpose have no marker.
pub(crate) fn remove_dead_data_dirs(data_root: &Path) {
    leftovers::remove_dead(
        data_root,
        "data directory",
        |n| leftovers::pid_suffix(n.strip_suffix(RUNNING)?),
        |marker| {
            let dir = marker.with_extension("");
            // A device of its own the run mounted there goes first, then its image.
            fathom_measure::throttle::release_own_device(&dir);
            let image = fathom_measure::own_device::image_of(&dir);
            if image.exists() {
                std::fs::remove_file(&image)?;
            }
            if dir.exists() {
                std::fs::remove_dir_all(&dir)?;
            }
            std::fs::remove_file(marker)
        },
    );
}
