//! Each client's slowest operations of a step, per kind, kept on the hot path for the price of
//! one comparison (an operation faster than the slowest few kept so far is not looked at
//! again), so every run has them for "Why the slowest operations were slow".

use crate::tick::Tick;
use crate::work::{OpWork, WorkTrack};

/// Operations kept per kind (over all of a step's clients once merged).
pub const KEPT: usize = 16;

/// One kept operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slow {
    pub latency_ns: u64,
    /// When it ended.
    pub end: Tick,
    /// The client that ran it, from 0, and its thread.
    pub client: u32,
    pub tid: u32,
    /// The server session its thread last sent a statement on (0: none said), to join it to
    /// the server's log of statements.
    pub session: u64,
    /// What it did against the operations before it, where the engine counts it.
    pub work: Option<OpWork>,
}

/// The slowest operations of one kind: at most `KEPT`, and the latency an operation must
/// exceed to join them once they are that many.
#[derive(Clone, Debug, Default)]
struct Kept {
    ops: Vec<Slow>,
    floor: u64,
}

impl Kept {
    fn insert(&mut self, s: Slow) {
        if self.ops.len() < KEPT {
            self.ops.push(s);
        } else if let Some(min) = self.ops.iter_mut().min_by_key(|o| o.latency_ns) {
            *min = s;
        }
        if self.ops.len() == KEPT {
            self.floor = self.ops.iter().map(|o| o.latency_ns).min().unwrap_or(0);
        }
    }
}

/// The slowest operations of each kind of a step, by the kind's position in its list.
#[derive(Clone, Debug, Default)]
pub struct SlowOps {
    kinds: Vec<Kept>,
}

impl SlowOps {
    pub fn new(kinds: usize) -> SlowOps {
        SlowOps {
            kinds: vec![Kept::default(); kinds],
        }
    }

    /// An operation that ended: kept if it is among the slowest of its kind so far, with its
    /// work read from `work` (whose operation it is) if counted.
    #[inline]
    pub fn offer(
        &mut self,
        kind: usize,
        latency_ns: u64,
        end: Tick,
        (client, tid): (u32, u32),
        work: Option<&WorkTrack>,
    ) {
        let k = &mut self.kinds[kind];
        if latency_ns > k.floor {
            k.insert(Slow {
                latency_ns,
                end,
                client,
                tid,
                session: fathom_api::work::session_here(),
                work: work.map(|w| w.against(kind)),
            });
        }
    }

    /// Keeps the slowest of both.
    pub fn merge(&mut self, other: &SlowOps) {
        for (a, b) in self.kinds.iter_mut().zip(&other.kinds) {
            for s in &b.ops {
                if s.latency_ns > a.floor {
                    a.insert(*s);
                }
            }
        }
    }

    /// Forgets every kept operation.
    pub fn clear(&mut self) {
        for k in &mut self.kinds {
            k.ops.clear();
            k.floor = 0;
        }
    }

    /// The kept operations of kind `kind`, slowest first.
    pub fn slowest(&self, kind: usize) -> Vec<Slow> {
        let mut ops = self
            .kinds
            .get(kind)
            .map_or_else(Vec::new, |k| k.ops.clone());
        ops.sort_by_key(|o| std::cmp::Reverse(o.latency_ns));
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_slowest_of_each_kind_whatever_the_order() {
        let mut a = SlowOps::new(2);
        let mut b = SlowOps::new(2);
        // 1..=100 µs of kind 0 spread over two clients in a scrambled order, and one of kind 1.
        for i in 0..100u64 {
            let lat = (i * 37 % 100 + 1) * 1000;
            let (rec, client) = if i % 2 == 0 { (&mut a, 0) } else { (&mut b, 1) };
            rec.offer(0, lat, Tick::now(), (client, 0), None);
        }
        b.offer(1, 5, Tick::now(), (1, 0), None);
        a.merge(&b);
        let kept: Vec<u64> = a.slowest(0).iter().map(|s| s.latency_ns / 1000).collect();
        let want: Vec<u64> = (100 - KEPT as u64 + 1..=100).rev().collect();
        assert_eq!(kept, want);
        assert_eq!(a.slowest(1).len(), 1);
        a.clear();
        assert!(a.slowest(0).is_empty());
    }
}
