//! What the driver measures, whatever the family: an engine's identity, the processes and
//! directories whose cost is sampled, its own statistics, and its maintenance actions.

use crate::result::EngineStats;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Cumulative engine counters by name (e.g. `flush_write_bytes`), read at step boundaries.
pub type Counters = BTreeMap<String, f64>;

/// How much counter `key` grew between two readings (a missing reading counts as 0).
pub fn delta(before: &Counters, after: &Counters, key: &str) -> f64 {
    after.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0)
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
}

/// An engine or server under test, as the driver and samplers see it.
pub trait Target: Send + Sync {
    /// The engine's name (`rocksdb`).
    fn name(&self) -> &str;
    /// The engine's exact version (`11.8.1`).
    fn version(&self) -> String;
    /// Directories holding the database, for size and device sampling.
    fn data_dirs(&self) -> Vec<PathBuf>;
    /// Processes whose CPU and memory are the engine's: the harness itself when embedded.
    fn pids(&self) -> Vec<u32> {
        vec![std::process::id()]
    }
    /// The engine's cumulative statistics.
    fn counters(&self) -> Counters {
        Counters::new()
    }
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
}
