//! The seeded simulation behind the tail's work causes (docs/tail.md): steps whose slow
//! operations did no more work than those beside them — while the work grows over the step
//! (tombstones piling up), with most operations doing none (ties), in bursts — must rarely get
//! a counter named; steps whose slow operations mostly did many times the work must get it
//! named.

use super::simulation::{at_random, WINDOW_US};
use super::{explain, Confidence};
use crate::rng::SplitMix;
use fathom_schema::result::tail::{SlowOp, Tail, WorkCount};

const TRIALS: usize = 2_000;
const NEARBY: usize = 64;
const COUNTERS: [&str; 5] = ["tombstones", "entries", "blocks", "bytes", "hits"];

/// One operation's count at `t` (µs into the step): none for most, else exponential about a
/// mean that grows tenfold over the step; an operation that did more (`heavy` above 1) always
/// did some, `heavy` times as much.
fn draw(rng: &mut SplitMix, t: u64, heavy: f64) -> u64 {
    if heavy <= 1.0 && rng.uniform() < 0.6 {
        return 0;
    }
    let mean = (1.0 + 9.0 * t as f64 / WINDOW_US as f64) * 20.0 * heavy;
    (-rng.uniform().ln() * mean) as u64
}

/// Counts for `op`: its own (heavy with chance `heavy_share`) against `NEARBY` drawn over the
/// 100 ms before it.
fn count(rng: &mut SplitMix, op: &mut SlowOp, heavy_share: f64) {
    let heavy = if rng.uniform() < heavy_share {
        20.0
    } else {
        1.0
    };
    op.nearby = NEARBY as u32;
    op.work = (0..COUNTERS.len())
        .map(|c| {
            // The first counter is the one that differs; the others never do.
            let own = draw(rng, op.start_us, if c == 0 { heavy } else { 1.0 });
            // The nearby operations ran up to 100 ms before it, when the work was less.
            let mut near: Vec<u64> = (0..NEARBY)
                .map(|_| {
                    let t = op.start_us.saturating_sub(rng.below(100_000) as u64);
                    draw(rng, t, 1.0)
                })
                .collect();
            near.sort_unstable();
            WorkCount {
                n: own,
                median: near[NEARBY / 2],
                at_least: near.iter().filter(|&&v| v >= own).count() as u32,
            }
        })
        .collect();
}

/// A step of `episodes` episodes at random moments (in bursts of up to three when `bursts`),
/// its slow operations heavy with chance `heavy_share`.
fn step(rng: &mut SplitMix, episodes: usize, bursts: bool, heavy_share: f64) -> Tail {
    let mut ops = at_random(rng, episodes, bursts);
    for op in &mut ops {
        count(rng, op, heavy_share);
    }
    Tail {
        slowest: ops,
        kept: 16,
        window_us: [0, WINDOW_US],
        events: Vec::new(),
        engine_tells: true,
        sleeps_timed: false,
        work: COUNTERS.iter().map(|c| c.to_string()).collect(),
    }
}

/// Over the trials: the share in which any counter was named at `at_least`, and in which the
/// first (the one that differs, when any does) was.
fn rates(seed: u64, episodes: usize, bursts: bool, heavy: f64, at_least: Confidence) -> (f64, f64) {
    let mut rng = SplitMix(seed);
    let (mut any, mut first) = (0, 0);
    for _ in 0..TRIALS {
        let kinds = explain(&step(&mut rng, episodes, bursts, heavy), &|_| false);
        let named = |c: &super::Cause| c.confidence.is_some_and(|x| x >= at_least);
        let causes = &kinds[0].causes;
        any += usize::from(causes.iter().any(named));
        let tomb = |c: &super::Cause| c.what.ends_with(COUNTERS[0]) && named(c);
        first += usize::from(causes.iter().any(tomb));
    }
    (any as f64 / TRIALS as f64, first as f64 / TRIALS as f64)
}

#[test]
fn work_unrelated_to_the_slow_operations_is_rarely_named() {
    for (seed, bursts) in [(21, false), (22, true)] {
        for episodes in [3, 8, 16] {
            let (medium, _) = rates(seed, episodes, bursts, 0.0, Confidence::Medium);
            let (high, _) = rates(seed, episodes, bursts, 0.0, Confidence::High);
            eprintln!(
                "work unrelated, {episodes} episodes, bursts {bursts}: any of 5 counters named \
                 {medium:.3} medium, {high:.3} high"
            );
            assert!(medium <= 0.05, "{episodes} episodes: {medium}");
            assert!(high <= 0.01, "{episodes} episodes: {high}");
        }
    }
}

#[test]
fn slow_operations_that_did_more_name_the_counter() {
    for (episodes, heavy, power) in [
        (3, 0.7, 0.4),
        (8, 0.7, 0.85),
        (16, 0.7, 0.95),
        (8, 0.4, 0.35),
    ] {
        let (_, named) = rates(23, episodes, false, heavy, Confidence::Medium);
        eprintln!(
            "{:.0}% of slow operations heavy, {episodes} episodes: counter named {named:.3}",
            heavy * 100.0
        );
        assert!(named >= power, "{episodes} episodes: {named}");
    }
}
