//! Per-thread latency histograms and counters, one set per operation kind. A client thread owns
//! its `Recorder` outright (no lock, no atomics on the hot path) and hands a copy to the driver
//! at each interval boundary, where copies are merged.

use crate::slow::SlowOps;
use crate::tick::Tick;
use crate::work::WorkTrack;
use fathom_api::kind::{Done, StepKinds, UndeclaredKind};
use hdrhistogram::Histogram;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Recorders' histograms alive in this process: with an embedded engine they share its
/// memory, and the reports leave them out of the engine's (`harness_histogram_bytes`).
static LIVE_HISTOGRAMS: AtomicI64 = AtomicI64::new(0);

fn counted(n: i64) {
    LIVE_HISTOGRAMS.fetch_add(n, Ordering::Relaxed);
}

/// The memory of the recorders' histograms alive now, bytes: each holds a count for every
/// distinct value of its range (a few hundred KB), all of it resident once it has been reset
/// at an interval's end. 16 LinkBench clients' hold about 100 MB.
pub fn harness_histogram_bytes() -> u64 {
    static ONE: OnceLock<u64> = OnceLock::new();
    let one = *ONE
        .get_or_init(|| (new_histogram().distinct_values() * std::mem::size_of::<u64>()) as u64);
    LIVE_HISTOGRAMS.load(Ordering::Relaxed).max(0) as u64 * one
}

/// Highest latency a histogram holds, in nanoseconds (one hour); longer ones saturate.
const MAX_NANOS: u64 = 3_600_000_000_000;
/// Significant digits kept by every histogram.
const SIGFIG: u8 = 3;

/// A new, empty latency histogram in nanoseconds.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NANOS, SIGFIG).expect("static histogram bounds are valid")
}

/// What one kind of operation did during an interval or a step.
#[derive(Debug)]
pub struct KindRecord {
    /// Latency of each operation, in nanoseconds.
    pub latency: Histogram<u64>,
    /// Operations completed.
    pub ops: u64,
    /// Bytes the operations read or wrote (key + value), as db_bench counts them for MB/s.
    pub bytes: u64,
    /// Times operations were retried after a deadlock or conflict (sysbench's ignored errors).
    pub retries: u64,
    /// Rows the operations inserted (the insert benchmark's per-insert figures divide by them).
    pub rows: u64,
    /// Operations that failed with a tolerated error: not timed, not among `ops`.
    pub failed: u64,
}

impl Clone for KindRecord {
    fn clone(&self) -> Self {
        counted(1);
        KindRecord {
            latency: self.latency.clone(),
            ops: self.ops,
            bytes: self.bytes,
            retries: self.retries,
            rows: self.rows,
            failed: self.failed,
        }
    }
}

impl Drop for KindRecord {
    fn drop(&mut self) {
        counted(-1);
    }
}

impl KindRecord {
    fn new() -> Self {
        counted(1);
        KindRecord {
            latency: new_histogram(),
            ops: 0,
            bytes: 0,
            retries: 0,
            rows: 0,
            failed: 0,
        }
    }

    /// Adds another record of the same kind into this one.
    pub fn merge(&mut self, other: &KindRecord) {
        self.latency
            .add(&other.latency)
            .expect("histograms share bounds");
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.retries += other.retries;
        self.rows += other.rows;
        self.failed += other.failed;
    }
}

/// One record per operation kind, indexed by the kind's position in the step's kind list,
/// and, in open loop, how long operations waited past their intended start.
#[derive(Debug)]
pub struct Recorder {
    pub kinds: Vec<KindRecord>,
    /// Open loop: the wait from each operation's intended start to when a client began it, ns.
    pub queue: Histogram<u64>,
    /// The slowest operations of each kind.
    pub slow: SlowOps,
    /// The client whose operations these are (0 for a merge of several), and its thread.
    pub client: u32,
    pub tid: u32,
}

impl Clone for Recorder {
    fn clone(&self) -> Self {
        counted(1);
        Recorder {
            kinds: self.kinds.clone(),
            queue: self.queue.clone(),
            slow: self.slow.clone(),
            client: self.client,
            tid: self.tid,
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        counted(-1);
    }
}

impl Recorder {
    pub fn new(kinds: usize) -> Self {
        counted(1);
        Recorder {
            kinds: (0..kinds).map(|_| KindRecord::new()).collect(),
            queue: new_histogram(),
            slow: SlowOps::new(kinds),
            client: 0,
            tid: 0,
        }
    }

    /// A recorder of client `client`'s operations, made on the client's thread.
    pub fn of_client(kinds: usize, client: usize) -> Self {
        let mut r = Recorder::new(kinds);
        r.client = client as u32;
        // SAFETY: gettid has no preconditions.
        r.tid = unsafe { libc::gettid() } as u32;
        r
    }

    /// Records how long an open-loop operation waited to begin.
    #[inline]
    pub fn record_queue(&mut self, wait: Duration) {
        self.queue.saturating_record(wait.as_nanos().max(1) as u64);
    }

    /// Records one finished operation.
    #[inline]
    pub fn record(&mut self, kind: usize, latency: Duration, bytes: u64) {
        let k = &mut self.kinds[kind];
        k.latency
            .saturating_record(latency.as_nanos().max(1) as u64);
        k.ops += 1;
        k.bytes += bytes;
    }

    /// Records one finished operation as a client reports it, in the step's `kinds`, retries
    /// included, the time it waited on another client left out, and offers it to the slowest
    /// kept (it ended at `end`; `work` has counted it, if the engine counts); an operation of
    /// a kind the step does not record is an error.
    #[inline]
    pub fn record_done(
        &mut self,
        kinds: &StepKinds,
        op: &Done,
        (latency, end): (Duration, Tick),
        work: Option<&mut WorkTrack>,
    ) -> Result<(), UndeclaredKind> {
        let slot = kinds.slot(op.kind).ok_or(UndeclaredKind(op.kind))?;
        if op.failed {
            self.kinds[slot].failed += 1;
            self.kinds[slot].retries += u64::from(op.retries);
            return Ok(());
        }
        let latency = latency.saturating_sub(op.waited);
        self.record(slot, latency, op.bytes);
        let who = (self.client, self.tid);
        self.slow
            .offer(slot, latency.as_nanos() as u64, end, who, work.as_deref());
        if let Some(w) = work {
            w.keep(slot);
        }
        let k = &mut self.kinds[slot];
        k.ops += u64::from(op.counts_as.saturating_sub(1));
        k.retries += u64::from(op.retries);
        k.rows += op.rows;
        Ok(())
    }

    /// Returns what was recorded so far and starts over, keeping the allocation.
    pub fn take(&mut self) -> Recorder {
        let snapshot = self.clone();
        for k in &mut self.kinds {
            k.latency.reset();
            k.ops = 0;
            k.bytes = 0;
            k.retries = 0;
            k.rows = 0;
            k.failed = 0;
        }
        self.queue.reset();
        self.slow.clear();
        snapshot
    }

    /// Adds another recorder with the same kinds into this one.
    pub fn merge(&mut self, other: &Recorder) {
        for (a, b) in self.kinds.iter_mut().zip(&other.kinds) {
            a.merge(b);
        }
        self.queue
            .add(&other.queue)
            .expect("histograms share bounds");
        self.slow.merge(&other.slow);
    }

    pub fn ops(&self) -> u64 {
        self.kinds.iter().map(|k| k.ops).sum()
    }

    pub fn bytes(&self) -> u64 {
        self.kinds.iter().map(|k| k.bytes).sum()
    }

    /// All kinds folded into one histogram.
    pub fn combined(&self) -> KindRecord {
        let mut all = KindRecord::new();
        for k in &self.kinds {
            all.merge(k);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::latency::Latency;

    #[test]
    fn merge_conserves_counts_and_orders_percentiles() {
        let mut a = Recorder::new(2);
        let mut b = Recorder::new(2);
        for i in 1..=1000u64 {
            a.record(0, Duration::from_micros(i), 10);
            b.record(1, Duration::from_micros(2000 + i), 5);
        }
        let mut m = Recorder::new(2);
        m.merge(&a);
        m.merge(&b);
        assert_eq!(m.ops(), 2000);
        assert_eq!(m.bytes(), 15_000);
        let all = m.combined();
        assert_eq!(all.ops, 2000);
        let l = Latency::of(&all.latency);
        assert!(
            l.p50 <= l.p75
                && l.p75 <= l.p90
                && l.p90 <= l.p99
                && l.p99 <= l.p99_9
                && l.p99_9 <= l.max
        );
        // Half the values are at most 1000 µs, half at least 2001 µs.
        assert!((990.0..=1010.0).contains(&l.p50), "p50 {}", l.p50);
        assert!((2990.0..=3010.0).contains(&l.max), "max {}", l.max);
    }

    #[test]
    fn a_failed_operation_is_counted_apart_and_not_timed() {
        use fathom_api::kind::testing::Test;
        let kinds = StepKinds::of(&[Test::A, Test::B]);
        let mut r = Recorder::new(2);
        let ok = Done {
            bytes: 7,
            ..Done::of(Test::B)
        };
        r.record_done(&kinds, &ok, (Duration::from_micros(10), Tick::now()), None)
            .unwrap();
        let failed = Done { failed: true, ..ok };
        r.record_done(&kinds, &failed, (Duration::from_secs(5), Tick::now()), None)
            .unwrap();
        let s = r.take();
        assert_eq!(
            (s.kinds[1].ops, s.kinds[1].failed, s.kinds[1].bytes),
            (1, 1, 7)
        );
        assert!(
            s.kinds[1].latency.max() < 1_000_000,
            "the failure is not timed"
        );
        assert_eq!(r.kinds[1].failed, 0, "take starts over");
        let batch = Done {
            counts_as: 10,
            ..ok
        };
        r.record_done(
            &kinds,
            &batch,
            (Duration::from_micros(50), Tick::now()),
            None,
        )
        .unwrap();
        assert_eq!(r.kinds[1].ops, 10, "a MultiGet of 10 keys is 10 operations");
        assert_eq!(r.kinds[1].latency.len(), 1, "timed once");
        let undeclared = r.record_done(
            &kinds,
            &Done::of(Test::C),
            (Duration::ZERO, Tick::now()),
            None,
        );
        assert!(undeclared.is_err(), "a kind the step does not record");
    }

    #[test]
    fn take_resets_but_returns_what_was_recorded() {
        let mut r = Recorder::new(1);
        r.record(0, Duration::from_nanos(500), 1);
        let s = r.take();
        assert_eq!(s.ops(), 1);
        assert_eq!(r.ops(), 0);
        assert!(r.kinds[0].latency.is_empty());
    }

    #[test]
    fn empty_latency_is_zero() {
        assert_eq!(Latency::of(&new_histogram()), Latency::default());
    }
}
