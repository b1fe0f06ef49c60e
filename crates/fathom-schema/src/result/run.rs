//! What a run records about itself in `run.json`: its setup, its host, how it ended, where
//! it sits in an experiment; and the UTC timestamps it records them with.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The setup a run used, resolved.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SetupRecord {
    /// The user's label for the setup (`rocksdb.config2`), or the engine name.
    pub name: String,
    pub engine: String,
    pub engine_version: String,
    /// The engine's own options string, as given.
    pub options: String,
    /// fathom's typed engine settings (cache size, compaction style, O_DIRECT, WAL, sync).
    pub settings: BTreeMap<String, String>,
    pub memory_limit_bytes: Option<u64>,
    /// The device profile the run's IO was held to (`--device`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_profile: Option<super::device::DeviceProfile>,
    /// The network the clients reached the server over (`--network`); none for the unix
    /// socket of the runs before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_profile: Option<super::network::NetworkProfile>,
    /// What the engine reports it really runs with (e.g. RocksDB's effective options).
    pub effective: BTreeMap<String, String>,
}

/// Facts about the host a run used.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub kernel: String,
    pub cores: usize,
    pub memory_bytes: u64,
    pub device: Option<String>,
    pub data_dir: String,
    pub fathom_version: String,
    /// How memory was limited, e.g. `cgroup v1 /sys/fs/cgroup/memory/.../fathom-123`.
    pub memory_limit: Option<String>,
    pub note: Option<String>,
    /// The host's identity for comparisons (`sample/identity.rs`): CPU model, the data
    /// directory's disk (model or driver), its IO scheduler and filesystem, and the CPU and
    /// memory limits of the cgroup fathom ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_scheduler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_limits: Option<String>,
    /// The data directory's device as `fathom calibrate` measured it, where it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_limits: Option<super::device::DeviceLimits>,
    /// How the device profile was imposed, and what of the run's IO escaped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_throttle: Option<String>,
    /// How the network profile's path was made (`--network`): the server's TCP address, the
    /// relay's and its own round trip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_path: Option<String>,
}

/// `run.json`: what was run, where, and how it ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    pub format_version: u32,
    pub setup: SetupRecord,
    pub workload: String,
    pub params: BTreeMap<String, String>,
    pub clients: usize,
    pub host: HostFacts,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub error: Option<String>,
    /// What the engine says of its figures, for reports to print under the tables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The fathom process running it, while it runs: a report shows a `running` run whose
    /// process is gone as killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The experiment cell this run is, when an experiment file ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<ExperimentCell>,
    /// The runs this run was merged from and how they shared their engine, for a merged run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergeRecord>,
    /// The run opened a database an earlier run left (`--existing-data`, as db_bench's
    /// `--use_existing_db`) instead of starting on an empty one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub existing_data: bool,
}

/// The parameter a workload file's run records the file's `name` in.
pub const WORKLOAD_NAME: &str = "workload_name";

impl RunManifest {
    /// The workload's name as the user knows it: a workload file's `name` (`ycsb-a`), else the
    /// workload's (`declared` runs every file, and says nothing to a reader).
    pub fn workload_title(&self) -> &str {
        self.params.get(WORKLOAD_NAME).unwrap_or(&self.workload)
    }
}

/// How the runs a merge joined shared their engine, which decides how their sizes, engine
/// counters and device rates combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Topology {
    /// Each host ran its own engine (an embedded one, or a server it started): a shard each.
    /// Sizes, RSS, engine counters and device rates add up.
    Shards,
    /// Every host was a client of one server (`url`): the server's figures are one host's
    /// reading, the first's.
    OneServer,
}

/// What `fathom merge` made a run of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergeRecord {
    /// The hosts whose runs were merged, in order.
    pub hosts: Vec<String>,
    pub topology: Topology,
}

/// How a run stands or ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Started and not ended (or the harness was killed).
    #[default]
    Running,
    Finished,
    /// Ctrl-C ended it; the finished steps are saved.
    Interrupted,
    Failed,
    /// Merged from runs of several hosts of which some did not finish.
    Partial,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Partial => "partial",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a run sits in an experiment's matrix.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExperimentCell {
    /// The experiment's name (its file's `name`).
    pub name: String,
    /// The cell's run directory name: setup, workload, clients and repeat.
    pub cell: String,
    /// Which repeat, from 1.
    pub repeat: usize,
    /// A digest of everything that defines the cell (setup, settings, parameters, clients),
    /// so a re-run skips a finished cell only when its definition is unchanged.
    pub fingerprint: String,
    /// Adaptive repeats' `max`: the most rounds the experiment runs while a comparison is
    /// undecided (`None`: a fixed number of repeats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repeats: Option<usize>,
    /// Adaptive repeats' `min`: the rounds every cell runs before any is judged. With `max`
    /// it gives the looks a comparison's verdict is spread over (`fathom_stats::verdict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_repeats: Option<usize>,
    /// A digest of the whole experiment's definition (every cell's, repeats aside): shards of
    /// one experiment share it, and reports refuse to mix runs whose digests differ.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub definition: String,
    /// The shard that ran it (`K/N`), when the experiment was sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The order of the setups within each round: `rotate`, `shuffle` or `fixed` (`None`:
    /// recorded before fathom rotated them, when the order was fixed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_order: Option<String>,
    /// The run's place among its round's setups at its workload and client count, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<usize>,
}

pub use fathom_api::units::{now_utc, parse_utc_timestamp, utc_timestamp};

impl HostFacts {
    /// What differs between two hosts for a comparison, one `what: a vs b` each: CPU model and
    /// count, memory (beyond 1%), kernel, disk, IO scheduler, filesystem, cgroup limits and
    /// fathom's version. The hostname alone is no difference (clones of one machine image).
    pub fn differences(&self, other: &HostFacts) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |what: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{what} `{a}` vs `{b}`"));
            }
        };
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
        differ("CPU", opt(&self.cpu_model), opt(&other.cpu_model));
        differ("cores", self.cores.to_string(), other.cores.to_string());
        let (a, b) = (self.memory_bytes as f64, other.memory_bytes as f64);
        if (a - b).abs() > 0.01 * a.max(b) {
            differ(
                "memory",
                format!("{:.1}G", a / fathom_api::units::GIB),
                format!("{:.1}G", b / fathom_api::units::GIB),
            );
        }
        differ("kernel", self.kernel.clone(), other.kernel.clone());
        differ("disk", opt(&self.disk_model), opt(&other.disk_model));
        differ(
            "IO scheduler",
            opt(&self.disk_scheduler),
            opt(&other.disk_scheduler),
        );
        differ("filesystem", opt(&self.filesystem), opt(&other.filesystem));
        differ(
            "cgroup limits",
            opt(&self.cgroup_limits),
            opt(&other.cgroup_limits),
        );
        differ(
            "fathom",
            self.fathom_version.clone(),
            other.fathom_version.clone(),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_back() {
        for t in [0u64, 951_782_400, 1_795_676_400, 4_102_444_799] {
            assert_eq!(parse_utc_timestamp(&utc_timestamp(t)), Some(t));
        }
        assert_eq!(parse_utc_timestamp("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_utc_timestamp("2026-11-26 07:00:00"), None);
    }

    #[test]
    fn timestamps() {
        for (secs, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_704_326_400 + 3_661, "2024-01-04T01:01:01Z"),
        ] {
            assert_eq!(utc_timestamp(secs), text);
        }
    }
}
