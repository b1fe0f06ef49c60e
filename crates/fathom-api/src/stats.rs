//! The figures an engine reports about itself over a step (write amplification, stalls, its
//! cache), in the form results store them: an engine fills them without knowing the result schema.

use fathom_macros::Merge;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An engine's own statistics over one step. The named figures mean the same on every engine
/// that has them (`None` on one that does not); `other` holds the engine's own, by name. On
/// disk they are one JSON object, the named figures beside the others.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(first(
    ingest_gb,
    flush_gb,
    compact_write_gb,
    compact_read_gb,
    c_wgb,
    w_amp,
    wal_gb,
    c_wsecs,
    c_csecs,
    stall_pct,
    block_cache_hit_pct,
    lsm_gb,
    pending_compaction_gb,
    cache_gb,
    cache_dirty_gb,
    cache_max_gb,
    other
))]
pub struct EngineStats {
    /// GiB the user wrote (RocksDB's ingest: the WAL's payload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingest_gb: Option<f64>,
    /// GiB written by flushes (memtable or dirty cache to files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_gb: Option<f64>,
    /// GiB written and read by compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_write_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_read_gb: Option<f64>,
    /// GiB written by flush and compaction together (benchmark.sh's c_wgb).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_wgb: Option<f64>,
    /// Write amplification: flush and compaction bytes per byte ingested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_amp: Option<f64>,
    /// GiB written to the write-ahead log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_gb: Option<f64>,
    /// Seconds flush and compaction ran (c_wsecs) and compaction's CPU seconds (c_csecs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_wsecs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_csecs: Option<f64>,
    /// Percent of the step's time writes were stalled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_pct: Option<f64>,
    /// Percent of block cache lookups that hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_cache_hit_pct: Option<f64>,
    /// Size of the LSM tree's files and the compaction debt at the step's end, GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lsm_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_compaction_gb: Option<f64>,
    /// The engine's cache at the step's end, GiB: in use (WiredTiger's bytes in the cache,
    /// RocksDB's block cache and memtables), of that not yet written (WiredTiger's dirty bytes,
    /// RocksDB's memtables), and its configured size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_dirty_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_max_gb: Option<f64>,
    /// Engine-specific figures, by name.
    #[serde(flatten)]
    pub other: BTreeMap<String, f64>,
}

impl EngineStats {
    /// Statistics with only engine-specific figures.
    pub fn other(other: BTreeMap<String, f64>) -> EngineStats {
        EngineStats {
            other,
            ..EngineStats::default()
        }
    }

    /// True when the engine reported no figure at all.
    pub fn is_empty(&self) -> bool {
        self == &EngineStats::default()
    }
}
