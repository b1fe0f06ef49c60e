//! The clock the client loops read once per operation. Where the kernel itself keeps time with
//! the CPU's time-stamp counter (clocksource `tsc`: it found the counter invariant and in step
//! across CPUs), a read is one `rdtsc` and a multiply, about 10 ns here against 23 ns for
//! `clock_gettime`, which was half of the harness's whole cost per operation on the null
//! engine. Elsewhere it is `std::time::Instant`. Either way a `Tick` is nanoseconds since the
//! process's first reading, and converts to and from `Instant` for deadlines and sleeps.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A moment, in nanoseconds since the clock's anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tick(u64);

/// Where the clock starts, and how counter ticks become nanoseconds.
struct Anchor {
    at: Instant,
    tsc: Option<Tsc>,
}

/// The counter's value at the anchor and its nanoseconds per tick, as 32.32 fixed point.
#[derive(Clone, Copy)]
struct Tsc {
    base: u64,
    ns_per_tick: u64,
}

static ANCHOR: OnceLock<Anchor> = OnceLock::new();

/// Sets the clock up (calibrating the counter takes about 20 ms), so the first operation is
/// not charged for it. Reading the clock sets it up too.
pub fn init() {
    anchor();
}

/// Which clock `Tick::now` reads: "tsc" or "clock_gettime".
pub fn source() -> &'static str {
    match anchor().tsc {
        Some(_) => "tsc",
        None => "clock_gettime",
    }
}

fn anchor() -> &'static Anchor {
    ANCHOR.get_or_init(|| {
        let tsc = kernel_uses_tsc().then(calibrate).flatten();
        Anchor {
            at: Instant::now(),
            tsc: tsc.map(|ns_per_tick| Tsc {
                base: counter(),
                ns_per_tick,
            }),
        }
    })
}

impl Tick {
    /// Now.
    #[inline]
    pub fn now() -> Tick {
        let a = anchor();
        match a.tsc {
            Some(t) => Tick(t.nanos(counter().saturating_sub(t.base))),
            None => Tick(a.at.elapsed().as_nanos() as u64),
        }
    }

    /// The tick of an `Instant` (one before the anchor is the anchor).
    pub fn from_instant(i: Instant) -> Tick {
        Tick(i.saturating_duration_since(anchor().at).as_nanos() as u64)
    }

    /// The `Instant` of this tick.
    pub fn to_instant(self) -> Instant {
        anchor().at + Duration::from_nanos(self.0)
    }

    /// The time from `earlier` to this tick; zero if `earlier` is later.
    #[inline]
    pub fn since(self, earlier: Tick) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Tsc {
    #[inline]
    fn nanos(self, ticks: u64) -> u64 {
        ((u128::from(ticks) * u128::from(self.ns_per_tick)) >> 32) as u64
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn counter() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64; it only reads the time-stamp counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn counter() -> u64 {
    0
}

/// True where the kernel keeps time with the time-stamp counter, having checked it is
/// invariant and synchronised across CPUs (it falls back to another clocksource when not).
fn kernel_uses_tsc() -> bool {
    cfg!(target_arch = "x86_64")
        && std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .is_ok_and(|s| s.trim() == "tsc")
}

/// Nanoseconds per counter tick (32.32 fixed point) from the counter and `Instant` read 20 ms
/// apart, each pair taken where the two counter reads around the `Instant` were closest (not
/// preempted); `None` if the counter does not advance.
fn calibrate() -> Option<u64> {
    let pair = || {
        (0..5)
            .map(|_| {
                let before = counter();
                let at = Instant::now();
                let after = counter();
                (after.wrapping_sub(before), before / 2 + after / 2, at)
            })
            .min_by_key(|&(width, _, _)| width)
            .map(|(_, tsc, at)| (tsc, at))
            .expect("five tries")
    };
    let (t0, i0) = pair();
    std::thread::sleep(Duration::from_millis(20));
    let (t1, i1) = pair();
    let ticks = t1.checked_sub(t0).filter(|&t| t > 0)?;
    let nanos = (i1 - i0).as_nanos();
    ((nanos << 32) / u128::from(ticks)).try_into().ok()
}

/// Nanoseconds on one of the kernel's clocks (`CLOCK_MONOTONIC`, `CLOCK_BOOTTIME`,
/// `CLOCK_THREAD_CPUTIME_ID`, …); 0 where the kernel cannot read it.
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: one valid timespec to write, for the duration of the call.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_follow_the_system_clock() {
        init();
        let (i0, t0) = (Instant::now(), Tick::now());
        std::thread::sleep(Duration::from_millis(50));
        let (i1, t1) = (Instant::now(), Tick::now());
        let wall = (i1 - i0).as_secs_f64();
        let ticked = t1.since(t0).as_secs_f64();
        assert!(
            (ticked / wall - 1.0).abs() < 0.01,
            "{} clock: {ticked} s against {wall} s",
            source()
        );
        assert_eq!(t0.since(t1), Duration::ZERO);
    }

    #[test]
    fn instants_round_trip() {
        init();
        let i = Instant::now() + Duration::from_millis(3);
        let back = Tick::from_instant(i).to_instant();
        assert!(back.max(i) - back.min(i) < Duration::from_micros(1));
        assert!(Tick::from_instant(i) > Tick::now());
    }
}
