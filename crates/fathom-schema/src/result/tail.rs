//! A step's slowest operations and what its engine did meanwhile, as the run recorded them:
//! the evidence the report's "Why the slowest operations were slow" is drawn from
//! (`fathom_stats::tail` weighs it).

use fathom_api::events::EngineEvent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The slowest operations of a step, per kind, and the engine's events over the step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tail {
    /// The slowest operations of each kind over all clients, slowest first within a kind
    /// (at most `kept` a kind).
    pub slowest: Vec<SlowOp>,
    /// How many a kind were kept at most.
    pub kept: usize,
    /// The measured window the operations and events were taken from, Unix microseconds.
    pub window_us: [u64; 2],
    /// What the engine did in the background over the window (its own account).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EngineEvent>,
    /// Whether the engine keeps an account of its events at all (an engine without one
    /// leaves `events` empty for that reason, not because nothing happened).
    #[serde(default)]
    pub engine_tells: bool,
    /// Whether each operation's sleeps were timed (`--waits=bpf`): `asleep` is then filled.
    #[serde(default)]
    pub sleeps_timed: bool,
    /// What the engine counted of each operation's work (RocksDB's perf context:
    /// `tombstones skipped`, `blocks read`, …; a server's log of statements: `rows examined`,
    /// `buffers hit`, …), in the order of each operation's `work`; empty when it counts none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub work: Vec<String>,
}

/// One of the slowest operations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SlowOp {
    /// Its kind (`readrandom`, `GET_LINKS_LIST`).
    pub kind: String,
    /// The client that ran it, from 0.
    pub client: usize,
    /// When it began (from its intended start in open loop), Unix microseconds.
    pub start_us: u64,
    /// Its latency, microseconds.
    pub latency_us: f64,
    /// The client's thread.
    #[serde(default)]
    pub tid: u32,
    /// The server session the client sent it on (a PostgreSQL backend's pid, a MariaDB
    /// connection id), where the server logs its statements (`statement_log`); 0: not known.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub session: u64,
    /// With `--waits=bpf`: the client thread's sleeps, and waits for a CPU, of at least 50 µs
    /// during the operation, by kind of wait, longest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asleep: Vec<Asleep>,
    /// Where the engine counts it (`Tail::work` names the counters): what the operation did,
    /// against the operations of its kind just before it on its client (on a server that logs
    /// its statements: its statements' work, against operations made of the same shapes of
    /// statement just before it on any session).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub work: Vec<WorkCount>,
    /// How many operations `work` is set against (up to 64).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nearby: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// One counter of a slow operation's work, against the operations just before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorkCount {
    /// What this operation did (`1204` tombstones skipped).
    pub n: u64,
    /// The median of the nearby operations.
    pub median: u64,
    /// Nearby operations that did as much or more.
    pub at_least: u32,
}

/// Time a slow operation's thread spent asleep in one kind of wait (`io`, `futex`, …), or
/// `waiting for a cpu` (runnable, not on one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Asleep {
    pub kind: String,
    pub us: f64,
    /// With `--waits=bpf-stacks`: where the longest such sleep of 500 µs or more inside the
    /// operation slept, its stack's first frame outside the C, C++ and Rust runtimes with its
    /// caller (`rocksdb::WriteThread::AwaitState < rocksdb::WriteThread::JoinBatchGroup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl SlowOp {
    /// When it ended, Unix microseconds.
    pub fn end_us(&self) -> u64 {
        self.start_us + self.latency_us.round() as u64
    }
}
