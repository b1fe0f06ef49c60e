//! A step's summary from what was measured: the operations' totals and latency, the host's
//! figures between the first sample and the last, the engine's statistics, the background
//! writer, per operation kind.

use super::{Pace, StepPlan};
use crate::recorder::{KindRecord, Recorder};
use crate::sample::waits::Waits;
use crate::sample::{Sample, Sampler};
use fathom_api::kind::Role;
use fathom_api::target::{Counters, Target};
use fathom_schema::latency::Latency;
use fathom_schema::result::{Background, MemoryGb, OpSummary, StepSummary};
use std::time::{Duration, Instant};

/// What a step measured, once its threads ended and its maintenance ran.
pub(super) struct Measured<'a> {
    pub(super) plan: &'a StepPlan,
    pub(super) index: usize,
    /// The step's clients, helpers not counted.
    pub(super) clients: usize,
    /// Every thread of the step: its clients and helpers.
    pub(super) threads: usize,
    pub(super) total: &'a Recorder,
    /// The host at the start of the measured part and at the end (maintenance included).
    pub(super) first: &'a Sample,
    pub(super) end: &'a Sample,
    /// Every interval's sample, in time order (the first is `first`).
    pub(super) samples: Vec<&'a Sample>,
    /// When the last client ended.
    pub(super) ops_end: Instant,
    /// Summed time the clients spent in measured operations.
    pub(super) busy: Duration,
    /// Summed time the clients slept until their operations' intended starts, if paced.
    pub(super) paced: Option<Duration>,
    /// Delay accounting was on throughout: block IO waits are counted.
    pub(super) blkio: bool,
    /// `--waits`: what the threads waited on, sampled.
    pub(super) waits: Option<Waits>,
    pub(super) background: Option<&'a Recorder>,
    pub(super) maintenance_seconds: f64,
    pub(super) started_at: String,
    pub(super) start_unix_ms: Option<u64>,
    /// The run was asked to stop during the step.
    pub(super) interrupted: bool,
    /// The step's start on both clocks, to put its slowest operations on the wall clock.
    pub(super) origin: super::tail::Origin,
    /// With `--waits=bpf`: the clients' long sleeps, whole.
    pub(super) sleeps: Option<Vec<crate::sample::waits::Sleep>>,
}

impl Measured<'_> {
    pub(super) fn summary(
        &self,
        sampler: &Sampler,
        target: &dyn Target,
        counters_before: &Counters,
        counters_after: &Counters,
    ) -> StepSummary {
        let plan = self.plan;
        let all = self.total.combined();
        let measured = if self.threads == 0 {
            0.0
        } else {
            self.ops_end.duration_since(self.first.at).as_secs_f64()
        };
        let mut figures = sampler.figures(self.first, self.end, all.ops);
        let mut windows = self.samples.clone();
        windows.push(self.end);
        if let Some(peak) = sampler.others_peak(&windows) {
            figures.host.others_peak_cores = Some(peak.cores);
            figures.host.others_peak_pct = Some(peak.pct);
            figures.host.others_peak_seconds = Some(peak.seconds);
        }
        let per_sec = |x: f64| if measured > 0.0 { x / measured } else { 0.0 };
        StepSummary {
            step: plan.name.clone(),
            index: self.index,
            clients: self.clients,
            ops: all.ops,
            seconds: measured,
            ops_per_sec: per_sec(all.ops as f64),
            mb_per_sec: per_sec(all.bytes as f64 / (1u64 << 20) as f64),
            usec_op: if all.ops > 0 {
                self.busy.as_secs_f64() * 1e6 / all.ops as f64
            } else {
                0.0
            },
            latency_us: Latency::of(&all.latency),
            per_op: figures.per_op,
            db_gb: figures.db_gb,
            rss_gb: figures.rss_gb,
            memory: Some(MemoryGb {
                anon: figures.memory.anon_gb,
                heap_used: figures.memory.heap.map(|h| h.0),
                heap_free: figures.memory.heap.map(|h| h.1),
            }),
            engine_stats: target.step_stats(counters_before, counters_after, figures.seconds),
            by_op: plan
                .kinds
                .list()
                .iter()
                .zip(&self.total.kinds)
                .filter(|(_, k)| k.ops > 0 || k.failed > 0)
                .map(|(kind, k)| (kind.name.to_string(), op_summary(kind.role, k)))
                .collect(),
            host: figures.host,
            background: self.background.map(|r| background(plan, r, per_sec)),
            maintenance_seconds: self.maintenance_seconds,
            window_seconds: figures.seconds,
            arrival_rate: plan.mean_intended_rate(figures.seconds),
            harness_ns_per_op: None,
            interrupted: self.interrupted,
            started_at: self.started_at.clone(),
            start_unix_ms: self.start_unix_ms,
            start_skew_seconds: None,
            query_mix: plan.kinds.query_mix(),
            retries_per_sec: per_sec(all.retries as f64),
            rows: all.rows,
            rows_per_sec: per_sec(all.rows as f64),
            queue_us: (!self.total.queue.is_empty()).then(|| Latency::of(&self.total.queue)),
            shared_queue: plan.open_loop.is_some_and(|o| o.shared),
            latency_from_start: plan
                .open_loop
                .is_some_and(|o| o.latency_from == super::LatencyFrom::Start),
            failed: all.failed,
            engine_options: None,
            profile: None,
            probe: None,
            time: self.thread_time(),
            waits: self.waits.clone(),
            tail: self.tail(target),
            network: None,
        }
    }
}

impl Measured<'_> {
    /// Where the threads' time went between the first sample and the last.
    fn thread_time(&self) -> Option<fathom_schema::result::threads::ThreadTime> {
        let (Some(a), Some(b)) = (&self.first.threads, &self.end.threads) else {
            return None;
        };
        let paced = self.paced.map(|p| p.as_secs_f64());
        Some(crate::sample::threads::time_between(
            a, b, self.blkio, paced,
        ))
    }

    /// The slowest operations over the measured window, and what the engine did meanwhile.
    fn tail(&self, target: &dyn Target) -> Option<fathom_schema::result::tail::Tail> {
        let window = (self.first.at, self.ops_end);
        let sleeps = self.sleeps.as_deref();
        super::tail::of_step(self.plan, self.total, self.origin, window, target, sleeps)
    }
}

fn op_summary(role: Role, k: &KindRecord) -> OpSummary {
    OpSummary {
        role: Some(role),
        ops: k.ops,
        timed: (k.latency.len() != k.ops).then_some(k.latency.len()),
        bytes: k.bytes,
        latency_us: Latency::of(&k.latency),
        rows: k.rows,
        failed: k.failed,
        retries: k.retries,
    }
}

/// The background writer's figures, reported apart from the step's.
fn background(plan: &StepPlan, r: &Recorder, per_sec: impl Fn(f64) -> f64) -> Background {
    let k = r.combined();
    let target = |f: fn(Pace) -> Option<f64>| plan.background.and_then(f).unwrap_or(0.0);
    Background {
        ops: k.ops,
        bytes: k.bytes,
        bytes_per_sec: per_sec(k.bytes as f64),
        target_bytes_per_sec: target(|p| match p {
            Pace::BytesPerSec(r) => Some(r),
            Pace::RowsPerSec(_) => None,
        }),
        latency_us: Latency::of(&k.latency),
        rows: k.rows,
        rows_per_sec: per_sec(k.rows as f64),
        target_rows_per_sec: target(|p| match p {
            Pace::RowsPerSec(r) => Some(r),
            Pace::BytesPerSec(_) => None,
        }),
    }
}
