//! Readings too dear to take at every interval (a walk of the data directory, of /proc, of a
//! server's page tables), kept and reused between boundaries: each is taken again only when its
//! cost stays a small share of the time since it was last taken, so a sampler's cost follows
//! what it learns rather than the host's size.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The share of the time between two readings that one reading may cost: a reading that took
/// 10 ms is taken at most every 10 s between boundaries.
pub const COST_SHARE: f64 = 1e-3;

/// One kind of reading, as last taken.
pub struct Recent<T> {
    /// Taken again no sooner than this, however cheap.
    floor: Duration,
    last: Mutex<Option<Kept<T>>>,
}

struct Kept<T> {
    at: Instant,
    took: Duration,
    value: T,
}

impl<T: Clone> Recent<T> {
    pub fn new(floor: Duration) -> Recent<T> {
        Recent {
            floor,
            last: Mutex::new(None),
        }
    }

    /// The reading as last taken, while it is recent: younger than the floor, and than its cost
    /// divided by `COST_SHARE`.
    pub fn recent(&self) -> Option<T> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let kept = last.as_ref()?;
        let age = kept.at.elapsed();
        (age < self.floor.max(kept.took.div_f64(COST_SHARE))).then(|| kept.value.clone())
    }

    /// Keeps `value`, read now at a cost of `took`.
    pub fn keep(&self, value: T, took: Duration) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(Kept {
            at: Instant::now(),
            took,
            value,
        });
    }

    /// The reading: `read` afresh when `fresh` or when the last is no longer recent, and kept.
    pub fn get(&self, fresh: bool, read: impl FnOnce() -> T) -> T {
        if !fresh {
            if let Some(value) = self.recent() {
                return value;
            }
        }
        let start = Instant::now();
        let value = read();
        self.keep(value.clone(), start.elapsed());
        value
    }

    /// Sets the last reading as taken `age` ago at a cost of `took`: for tests.
    #[cfg(test)]
    pub fn pretend(&self, value: T, age: Duration, took: Duration) {
        *self.last.lock().unwrap() = Some(Kept {
            at: Instant::now() - age,
            took,
            value,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cheap reading is reused until the floor; a dear one for its cost over the share.
    #[test]
    fn a_reading_is_reused_for_the_longer_of_the_floor_and_its_cost() {
        let r = Recent::new(Duration::from_secs(5));
        assert_eq!(r.recent(), None::<u32>);
        r.pretend(1, Duration::from_secs(4), Duration::from_millis(1));
        assert_eq!(r.recent(), Some(1));
        r.pretend(1, Duration::from_secs(6), Duration::from_millis(1));
        assert_eq!(r.recent(), None);
        r.pretend(2, Duration::from_secs(6), Duration::from_millis(10));
        assert_eq!(r.recent(), Some(2), "10 ms of reading is kept 10 s");
        assert_eq!(r.get(false, || 3), 2);
        assert_eq!(r.get(true, || 3), 3);
        r.pretend(2, Duration::from_secs(11), Duration::from_millis(10));
        assert_eq!(r.get(false, || 4), 4);
    }
}
