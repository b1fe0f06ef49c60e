//! Where a step's threads' time went and what they waited on, as results store it: the
//! figures the thread-time sampler (`sample::threads`) and the waits sampler (`sample::waits`)
//! fill, kept here so that the result schema depends on no sampler.

use fathom_macros::Merge;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One group of threads' time over a window, seconds summed over its threads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(sum(
    threads,
    busy,
    wall_s,
    cpu_s,
    runq_s,
    blkio_s,
    paced_s,
    other_s,
    blkio_dropped
))]
pub struct GroupTime {
    /// Threads seen in the window, and those busy in it (on a CPU, waiting for one or for
    /// block IO at least `BUSY` of the time they existed in it).
    pub threads: u32,
    pub busy: u32,
    /// The time the counted threads existed in the window: every client's; of the harness's
    /// and the engine's, the busy threads' (an idle thread's sleep says nothing).
    pub wall_s: f64,
    /// On a CPU (user and system).
    pub cpu_s: f64,
    /// Runnable, waiting for a CPU.
    pub runq_s: f64,
    /// Waiting for block IO; `None` without delay accounting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blkio_s: Option<f64>,
    /// The clients' open-loop pacing: asleep until an operation's intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced_s: Option<f64>,
    /// The rest of `wall_s`: asleep on a lock, the network, a condition or a timer.
    pub other_s: f64,
    /// Threads whose block IO waits were left out: more than their time off a CPU.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blkio_dropped: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// A step's threads' time: the clients', the background clients', fathom's other threads' and
/// the engine's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(fields(clients, background, harness, engine), max(read_ms))]
pub struct ThreadTime {
    pub clients: GroupTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<GroupTime>,
    pub harness: GroupTime,
    pub engine: GroupTime,
    /// What reading the threads' times at the window's two ends took, ms (fathom's thread,
    /// inside the window).
    #[serde(default)]
    pub read_ms: f64,
}

/// One group's samples by kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(sum(samples, seconds), first(exact))]
pub struct GroupWaits {
    /// Samples taken of the group's counted threads (with `--waits=bpf`, threads' readings,
    /// each the exact time since the last).
    pub samples: u64,
    /// Threads' seconds by kind (`cpu`, `futex`, `fsync`, `sleep`, `socket`, `io`, `fault`,
    /// `other`): samples / HZ.
    pub seconds: BTreeMap<String, f64>,
    /// Timed exactly (`--waits=bpf`): no sampling error.
    #[serde(default)]
    pub exact: bool,
}

impl GroupWaits {
    /// The share of `kind`, and its sampling error (one standard error, the samples taken as
    /// independent), both as fractions.
    pub fn share(&self, kind: &str) -> Option<(f64, f64)> {
        let total: f64 = self.seconds.values().sum();
        if total <= 0.0 || self.samples == 0 {
            return None;
        }
        let p = self.seconds.get(kind).copied().unwrap_or(0.0) / total;
        let error = if self.exact {
            0.0
        } else {
            (p * (1.0 - p) / self.samples as f64).sqrt()
        };
        Some((p, error))
    }
}

/// A step's waits, by group of threads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(
    fields(clients, harness, engine),
    max(hz, cost_ms),
    sum(unreadable, dropped, sleeps_left_out),
    first(method, stacks)
)]
pub struct Waits {
    /// `sample` (or empty, before `bpf` existed) or `bpf`.
    #[serde(default)]
    pub method: String,
    /// Samples a second (with `bpf`, readings a second).
    pub hz: u32,
    pub clients: GroupWaits,
    pub harness: GroupWaits,
    pub engine: GroupWaits,
    /// Samples whose system call could not be read (another user's process without root).
    #[serde(default)]
    pub unreadable: u64,
    /// What it cost over the step, ms of CPU: the sampling thread's; with `bpf` also the
    /// program's time in the kernel (on every CPU, for every thread switched).
    pub cost_ms: f64,
    /// With `bpf`: sleeps the program had no room to record.
    #[serde(default)]
    pub dropped: u64,
    /// With `bpf`: clients' long sleeps not kept whole past the step's cap (the slowest
    /// operations after them are not laid against their sleeps).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub sleeps_left_out: u64,
    /// With `bpf-stacks`: the folded stacks of the time asleep (ns), relative to the run
    /// directory (`steps/02-readrandom.offcpu.folded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacks: Option<String>,
}

/// What a thread off a CPU was doing: the keys of `GroupWaits::seconds`, in the reports' order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WaitKind {
    /// On a CPU or runnable (state R).
    Cpu,
    Futex,
    Fsync,
    Sleep,
    /// poll, select, epoll, socket and pipe reads and writes.
    Socket,
    /// File reads and writes, aio and io_uring waits, any other uninterruptible sleep.
    Io,
    /// A page fault (asleep outside a system call).
    Fault,
    Other,
}

impl WaitKind {
    pub const ALL: [WaitKind; 8] = [
        WaitKind::Cpu,
        WaitKind::Futex,
        WaitKind::Fsync,
        WaitKind::Sleep,
        WaitKind::Socket,
        WaitKind::Io,
        WaitKind::Fault,
        WaitKind::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WaitKind::Cpu => "cpu",
            WaitKind::Futex => "futex",
            WaitKind::Fsync => "fsync",
            WaitKind::Sleep => "sleep",
            WaitKind::Socket => "socket",
            WaitKind::Io => "io",
            WaitKind::Fault => "fault",
            WaitKind::Other => "other",
        }
    }
}
