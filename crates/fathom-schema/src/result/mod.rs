//! The result model: what a run writes to disk and every report reads. Field names are a
//! contract (docs/results.md): add fields, never rename or drop one.

pub mod device;
pub mod network;
mod run;
pub mod tail;
pub mod threads;

use crate::latency::Latency;
use fathom_api::kind::Role;
use fathom_macros::Merge;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the on-disk layout, bumped on incompatible changes.
pub const FORMAT_VERSION: u32 = 1;

/// Per-operation host cost. `None` where the figure is unknown (no block device, no ops).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PerOp {
    /// Disk reads per operation.
    pub reads: Option<f64>,
    /// KB read from / written to the device per operation.
    pub read_kb: Option<f64>,
    pub write_kb: Option<f64>,
    /// Host-wide context switches per operation.
    pub cs: Option<f64>,
    /// Host-wide CPU (vmstat us + sy) per operation, microseconds.
    pub cpu_us: Option<f64>,
    /// CPU of the engine's processes per operation (the whole fathom process when embedded).
    pub cpu_us_engine: Option<f64>,
    /// CPU of fathom's own process per operation; null for an embedded engine, whose harness
    /// share is the calibrated `harness_ns_per_op` instead.
    pub cpu_us_harness: Option<f64>,
    /// KB the engine's processes caused to be read from storage per operation
    /// (`/proc/PID/io` read_bytes; fathom's whole process when the engine is embedded).
    #[serde(default)]
    pub engine_read_kb: Option<f64>,
    /// KB the engine's processes caused to be written per operation (`/proc/PID/io`
    /// write_bytes, pidstat's kB_wr/s): counted when the data is dirtied, where `write_kb`
    /// counts the device's writes when the kernel writes the pages back, so a short step sees
    /// its own writes here even when the device has not yet.
    #[serde(default)]
    pub engine_write_kb: Option<f64>,
    /// Times fathom's own threads blocked per operation (voluntary context switches): at
    /// least one per round trip to a server, which is where a client's kernel time goes
    /// (docs/performance.md, "What one blocking wait costs"); null for an embedded engine.
    #[serde(default)]
    pub waits_harness: Option<f64>,
}

/// Database size in GiB, as `du` reports it and with `--apparent-size`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DbGb {
    pub allocated: f64,
    pub apparent: f64,
}

/// iostat- and vmstat-style rates over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(
    first(
        device, rps, rmbps, rawait_ms, rareqsz_kb, rrqmps, wps, wmbps, wawait_ms, wareqsz_kb
    ),
    first(
        wrqmps,
        aqu_sz,
        fps,
        cs_per_sec,
        us_pct,
        sy_pct,
        iowait_pct,
        engine_user_secs,
        engine_system_secs
    ),
    min(idle_pct),
    max(
        steal_pct,
        others_cores,
        others_pct,
        others_peak_cores,
        others_peak_pct,
        others_peak_seconds,
        kernel_cores,
        cpu_pressure_pct
    )
)]
pub struct HostRates {
    /// The block device holding the data directory (`None`: no device, IO figures missing).
    pub device: Option<String>,
    pub rps: Option<f64>,
    pub rmbps: Option<f64>,
    pub rawait_ms: Option<f64>,
    pub rareqsz_kb: Option<f64>,
    /// Read requests merged per second (iostat's rrqm/s), from diskstats' merged count.
    #[serde(default)]
    pub rrqmps: Option<f64>,
    pub wps: Option<f64>,
    pub wmbps: Option<f64>,
    pub wawait_ms: Option<f64>,
    pub wareqsz_kb: Option<f64>,
    /// Write requests merged per second (iostat's wrqm/s).
    #[serde(default)]
    pub wrqmps: Option<f64>,
    /// Requests in flight on average (iostat's aqu-sz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqu_sz: Option<f64>,
    /// Flush requests (what an fsync sends a device with a volatile cache) per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    pub cs_per_sec: f64,
    pub us_pct: f64,
    pub sy_pct: f64,
    pub idle_pct: f64,
    pub iowait_pct: f64,
    pub steal_pct: f64,
    /// CPU seconds of the engine's processes (db_bench's u_cpu and s_cpu before its /1000).
    pub engine_user_secs: f64,
    pub engine_system_secs: f64,
    /// Interference: cores' worth of CPU (user + system) that processes other than fathom's,
    /// the engine's and the kernel's own threads used over the window; at step boundaries
    /// only (`None` in intervals, and where the engine's processes are not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cores: Option<f64>,
    /// The same as a share of the host's CPU, percent: what marks a step disturbed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_pct: Option<f64>,
    /// The same over the step's busiest window between two walks of /proc (a few seconds
    /// each), where the step had two or more: cores, percent of the host, and the window's
    /// seconds. A burst inside a long step marks it as the step's average would not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_peak_cores: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_peak_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_peak_seconds: Option<f64>,
    /// Cores' worth of CPU of the kernel's own threads (writeback, kswapd, jbd2, kcompactd,
    /// kworkers): work the engine's IO and memory cause, so not interference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cores: Option<f64>,
    /// The share of the window in which some task waited for a CPU (PSI), percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_pct: Option<f64>,
}

/// Other processes' CPU, percent of the host's, above which a step is marked disturbed: a
/// tenth of a core on a 2-core host, 0.8 of one on 16.
pub const DISTURBED_OTHERS_PCT: f64 = 5.0;
/// The same in cores, for results recorded before `others_pct` was.
pub const DISTURBED_OTHERS_CORES: f64 = 0.10;
/// Other processes' CPU, in cores, above which a step is disturbed however large the host: on
/// 64 cores 5% is 3.2 of them, several busy neighbours.
pub const DISTURBED_OTHERS_MOST_CORES: f64 = 0.5;
/// Steal time, percent of the host's CPU, above which a step is marked disturbed.
pub const DISTURBED_STEAL_PCT: f64 = 2.0;

impl HostRates {
    /// The CPU time nothing ran, %: idle and waiting for IO alike (a CPU waiting for IO runs
    /// anything runnable; a step whose clients wait for a throttled device leaves it there).
    pub fn free_pct(&self) -> f64 {
        self.idle_pct + self.iowait_pct
    }

    /// What else used the host over a window of `seconds`, when it passed a threshold: other
    /// processes' CPU or steal. A window under 0.9 s holds too few ticks to say (a step run
    /// for `1s` measures a little under a second).
    pub fn disturbance(&self, seconds: f64) -> Option<String> {
        if seconds < 0.9 {
            return None;
        }
        let mut what = Vec::new();
        // Over the whole step, and else over its busiest window.
        let crowded =
            |pct: f64, c: f64| pct > DISTURBED_OTHERS_PCT || c > DISTURBED_OTHERS_MOST_CORES;
        let used =
            |c: f64, pct: f64| format!("other processes used {c:.2} cores ({pct:.0}% of the host)");
        let others = match (self.others_pct, self.others_cores) {
            (Some(pct), Some(c)) if crowded(pct, c) => Some(used(c, pct)),
            (None, Some(c)) if c > DISTURBED_OTHERS_CORES => {
                Some(format!("other processes used {c:.2} cores"))
            }
            _ => None,
        };
        let peak = match (
            self.others_peak_pct,
            self.others_peak_cores,
            self.others_peak_seconds,
        ) {
            // A window under a second (results recorded before the sampler read windows of a
            // second or more) is a few ticks: no burst can be read from it.
            (Some(pct), Some(c), Some(secs))
                if others.is_none() && secs >= 1.0 && crowded(pct, c) =>
            {
                Some(format!("{} for {secs:.0} s of the step", used(c, pct)))
            }
            _ => None,
        };
        what.extend(others);
        what.extend(peak);
        if self.steal_pct > DISTURBED_STEAL_PCT {
            what.push(format!("steal {:.1}%", self.steal_pct));
        }
        if what.is_empty() {
            return None;
        }
        if let Some(p) = self.cpu_pressure_pct {
            what.push(format!("CPU pressure {p:.0}%"));
        }
        Some(what.join(", "))
    }
}

pub use fathom_api::stats::EngineStats;

/// Count and latency of one kind of operation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(first(role, latency_us), sum(ops, timed, bytes, rows, failed, retries))]
pub struct OpSummary {
    /// What the kind's operations do (absent in results written before kinds had roles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    pub ops: u64,
    /// The calls timed, where they are fewer than `ops`: a call that counts for several
    /// operations (db_bench's MultiGet of 10 keys) is timed once. Its histograms hold these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed: Option<u64>,
    pub bytes: u64,
    pub latency_us: Latency,
    /// Rows the operations inserted.
    #[serde(default)]
    pub rows: u64,
    /// Operations that failed with a tolerated error (LinkBench's `max_failed_requests`),
    /// neither timed nor in `ops`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// Times its operations ran again after a deadlock, conflict or serialization failure.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The rate-limited background writer of a `*whilewriting` step (or the insert benchmark's
/// inserter and deleter during its query steps), reported apart and excluded from the step's
/// figures, as db_bench does. Its target is in bytes or in rows per second, the other 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(
    sum(
        ops,
        bytes,
        bytes_per_sec,
        target_bytes_per_sec,
        rows,
        rows_per_sec,
        target_rows_per_sec
    ),
    first(latency_us)
)]
pub struct Background {
    pub ops: u64,
    pub bytes: u64,
    pub bytes_per_sec: f64,
    pub target_bytes_per_sec: f64,
    pub latency_us: Latency,
    #[serde(default)]
    pub rows: u64,
    #[serde(default)]
    pub rows_per_sec: f64,
    #[serde(default)]
    pub target_rows_per_sec: f64,
}

pub use fathom_api::kind::QueryMix;
pub use run::*;

/// One step's summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(
    // Counts and rates add up over the hosts.
    sum(clients, ops, ops_per_sec, mb_per_sec, arrival_rate, retries_per_sec, rows, rows_per_sec),
    sum(failed),
    // Lengths, sizes and memory: the largest any host saw (one engine, seen by each).
    max(seconds, maintenance_seconds, window_seconds, db_gb, rss_gb, memory, start_skew_seconds),
    min(started_at, start_unix_ms),
    // Costs per operation, weighted by each host's operations.
    by_ops(usec_op, per_op, harness_ns_per_op),
    median(interrupted),
    // Latencies are replaced from the merged histograms; the rest describes the step or one
    // host's view (a profile is one host's processes).
    first(step, index, latency_us, query_mix, queue_us, shared_queue, latency_from_start),
    first(engine_options, profile, probe),
    // The slowest operations are one host's clients'; its network, one host's path.
    first(tail, network),
    fields(engine_stats, by_op, host, background, time, waits)
)]
pub struct StepSummary {
    pub step: String,
    /// Position of the step in the run, from 1.
    pub index: usize,
    pub clients: usize,
    /// Operations measured (warmup and background writer excluded).
    pub ops: u64,
    /// Seconds of measured operation (warmup and maintenance excluded).
    pub seconds: f64,
    pub ops_per_sec: f64,
    /// Key + value bytes per second, MiB, as db_bench's MB/s.
    pub mb_per_sec: f64,
    /// db_bench's usec_op: summed client time per operation (about clients / throughput).
    pub usec_op: f64,
    pub latency_us: Latency,
    pub per_op: PerOp,
    pub db_gb: DbGb,
    pub rss_gb: f64,
    pub engine_stats: EngineStats,
    pub by_op: BTreeMap<String, OpSummary>,
    pub host: HostRates,
    pub background: Option<Background>,
    /// Seconds spent after the operations in flush and compaction waits (their IO and CPU are
    /// in the per-op figures: the writes caused them).
    pub maintenance_seconds: f64,
    /// The window the host figures cover: operations plus maintenance.
    pub window_seconds: f64,
    /// Open loop: the target arrival rate, ops/s (latency then counts from intended start).
    pub arrival_rate: Option<f64>,
    /// The harness's own CPU per operation for this step, measured on the null engine.
    pub harness_ns_per_op: Option<f64>,
    /// True when Ctrl-C ended the step early.
    pub interrupted: bool,
    pub started_at: String,
    /// When the step's clients started, Unix milliseconds: `started_at` to the millisecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_unix_ms: Option<u64>,
    /// A merge of several client hosts' runs: how far apart, in seconds, the hosts started
    /// the step (the latest start less the earliest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_seconds: Option<f64>,
    /// SQL statements per operation, for workloads whose operation is a transaction of
    /// several (sysbench's events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_mix: Option<QueryMix>,
    /// Operations retried after a deadlock, lock wait timeout or conflict (sysbench's
    /// ignored errors), per second.
    #[serde(default)]
    pub retries_per_sec: f64,
    /// Rows inserted (a batch insert is one operation of many rows) and their rate: the
    /// insert benchmark's `ips`.
    #[serde(default)]
    pub rows: u64,
    #[serde(default)]
    pub rows_per_sec: f64,
    /// Open loop: how long operations waited past their intended start before a client
    /// took them (LinkbenchX's time in queue); their latency counts from the intended start
    /// unless `latency_from_start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_us: Option<Latency>,
    /// Open loop with one queue for all clients (an idle client takes the next arrival).
    #[serde(default)]
    pub shared_queue: bool,
    /// Open loop whose latency counts from each operation's real start (service time, as
    /// LinkBench's throttled requesters), the wait kept in `queue_us` alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub latency_from_start: bool,
    /// Operations that failed with a tolerated error (LinkBench's `max_failed_requests`): not
    /// timed, not in `ops`; `by_op` has them per kind.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// Options the step's engine was opened with beyond the setup's (the step's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_options: Option<String>,
    /// Where the step's CPU went (`--profile`): the folded stacks' file and how they were
    /// taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::ProfileRecord>,
    /// A probe of `--find-max`: the rate it ran at and whether it met the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
    /// Where the threads' time went over the step's window (on a CPU, waiting for one, for
    /// block IO, paced, the rest): the clients', fathom's other threads' and the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<threads::ThreadTime>,
    /// `--waits`: what the threads off a CPU waited on, sampled by kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<threads::Waits>,
    /// Whose memory the engine's resident size is, at the step's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryGb>,
    /// The step's slowest operations and the engine's events meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<tail::Tail>,
    /// `--network`: bytes and round trips an operation, the path's measured round trip and
    /// the delay relay's own cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<network::NetworkFigures>,
}

/// Whose memory an engine's resident size is, at a step's end, GiB. The engine's own account of
/// its cache is in `EngineStats` (`cache_gb`, `cache_dirty_gb`, `cache_max_gb`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryGb {
    /// Anonymous resident memory of the engine's processes (RssAnon: heap, stacks and
    /// anonymous maps, no file pages).
    pub anon: f64,
    /// Embedded engines (fathom's process holds them): the C heap (glibc malloc) in use by the
    /// engine and fathom together, and held free by malloc (free chunks, arenas' slack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_used: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_free: Option<f64>,
}

/// One step of a search for the highest rate that meets a latency target (`fathom findmax`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Probe {
    /// The step searched (the workload's name for it).
    pub step: String,
    /// The arrival rate it ran at; `None` for the closed-loop probe that finds the capacity.
    pub rate: Option<f64>,
    /// The target, as written (`p99<=5ms`).
    pub target: String,
    /// Whether the step met the target at this rate (and kept up with it).
    pub met: bool,
    /// What it measured against each condition (`p99 4.1 ms <= 5 ms; kept up 99.8%`).
    pub judged: String,
    /// What the probe was for: narrowing the search, settling the database at a rate, or
    /// confirming it.
    #[serde(default, skip_serializing_if = "ProbePhase::is_search")]
    pub phase: ProbePhase,
    /// How far the probe's latency sat from the target: the largest, over the target's latency
    /// conditions, of ln(measured / limit) (negative: under it); `None` without a latency
    /// condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom: Option<f64>,
}

/// What a findmax probe was for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProbePhase {
    /// Narrowing the bracket between a rate that met the target and one that missed.
    #[default]
    Search,
    /// Bringing the database to a rate's state before its confirmations; not judged.
    Settle,
    /// One of the probes at a rate that must all meet the target for it to be reported.
    Confirm,
}

impl ProbePhase {
    fn is_search(&self) -> bool {
        *self == ProbePhase::Search
    }
}

/// One interval of a step (the reports' time series).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(
    first(step, interval, latency_us, by_kind),
    min(t_start),
    max(t_end, db_gb, rss_gb),
    sum(ops, ops_per_sec, retries, failed, intended_ops_per_sec),
    by_ops(per_op)
)]
pub struct IntervalRecord {
    pub step: String,
    pub interval: usize,
    /// Seconds since the step's measured part began.
    pub t_start: f64,
    pub t_end: f64,
    pub ops: u64,
    pub ops_per_sec: f64,
    pub latency_us: Latency,
    pub per_op: PerOp,
    pub db_gb: DbGb,
    pub rss_gb: f64,
    /// Operations retried after a deadlock or conflict in this interval.
    #[serde(default)]
    pub retries: u64,
    /// Operations that failed with a tolerated error in this interval (not among `ops`).
    #[serde(default)]
    pub failed: u64,
    /// The operations per second meant to arrive in the interval's middle (open loop: `--rate`
    /// or a workload file's rate schedule); absent in closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_ops_per_sec: Option<f64>,
    /// Each kind's operations and latency over the interval (kinds without operations left
    /// out), for live views (`--metrics`); not written: the interval log keeps every kind's
    /// histogram.
    #[serde(skip)]
    pub by_kind: Vec<KindInterval>,
}

impl IntervalRecord {
    /// The intervals a rate can be read from: each at least half as long as the longest, and
    /// the last only when at least 90% as long (a step's last interval ends with the step, as
    /// its clients stop, and rates on too little time).
    pub fn whole(intervals: &[IntervalRecord]) -> Vec<&IntervalRecord> {
        let length = |i: &IntervalRecord| i.t_end - i.t_start;
        let longest = intervals.iter().map(length).fold(0.0, f64::max);
        let last = intervals.len().saturating_sub(1);
        (intervals.iter().enumerate())
            .filter(|(n, i)| {
                length(i) >= longest / 2.0 && (*n < last || length(i) >= 0.9 * longest)
            })
            .map(|(_, i)| i)
            .collect()
    }
}

/// One kind's operations and latency over one interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindInterval {
    pub kind: &'static str,
    pub ops: u64,
    pub latency_us: Latency,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Other processes disturb a step at 5% of a small host, and at half a core of a large one
    /// (5% of 64 cores is 3.2 of them); steal over 2% too; a window under a second says nothing.
    #[test]
    fn what_disturbs_a_step() {
        let host = |pct: f64, cores: f64, steal: f64| HostRates {
            others_pct: Some(pct),
            others_cores: Some(cores),
            steal_pct: steal,
            ..HostRates::default()
        };
        assert!(host(6.0, 0.12, 0.0).disturbance(10.0).is_some());
        assert!(host(3.0, 0.06, 0.0).disturbance(10.0).is_none());
        assert!(host(1.0, 0.64, 0.0).disturbance(10.0).is_some(), "64 cores");
        assert!(host(0.0, 0.0, 3.0).disturbance(10.0).is_some());
        assert!(host(50.0, 1.0, 0.0).disturbance(0.5).is_none());
        // A burst in a window of the step marks it, and says for how long.
        let burst = HostRates {
            others_peak_pct: Some(30.0),
            others_peak_cores: Some(0.6),
            others_peak_seconds: Some(5.0),
            ..host(2.0, 0.04, 0.0)
        };
        let blip = HostRates {
            others_peak_seconds: Some(0.02),
            ..burst.clone()
        };
        assert!(blip.disturbance(60.0).is_none(), "a window of a few ticks");
        let what = burst.disturbance(60.0).expect("a burst disturbs");
        assert!(
            what.contains("0.60 cores (30% of the host) for 5 s"),
            "{what}"
        );
        let quiet_peak = HostRates {
            others_peak_pct: Some(4.0),
            others_peak_cores: Some(0.08),
            others_peak_seconds: Some(5.0),
            ..host(2.0, 0.04, 0.0)
        };
        assert!(quiet_peak.disturbance(60.0).is_none());
    }
}
