//! What the driver measures, whatever the family: an engine's identity, the processes and
//! directories whose cost is sampled, its own statistics, and its maintenance actions.

use crate::stats::EngineStats;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Cumulative engine counters by name (e.g. `flush_write_bytes`), read at step boundaries.
pub type Counters = BTreeMap<String, f64>;

/// The counter a server reports the time it spent on its clients' statements under, µs summed
/// over its connections (PostgreSQL's `active_time`, MariaDB's `Busy_time`): set beside the
/// wire's time an operation when the clients reach it over a network (`--network`).
pub const STATEMENT_TIME_US: &str = "statement_time_us";

/// How much counter `key` grew between two readings (a missing reading counts as 0).
pub fn delta(before: &Counters, after: &Counters, key: &str) -> f64 {
    after.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0)
}

/// A single-file B-tree's statistics for a step: its counters at the end, and `pages_grown`,
/// the growth of the counter that measures the file in pages (LMDB, SQLite).
pub fn pages_grown(before: &Counters, after: &Counters, pages: &str) -> EngineStats {
    let mut s = after.clone();
    s.insert("pages_grown".into(), delta(before, after, pages));
    EngineStats::other(s)
}

/// Maintenance a step can ask for after its operations (db_bench's `flush`,
/// `waitforcompaction`), timed and charged to the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Maintenance {
    /// Write the memtable (or dirty cache) out.
    Flush,
    /// Wait until background compaction has nothing left to do.
    WaitForCompaction,
    /// Compact the files of an LSM's L0 into the next level holding data (db_bench's
    /// `compact0`); engines without levels do nothing.
    #[serde(rename = "compact0")]
    CompactLevel0,
}

/// Who an opened engine is and where its data lives: what every engine answers the same way.
#[derive(Clone, Debug, Default)]
pub struct Identity {
    /// The engine's name (`rocksdb`).
    pub name: String,
    /// The engine's exact version (`11.8.1`).
    pub version: String,
    /// Directories holding the database, for size and device sampling.
    pub data_dirs: Vec<PathBuf>,
    /// Processes whose CPU and memory are the engine's: fathom's own when embedded, the
    /// server's when it runs apart.
    pub pids: Vec<u32>,
}

impl Identity {
    pub fn new(name: &str, version: String, data_dirs: Vec<PathBuf>) -> Identity {
        Identity {
            name: name.to_string(),
            version,
            data_dirs,
            pids: vec![std::process::id()],
        }
    }

    /// The identity of an engine whose work is done by these processes (a server's).
    pub fn running_as(self, pids: Vec<u32>) -> Identity {
        Identity { pids, ..self }
    }
}

/// An engine or server under test, as the driver and samplers see it.
pub trait Target: Send + Sync {
    /// The engine's identity, kept since it opened.
    fn identity(&self) -> &Identity;
    /// The engine's name (`rocksdb`).
    fn name(&self) -> &str {
        &self.identity().name
    }
    /// The engine's exact version (`11.8.1`).
    fn version(&self) -> String {
        self.identity().version.clone()
    }
    /// Directories holding the database, for size and device sampling.
    fn data_dirs(&self) -> Vec<PathBuf> {
        self.identity().data_dirs.clone()
    }
    /// Processes whose CPU and memory are the engine's: the harness itself when embedded.
    fn pids(&self) -> Vec<u32> {
        self.identity().pids.clone()
    }
    /// How another client reaches the engine (a server's URL), when it can; none for an
    /// embedded one.
    fn url(&self) -> Option<String> {
        None
    }
    /// The engine's cumulative statistics.
    fn counters(&self) -> Counters {
        Counters::new()
    }
    /// Waits, briefly, until what the step's clients did has reached the counters (a server
    /// that publishes its sessions' statistics late); called once the clients are gone,
    /// before the step's last counters are read.
    fn settle(&self) {}
    /// Statistics of one step from counters read before and after it (`seconds` long). The
    /// default reports the deltas; engines add derived figures such as write amplification.
    fn step_stats(&self, before: &Counters, after: &Counters, seconds: f64) -> EngineStats {
        let _ = seconds;
        EngineStats::other(
            after
                .keys()
                .map(|k| (k.clone(), delta(before, after, k)))
                .collect(),
        )
    }
    /// Performs a maintenance action; engines without the concept do nothing.
    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        let _ = action;
        Ok(())
    }
    /// Fails, saying why and with the tail of the server's log, when the engine can no longer
    /// serve (a server that exited). Asked after a step fails.
    fn check(&self) -> anyhow::Result<()> {
        Ok(())
    }
    /// The options the engine really runs with, for the run's record.
    fn effective_options(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
    /// What reports should say under the tables of every run on this engine (how its figures
    /// are to be read), recorded in the run's `notes`.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// What the engine did in the background between two moments (Unix microseconds), from
    /// its own account, oldest first; engines that keep none say nothing.
    fn events(&self, from_us: u64, to_us: u64) -> Vec<crate::events::EngineEvent> {
        let _ = (from_us, to_us);
        Vec::new()
    }
    /// Whether `events` tells anything (an engine without an account of its background work
    /// says so, rather than seeming to have done nothing).
    fn keeps_events(&self) -> bool {
        false
    }
    /// The engine's per-operation work counters, where it counts them per thread (an
    /// embedded engine running on the client's thread).
    fn work_meter(&self) -> Option<&dyn crate::work::WorkMeter> {
        None
    }
    /// The statements the engine logged between two moments (Unix microseconds), with what
    /// each did, where it logs them (a server fathom started with `statement_log`): the kept
    /// operations' work, joined by session and time; `None` when it keeps no such log.
    fn statements(&self, from_us: u64, to_us: u64) -> Option<crate::work::StatementLog> {
        let _ = (from_us, to_us);
        None
    }
}
