//! Each client's per-operation work counters (an engine's `WorkMeter`, RocksDB's perf context):
//! read after every operation, kept for the last `NEARBY` operations of each kind, so a kept
//! slow operation carries what it did against what the operations just before it on the same
//! client did — a baseline of the same moment, whatever the counters drift over the step.

use fathom_api::work::{Counts, ThreadWork, WorkMeter, MAX_COUNTERS};

/// Operations of a kind a slow one is set against.
pub const NEARBY: usize = 64;

/// What one kept operation did, against the `nearby` operations of its kind before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpWork {
    pub counts: Counts,
    pub nearby: u16,
    /// The nearby operations' median, per counter.
    pub nearby_median: Counts,
    /// Nearby operations that did as much or more, per counter.
    pub at_least: [u16; MAX_COUNTERS],
}

/// The last operations' counts of one kind, oldest overwritten first.
#[derive(Clone, Debug, Default)]
struct Ring {
    counts: Vec<Counts>,
    next: usize,
}

/// One client thread's work counters.
pub struct WorkTrack {
    thread: Box<dyn ThreadWork>,
    /// The counters after the previous operation.
    last: Counts,
    /// The operation that just ended.
    op: Counts,
    rings: Vec<Ring>,
}

impl WorkTrack {
    /// Starts counting on the calling thread, for a step of `kinds` kinds.
    pub fn start(meter: &dyn WorkMeter, kinds: usize) -> WorkTrack {
        let mut thread = meter.on_this_thread();
        let mut last = Counts::default();
        thread.read(&mut last);
        WorkTrack {
            thread,
            last,
            op: Counts::default(),
            rings: vec![Ring::default(); kinds],
        }
    }

    /// An operation ended: its counts are read (whether it is recorded or not).
    #[inline]
    pub fn took(&mut self) {
        let mut now = Counts::default();
        self.thread.read(&mut now);
        for ((op, n), l) in self.op.iter_mut().zip(now).zip(self.last) {
            *op = n.saturating_sub(l);
        }
        self.last = now;
    }

    /// The operation that just ended, of kind `kind`, against the ones before it.
    pub fn against(&self, kind: usize) -> OpWork {
        let nearby = &self.rings[kind].counts;
        let mut w = OpWork {
            counts: self.op,
            nearby: nearby.len() as u16,
            ..OpWork::default()
        };
        let mut column: Vec<u64> = Vec::with_capacity(nearby.len());
        for c in 0..MAX_COUNTERS {
            column.clear();
            column.extend(nearby.iter().map(|n| n[c]));
            w.at_least[c] = column.iter().filter(|&&v| v >= self.op[c]).count() as u16;
            if !column.is_empty() {
                let mid = column.len() / 2;
                w.nearby_median[c] = *column.select_nth_unstable(mid).1;
            }
        }
        w
    }

    /// The operation that just ended joins its kind's nearby ones.
    #[inline]
    pub fn keep(&mut self, kind: usize) {
        let r = &mut self.rings[kind];
        if r.counts.len() < NEARBY {
            r.counts.push(self.op);
        } else {
            r.counts[r.next] = self.op;
            r.next = (r.next + 1) % NEARBY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A thread's counters that grow by what the test says each operation did.
    static COUNTER: AtomicU64 = AtomicU64::new(0);

    struct Fake;
    impl WorkMeter for Fake {
        fn names(&self) -> &'static [&'static str] {
            &["skipped"]
        }
        fn on_this_thread(&self) -> Box<dyn ThreadWork> {
            Box::new(Fake)
        }
    }
    impl ThreadWork for Fake {
        fn read(&mut self, out: &mut Counts) {
            out[0] = COUNTER.load(Ordering::Relaxed);
        }
    }

    #[test]
    fn an_operation_is_set_against_the_ones_before_it() {
        let mut t = WorkTrack::start(&Fake, 1);
        // 100 operations skipping 0..9 each, cyclically; the ring holds the last 64.
        for i in 0..100u64 {
            COUNTER.fetch_add(i % 10, Ordering::Relaxed);
            t.took();
            t.keep(0);
        }
        COUNTER.fetch_add(500, Ordering::Relaxed);
        t.took();
        let w = t.against(0);
        assert_eq!(w.counts[0], 500);
        assert_eq!((w.nearby, w.at_least[0]), (64, 0));
        assert!((4..=5).contains(&w.nearby_median[0]), "{w:?}");
        COUNTER.fetch_add(9, Ordering::Relaxed);
        t.took();
        let w = t.against(0);
        // Those that skipped 9 among the last 64 (0..9 repeating) did as much.
        let nines = (36..100).filter(|i| i % 10 == 9).count() as u16;
        assert_eq!(w.at_least[0], nines);
    }
}
