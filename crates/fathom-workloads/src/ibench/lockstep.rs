//! Keeps a client's inserter and deleter, each on its own connection, within a few batches of
//! each other, as iibench.py's statement queues (8 deep, fed by one statement maker) do: the
//! pair runs at the pace of the slower side, and the table stays the same size.

use fathom_api::stop::Stop;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How many batches one side may run ahead of the other (iibench.py's `Queue(8)`).
pub const QUEUE: u64 = 8;

#[derive(Debug, Default)]
struct Sides {
    inserted: u64,
    deleted: u64,
    /// A deleter was built for this client: the inserter waits for it.
    deleter: bool,
    inserter_gone: bool,
    deleter_gone: bool,
}

/// The shared state of one client's inserter and deleter.
#[derive(Debug, Default)]
pub struct Lockstep {
    sides: Mutex<Sides>,
    changed: Condvar,
    /// The run was asked to stop: neither side waits.
    stop: Stop,
}

/// What a side may do next.
#[derive(Debug, PartialEq, Eq)]
pub enum Turn {
    /// Go on, after waiting this long for the other side.
    Go(Duration),
    /// Stop: the other side is gone and nothing is left to follow, or the run was asked to stop.
    Stop,
}

impl Lockstep {
    /// The gate of one client, for a step that `stop` stops.
    pub fn new(stop: &Stop) -> Lockstep {
        Lockstep {
            stop: stop.clone(),
            ..Lockstep::default()
        }
    }

    fn lock(&self) -> MutexGuard<'_, Sides> {
        self.sides.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits while `blocked` holds, in short slices so a stop ends the wait.
    fn wait_while(&self, blocked: impl Fn(&Sides) -> bool) -> (MutexGuard<'_, Sides>, Turn) {
        let start = Instant::now();
        let mut sides = self.lock();
        while blocked(&sides) {
            if self.stop.requested() {
                return (sides, Turn::Stop);
            }
            sides = self
                .changed
                .wait_timeout(sides, Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        (sides, Turn::Go(start.elapsed()))
    }

    /// A deleter was built for this client; from now on the inserter keeps within `QUEUE`
    /// batches of it.
    pub fn join_deleter(&self) {
        self.lock().deleter = true;
    }

    /// Before the inserter's next batch: waits while it is `QUEUE` batches ahead of a deleter
    /// that still runs.
    pub fn before_insert(&self) -> Turn {
        self.wait_while(|s| s.deleter && !s.deleter_gone && s.inserted >= s.deleted + QUEUE)
            .1
    }

    /// Before the deleter's next batch: waits while it is `QUEUE` batches ahead of an inserter
    /// that still runs; stops once the inserter is gone and every batch it wrote has its delete.
    pub fn before_delete(&self) -> Turn {
        let (sides, turn) =
            self.wait_while(|s| !s.inserter_gone && s.deleted >= s.inserted + QUEUE);
        if sides.inserter_gone && sides.deleted >= sides.inserted {
            return Turn::Stop;
        }
        turn
    }

    pub fn inserted(&self) {
        self.lock().inserted += 1;
        self.changed.notify_all();
    }

    pub fn deleted(&self) {
        self.lock().deleted += 1;
        self.changed.notify_all();
    }

    /// The inserter does no more (done, failed, or its step ended).
    pub fn inserter_gone(&self) {
        self.lock().inserter_gone = true;
        self.changed.notify_all();
    }

    /// The deleter does no more.
    pub fn deleter_gone(&self) {
        self.lock().deleter_gone = true;
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn an_inserter_without_a_deleter_never_waits() {
        let gate = Lockstep::default();
        for _ in 0..100 {
            assert!(matches!(gate.before_insert(), Turn::Go(_)));
            gate.inserted();
        }
    }

    #[test]
    fn the_inserter_waits_for_a_slow_deleter() {
        let gate = Arc::new(Lockstep::default());
        gate.join_deleter();
        for _ in 0..QUEUE {
            assert!(matches!(gate.before_insert(), Turn::Go(_)));
            gate.inserted();
        }
        // The ninth batch waits until the deleter, late, has done one.
        let deleter = {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                assert!(matches!(gate.before_delete(), Turn::Go(_)));
                gate.deleted();
            })
        };
        let Turn::Go(waited) = gate.before_insert() else {
            panic!("the inserter was stopped")
        };
        assert!(waited >= Duration::from_millis(50), "waited {waited:?}");
        deleter.join().unwrap();
    }

    #[test]
    fn a_deleter_follows_its_inserter_to_the_last_batch() {
        let gate = Lockstep::default();
        gate.join_deleter();
        for _ in 0..3 {
            gate.before_insert();
            gate.inserted();
        }
        gate.inserter_gone();
        let mut deletes = 0;
        while gate.before_delete() != Turn::Stop {
            gate.deleted();
            deletes += 1;
        }
        assert_eq!(deletes, 3, "a delete for every insert");
    }

    #[test]
    fn a_stop_ends_a_wait() {
        let stop = Stop::new();
        let gate = Lockstep::new(&stop);
        gate.join_deleter();
        for _ in 0..QUEUE {
            gate.before_insert();
            gate.inserted();
        }
        stop.request();
        assert_eq!(gate.before_insert(), Turn::Stop, "no deleter came");
    }

    #[test]
    fn a_deleter_runs_at_most_queue_batches_ahead() {
        let gate = Lockstep::default();
        for _ in 0..QUEUE {
            assert!(matches!(gate.before_delete(), Turn::Go(_)));
            gate.deleted();
        }
        gate.inserter_gone();
        assert_eq!(
            gate.before_delete(),
            Turn::Stop,
            "ahead of a finished inserter"
        );
    }
}
