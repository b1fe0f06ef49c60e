//! A request to stop, handed to what can be stopped: the driver's threads, a run's steps, an
//! engine's long waits and a workload's loops. The command sets it on Ctrl-C; a test can stop
//! one run without stopping any other. Stopping ends the current step early, and the run keeps
//! every step that finished.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A stop request shared by its clones.
#[derive(Clone, Debug, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// A token no one has asked to stop yet.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Asks whatever holds a clone to stop.
    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once asked to stop.
    #[inline]
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Sleeps for `d` in short slices, waking early when asked to stop; true when it was.
    pub fn sleep(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if self.requested() {
                return true;
            }
            let now = Instant::now();
            if now >= end {
                return false;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(100)));
        }
    }
}

impl Stop {
    /// Runs `f` while `inner` (a token `f`'s work holds) is requested once `budget` has passed
    /// or `self` is requested, whichever comes first: for work that must end within a time
    /// even when it waits (the harness's calibration of a step whose client sleeps).
    pub fn within<T>(&self, inner: &Stop, budget: Duration, f: impl FnOnce() -> T) -> T {
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let end = Instant::now() + budget;
                while !done.load(Ordering::Relaxed) && !self.requested() && Instant::now() < end {
                    std::thread::sleep(Duration::from_millis(5));
                }
                inner.request();
            });
            let value = f();
            done.store(true, Ordering::Relaxed);
            value
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_reaches_its_clones_and_no_other_token() {
        let (a, other) = (Stop::new(), Stop::new());
        let clone = a.clone();
        assert!(!clone.requested());
        a.request();
        assert!(clone.requested() && !other.requested());
        let start = Instant::now();
        assert!(clone.sleep(Duration::from_secs(10)));
        assert!(start.elapsed() < Duration::from_secs(1), "woke at once");
        assert!(!other.sleep(Duration::from_millis(10)));
    }

    #[test]
    fn a_token_within_a_budget_is_requested_at_its_end_or_by_its_outer_token() {
        let outer = Stop::new();
        let (a, b, c) = (Stop::new(), Stop::new(), Stop::new());
        let start = Instant::now();
        let woke = outer.within(&a, Duration::from_millis(50), || {
            a.sleep(Duration::from_secs(10))
        });
        assert!(
            woke && start.elapsed() < Duration::from_secs(2),
            "ended at the budget"
        );
        assert!(
            !outer.within(&b, Duration::from_secs(10), || b.requested()),
            "not before it"
        );
        outer.request();
        let start = Instant::now();
        assert!(outer.within(&c, Duration::from_secs(10), || c
            .sleep(Duration::from_secs(10))));
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "ended by the outer token"
        );
    }
}
