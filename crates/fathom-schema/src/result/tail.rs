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
    /// With `--waits=bpf`: the client thread's sleeps of at least 50 µs during the operation,
    /// by kind of wait, longest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asleep: Vec<Asleep>,
}

/// Time a slow operation's thread spent asleep in one kind of wait (`io`, `futex`, …).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Asleep {
    pub kind: String,
    pub us: f64,
}

impl SlowOp {
    /// When it ended, Unix microseconds.
    pub fn end_us(&self) -> u64 {
        self.start_us + self.latency_us.round() as u64
    }
}
