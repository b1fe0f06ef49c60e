//! What a user writes, before it is checked: the same structures whether they come from
//! command flags (`--engine`, `--setup`, `--set`, `--param`, `--duration`, ...) or from an
//! experiment file's tables, so both go through one resolver.

use fathom_api::knobs::{Size, Span};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A setup: an engine with its options and settings (`--engine ... --setup ... --set ...`, or
/// an experiment file's `[[setup]]` table).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupInput {
    /// The setup's label in reports; empty for the engine's name.
    #[serde(default)]
    pub name: String,
    pub engine: String,
    /// The engine's own options string; `@FILE` reads it from a file, one item per line.
    #[serde(default)]
    pub options: String,
    /// A file holding the options string (an experiment file's alternative to `@FILE`).
    pub options_file: Option<PathBuf>,
    /// fathom's typed engine settings.
    #[serde(default, deserialize_with = "scalars")]
    pub settings: BTreeMap<String, String>,
    /// This setup's memory limit, over the one every run has.
    pub memory_limit: Option<Size>,
    /// This setup's C allocator, over the one every run has (`allocator` below).
    pub allocator: Option<AllocatorName>,
    /// Profile this setup's steps (`true`) or not (`false`), over the experiment's `profile`.
    pub profile: Option<bool>,
    /// Workload parameters this setup's runs take over the workload's own (a universal
    /// compaction setup's `sequence = "universal"` for dbbench).
    #[serde(default, deserialize_with = "scalars")]
    pub params: BTreeMap<String, String>,
}

/// A workload and its parameters (`--workload ... --param ...`, or a `[[workload]]` table).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadInput {
    pub name: String,
    #[serde(default, deserialize_with = "scalars")]
    pub params: BTreeMap<String, String>,
}

/// How every run of one invocation is driven: `fathom run`'s flags below, or the same keys at
/// an experiment file's top level.
#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = "Driving each run")]
pub struct DriveInput {
    /// Length of each timed step (sets the workload's `duration` parameter; with an
    /// experiment file, overrides the file's).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub duration: Option<Span>,
    /// Limit the engine's memory, page cache included (e.g. 256m), with a cgroup child group
    /// (as root, or in a cgroup delegated to you: see the README's `--memory-limit`).
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<Size>,
    /// Open loop: total intended operations per second for every timed step (loads and other
    /// fixed-work steps stay closed loop); latency then counts from each operation's intended
    /// start.
    #[arg(long, value_name = "OPS_PER_SEC")]
    pub rate: Option<f64>,
    /// Search each timed step for the highest arrival rate that meets TARGET (`p99<=5ms`,
    /// `READ:p99.9<=20ms`, `failed<=1%`, several joined by commas): a closed-loop run for the
    /// capacity, then open-loop probes, each a step of the run (`fathom findmax`).
    #[arg(long, value_name = "TARGET")]
    pub find_max: Option<String>,
    /// Spacing of open-loop arrivals [default: poisson].
    #[arg(long, value_enum)]
    pub arrivals: Option<Arrivals>,
    /// Open-loop queueing [default: per-client].
    #[arg(long, value_enum)]
    pub queue: Option<Queue>,
    /// Seconds between interval records [default: 1s].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub interval: Option<Span>,
    /// The C allocator an embedded engine runs with, preloaded into a process of its own for
    /// the run (`scripts/setup.sh --allocators` installs them) [default: glibc].
    #[arg(long, value_enum)]
    pub allocator: Option<AllocatorName>,
    /// Sample where each timed step's CPU goes with Linux perf (call graphs of fathom's
    /// process and the server's, over the step's measured span): folded stacks per step,
    /// flame graphs in the HTML report, top functions in the others.
    #[arg(long)]
    pub profile: bool,
    /// Samples per second per CPU for --profile [default: 99].
    #[arg(long, value_name = "HZ")]
    pub profile_hz: Option<u32>,
    /// What each thread off a CPU waits on (a lock, a sync, a timer, the network, the device, a
    /// page fault) over each step's measured span: `--waits` samples it 50 times a second;
    /// `--waits=bpf` times every sleep exactly with an eBPF program on the scheduler's
    /// tracepoints (root, a kernel with BTF).
    #[arg(long, value_name = "HOW", num_args = 0..=1, require_equals = true,
          default_missing_value = "sample", value_parser = fathom_core::sample::waits::Method::parse)]
    pub waits: Option<fathom_core::sample::waits::Method>,
}

/// How open-loop arrivals are spaced (`--arrivals`, an experiment's `arrivals`).
#[derive(clap::ValueEnum, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Every 1/rate seconds.
    Uniform,
    /// Exponential gaps: a Poisson process.
    Poisson,
}

/// Who takes an open-loop arrival (`--queue`, an experiment's `queue`).
#[derive(clap::ValueEnum, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Queue {
    /// Each client its own arrivals at its share of the rate.
    PerClient,
    /// One stream at the total rate, each idle client taking the next arrival, as
    /// LinkbenchX's requesters.
    Shared,
}

/// A C allocator an embedded engine can run with (`--allocator`, an experiment's or a
/// setup's `allocator`).
#[derive(clap::ValueEnum, serde::Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AllocatorName {
    /// glibc's malloc, which fathom is linked with.
    Glibc,
    /// gperftools' tcmalloc, as MongoDB links it.
    Tcmalloc,
    /// jemalloc.
    Jemalloc,
}

/// A table of scalars (strings, numbers, booleans) read as the strings `--set`/`--param` would
/// have given.
fn scalars<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        Bool(bool),
        Int(i64),
        Float(f64),
        Text(String),
    }
    let map = BTreeMap::<String, Scalar>::deserialize(d)?;
    Ok(map
        .into_iter()
        .map(|(k, v)| {
            let text = match v {
                Scalar::Bool(b) => b.to_string(),
                Scalar::Int(i) => i.to_string(),
                Scalar::Float(f) => f.to_string(),
                Scalar::Text(s) => s,
            };
            (k, text)
        })
        .collect())
}
