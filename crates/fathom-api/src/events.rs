//! What an engine did in the background during a step — a flush, a compaction, writes stalled
//! or stopped, a checkpoint, a session waiting for a lock — with when it began and ended: the timeline a step's slowest
//! operations are laid against ("Why the slowest operations were slow").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One thing the engine did, from its own account (RocksDB's LOG, a server's views).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EngineEvent {
    /// What it was: one of `WHATS`.
    pub what: String,
    /// When it began and ended, Unix microseconds; an event still going on at the step's end
    /// ends there.
    pub start_us: u64,
    pub end_us: u64,
    /// The engine's own details (`L0 -> L1, 61.2 MiB written`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// For an event seen at moments (a look at a server's views): from the first look that saw
    /// it to the last, where it surely was; `start_us..end_us` is then every moment it may
    /// have been in (from the look before to the look after). The time an operation spent
    /// inside it is counted over this span; whether operations met it by chance, over the other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_us: Option<[u64; 2]>,
}

/// The kinds of event engines report, in the order reports list them.
pub const WHATS: &[&str] = &[
    STOP, STALL, LOCK_WAIT, FLUSH, COMPACTION, CHECKPOINT, EVICTION, VACUUM, PURGE,
];

/// Writes stopped until a flush or compaction catches up (RocksDB's "Stopping writes").
pub const STOP: &str = "write stop";
/// Writes slowed down by the engine (RocksDB's "Stalling writes").
pub const STALL: &str = "write stall";
/// A server's session waiting for a lock another session holds (PostgreSQL's lock waits
/// longer than its `deadlock_timeout`, from its log; InnoDB's, from MariaDB's views).
pub const LOCK_WAIT: &str = "lock wait";
/// A memtable or dirty cache written out.
pub const FLUSH: &str = "flush";
/// An LSM's compaction.
pub const COMPACTION: &str = "compaction";
/// A B-tree's or a server's checkpoint.
pub const CHECKPOINT: &str = "checkpoint";
/// A server's background vacuum or analyze of a table (PostgreSQL's autovacuum).
pub const VACUUM: &str = "autovacuum";
/// Old row versions no transaction can see any more removed (InnoDB's purge of its history
/// list).
pub const PURGE: &str = "purge";
/// Client threads evicting pages from a full cache themselves (WiredTiger's application
/// eviction), instead of the engine's eviction threads.
pub const EVICTION: &str = "eviction";

impl EngineEvent {
    /// Where it surely was: `seen_us`, or its whole span.
    pub fn sure(&self) -> (u64, u64) {
        self.seen_us
            .map_or((self.start_us, self.end_us), |[s, e]| (s, e))
    }

    /// Whether the event overlaps `[start_us, end_us]`.
    pub fn overlaps(&self, start_us: u64, end_us: u64) -> bool {
        self.start_us <= end_us && start_us <= self.end_us
    }
}
