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

/// An arrival rate that changes over a step (a workload file's list of rates, steps or ramp):
/// one piece after another, each holding a rate or moving linearly from one rate to another;
/// after the last piece its end rate holds. Time counts from the end of the step's warmup (the
/// warmup runs at the first rate).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Schedule {
    pub pieces: Vec<Piece>,
}

/// One piece of a schedule: `seconds` long, from rate `from` to rate `to` (operations per
/// second), linearly.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Piece {
    pub seconds: f64,
    pub from: f64,
    pub to: f64,
}

impl Schedule {
    /// One rate throughout.
    pub fn fixed(rate: f64) -> Schedule {
        Schedule {
            pieces: vec![Piece {
                seconds: 0.0,
                from: rate,
                to: rate,
            }],
        }
    }

    /// The rate `t` seconds after the warmup (the first rate before it).
    pub fn at(&self, t: f64) -> f64 {
        let mut begun = 0.0;
        for p in &self.pieces {
            if t < begun + p.seconds {
                let into = (t - begun).max(0.0) / p.seconds;
                return p.from + (p.to - p.from) * into;
            }
            begun += p.seconds;
        }
        self.pieces.last().map_or(0.0, |p| p.to)
    }

    /// The mean rate over the first `seconds` after the warmup.
    pub fn mean(&self, seconds: f64) -> f64 {
        if seconds <= 0.0 {
            return self.at(0.0);
        }
        let (mut begun, mut sum) = (0.0, 0.0);
        for p in &self.pieces {
            let end = (begun + p.seconds).min(seconds);
            if end > begun {
                let (a, b) = (self.at(begun), self.at(end));
                sum += (a + b) / 2.0 * (end - begun);
            }
            begun += p.seconds;
        }
        if seconds > begun {
            sum += self.at(begun) * (seconds - begun);
        }
        sum / seconds
    }
}

/// How far apart one client's arrivals are.
enum Gap {
    /// The same mean gap throughout.
    Fixed(f64),
    /// This client's `share` of a schedule's rate at the time of the arrival, its clock from
    /// `origin` (the end of the warmup).
    Scheduled {
        schedule: Schedule,
        share: f64,
        origin: Instant,
    },
}

/// The intended start times of one open-loop client's operations.
pub struct Arrivals {
    next: Instant,
    gap: Gap,
    spacing: Spacing,
    rng: SmallRng,
}

impl Arrivals {
    pub fn new(ops_per_sec: f64, spacing: Spacing, start: Instant, seed: u64) -> Self {
        Arrivals {
            next: start,
            gap: Gap::Fixed(1.0 / ops_per_sec.max(1e-9)),
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
        a.stagger(k, n);
        a
    }

    /// Client `k` of `n` clients that share `schedule`'s rate, which starts at `origin`.
    pub fn scheduled(
        schedule: Schedule,
        spacing: Spacing,
        (start, origin): (Instant, Instant),
        (k, n): (usize, usize),
    ) -> Self {
        let mut a = Arrivals::new(1.0, spacing, start, k as u64 + 1);
        a.gap = Gap::Scheduled {
            schedule,
            share: 1.0 / n.max(1) as f64,
            origin,
        };
        a.stagger(k, n);
        a
    }

    fn stagger(&mut self, k: usize, n: usize) {
        if self.spacing == Spacing::Uniform && n > 1 {
            self.next += Duration::from_secs_f64(self.mean_gap() * k as f64 / n as f64);
        }
    }

    /// The mean gap after the next arrival: a schedule's at that moment.
    fn mean_gap(&self) -> f64 {
        match &self.gap {
            Gap::Fixed(g) => *g,
            Gap::Scheduled {
                schedule,
                share,
                origin,
            } => {
                let t = match self.next.checked_duration_since(*origin) {
                    Some(d) => d.as_secs_f64(),
                    None => 0.0,
                };
                1.0 / (schedule.at(t) * share).max(1e-9)
            }
        }
    }

    /// The next intended start; later calls return later instants.
    pub fn next_start(&mut self) -> Instant {
        let at = self.next;
        let mean = self.mean_gap();
        let gap = match self.spacing {
            Spacing::Uniform => mean,
            Spacing::Poisson => -mean * (1.0 - self.rng.gen::<f64>()).ln(),
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

    #[test]
    fn a_schedule_holds_ramps_and_keeps_its_last_rate() {
        let s = Schedule {
            pieces: vec![
                Piece {
                    seconds: 10.0,
                    from: 100.0,
                    to: 100.0,
                },
                Piece {
                    seconds: 10.0,
                    from: 100.0,
                    to: 300.0,
                },
            ],
        };
        assert_eq!(s.at(0.0), 100.0);
        assert_eq!(s.at(9.9), 100.0);
        assert!((s.at(15.0) - 200.0).abs() < 1e-9);
        assert_eq!(s.at(25.0), 300.0);
        assert!((s.mean(20.0) - 150.0).abs() < 1e-9);
        assert!((s.mean(30.0) - 200.0).abs() < 1e-9);
        assert_eq!(Schedule::fixed(7.0).at(1e6), 7.0);
    }

    /// Two clients sharing a ramp from 1000 to 3000 ops/s over one second: 2000 arrivals.
    #[test]
    fn scheduled_arrivals_follow_the_rate_of_the_moment() {
        let start = Instant::now();
        let ramp = Schedule {
            pieces: vec![Piece {
                seconds: 1.0,
                from: 1000.0,
                to: 3000.0,
            }],
        };
        let mut count = 0;
        for k in 0..2 {
            let mut a = Arrivals::scheduled(ramp.clone(), Spacing::Uniform, (start, start), (k, 2));
            while a.next_start() < start + Duration::from_secs(1) {
                count += 1;
            }
        }
        assert!((1990..=2010).contains(&count), "{count} arrivals");
    }
}
