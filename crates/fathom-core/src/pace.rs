//! Pacing: a byte-rate limiter for background writers (db_bench's
//! `--benchmark_write_rate_limit`) and an arrival schedule for open-loop clients.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// Lets through `units_per_sec` on average. With a refill period of zero, after each
/// operation the next may start once the units sent so far are due. With a period (RocksDB's
/// `GenericRateLimiter`, which db_bench's writer waits on: 100 ms), each period's budget is
/// spent at once, back to back, and the writer sleeps until the next period once it is gone:
/// ten wake-ups a second instead of one per write.
pub struct UnitRate {
    start: Instant,
    units_per_sec: f64,
    period: Duration,
    sent: u64,
}

impl UnitRate {
    pub fn new(units_per_sec: f64, period: Duration) -> Self {
        UnitRate {
            start: Instant::now(),
            units_per_sec: units_per_sec.max(1.0),
            period,
            sent: 0,
        }
    }

    /// Accounts for `units` just sent; returns when the next operation may start. A writer that
    /// fell behind (a write stall) catches up at most one period's worth (100 ms without a
    /// period) rather than in one burst: as RocksDB's limiter, whose unused budget does not
    /// pile up beyond a period.
    pub fn charge(&mut self, units: u64) -> Instant {
        self.sent += units;
        let backlog = if self.period.is_zero() {
            Duration::from_millis(100)
        } else {
            self.period
        };
        let owed = Duration::from_secs_f64(self.sent as f64 / self.units_per_sec);
        if let Some(earliest) = Instant::now().checked_sub(backlog + owed) {
            self.start = self.start.max(earliest);
        }
        let due = self.sent as f64 / self.units_per_sec;
        if self.period.is_zero() {
            return self.start + Duration::from_secs_f64(due);
        }
        // The period whose budget the next operation draws on begins after `due`'s whole periods.
        let period = self.period.as_secs_f64();
        self.start + Duration::from_secs_f64((due / period).floor() * period)
    }
}

/// How arrivals are spaced in open-loop mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Spacing {
    /// Every 1/rate seconds.
    Uniform,
    /// Exponential gaps: a Poisson process.
    Poisson,
}

/// The intended start times of one open-loop client's operations.
pub struct Arrivals {
    next: Instant,
    mean_gap: f64,
    spacing: Spacing,
    rng: SmallRng,
}

impl Arrivals {
    pub fn new(ops_per_sec: f64, spacing: Spacing, start: Instant, seed: u64) -> Self {
        Arrivals {
            next: start,
            mean_gap: 1.0 / ops_per_sec.max(1e-9),
            spacing,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// Client `k` of `n` clients that share a step's rate, each with its own arrivals: uniform
    /// ones start a `k/n` share of a gap apart, so the clients take turns instead of all
    /// firing at once every gap; Poisson ones are independent already.
    pub fn staggered(
        ops_per_sec: f64,
        spacing: Spacing,
        start: Instant,
        (k, n): (usize, usize),
    ) -> Self {
        let mut a = Arrivals::new(ops_per_sec, spacing, start, k as u64 + 1);
        if spacing == Spacing::Uniform && n > 1 {
            a.next += Duration::from_secs_f64(a.mean_gap * k as f64 / n as f64);
        }
        a
    }

    /// The next intended start; later calls return later instants.
    pub fn next_start(&mut self) -> Instant {
        let at = self.next;
        let gap = match self.spacing {
            Spacing::Uniform => self.mean_gap,
            Spacing::Poisson => -self.mean_gap * (1.0 - self.rng.gen::<f64>()).ln(),
        };
        self.next += Duration::from_secs_f64(gap);
        at
    }
}

/// Sleeps until `at` (returns at once if it has passed).
pub fn sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_rate_spaces_by_bytes() {
        let mut r = UnitRate::new(1000.0, Duration::ZERO);
        let t0 = r.start;
        assert_eq!(r.charge(500) - t0, Duration::from_millis(500));
        assert_eq!(r.charge(500) - t0, Duration::from_secs(1));
    }

    #[test]
    fn a_refill_period_lets_its_budget_through_at_once() {
        // 1000 units a second, refilled every 100 ms: 100 units a period.
        let mut r = UnitRate::new(1000.0, Duration::from_millis(100));
        let t0 = r.start;
        assert_eq!(r.charge(60) - t0, Duration::ZERO);
        assert_eq!(r.charge(39) - t0, Duration::ZERO);
        assert_eq!(r.charge(1) - t0, Duration::from_millis(100));
        assert_eq!(r.charge(150) - t0, Duration::from_millis(200));
    }

    /// A writer stalled for two seconds at 1000 units a second does not then send 2000 units
    /// back to back: it owes at most one period (100 ms without one), plus, with a period, the
    /// budget of the period it is in.
    #[test]
    fn after_a_stall_the_catch_up_is_one_period_at_most() {
        for period in [Duration::ZERO, Duration::from_millis(100)] {
            let mut r = UnitRate::new(1000.0, period);
            r.start -= Duration::from_secs(2);
            let due = r.charge(10);
            let behind = Instant::now().saturating_duration_since(due);
            let most = Duration::from_millis(101) + period;
            assert!(behind <= most, "{period:?}: {behind:?} behind");
        }
    }

    #[test]
    fn uniform_arrivals_are_evenly_spaced() {
        let start = Instant::now();
        let mut a = Arrivals::new(100.0, Spacing::Uniform, start, 1);
        assert_eq!(a.next_start(), start);
        let second = a.next_start() - start;
        assert!((second.as_secs_f64() - 0.01).abs() < 1e-9);
    }

    /// Four clients at 100 ops/s each: uniform arrivals 2.5 ms apart, not all at once.
    #[test]
    fn uniform_clients_take_turns() {
        let start = Instant::now();
        let firsts: Vec<f64> = (0..4)
            .map(|k| {
                let mut a = Arrivals::staggered(100.0, Spacing::Uniform, start, (k, 4));
                (a.next_start() - start).as_secs_f64()
            })
            .collect();
        for (k, at) in firsts.iter().enumerate() {
            assert!((at - 0.0025 * k as f64).abs() < 1e-9, "{firsts:?}");
        }
    }

    #[test]
    fn poisson_arrivals_have_the_asked_mean_rate() {
        let start = Instant::now();
        let mut a = Arrivals::new(1000.0, Spacing::Poisson, start, 7);
        let mut last = start;
        for _ in 0..20_000 {
            last = a.next_start();
        }
        let rate = 20_000.0 / (last - start).as_secs_f64();
        assert!((950.0..1050.0).contains(&rate), "rate {rate}");
    }
}
