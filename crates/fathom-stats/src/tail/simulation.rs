//! The seeded simulation behind the tail's named causes (docs/tail.md): steps whose slow
//! operations have nothing to do with the engine's events (at random moments, or in bursts as a
//! busy host makes them) must rarely get a cause named; steps whose slow operations mostly fell
//! in write stalls must get the stall named.

use super::{explain, Confidence};
use crate::rng::SplitMix;
use fathom_api::events::{EngineEvent, COMPACTION, FLUSH, STALL};
use fathom_schema::result::tail::{SlowOp, Tail};

pub(super) const WINDOW_US: u64 = 30_000_000;
const TRIALS: usize = 2_000;

/// Events of one kind: arrivals at `per_sec`, lengths exponential about `mean_us`.
pub(super) fn events(
    rng: &mut SplitMix,
    what: &str,
    per_sec: f64,
    mean_us: f64,
) -> Vec<EngineEvent> {
    let mut out = Vec::new();
    let mut t = 0.0;
    loop {
        t += -rng.uniform().ln() / per_sec * 1e6;
        if t >= WINDOW_US as f64 {
            return out;
        }
        let len = -rng.uniform().ln() * mean_us;
        out.push(EngineEvent {
            what: what.into(),
            start_us: t as u64,
            end_us: (t + len).min(WINDOW_US as f64) as u64,
            detail: String::new(),
            seen_us: None,
        });
    }
}

/// An LSM's background work over a 30 s step: flushes about 10% of the time, compactions
/// about 20%, stalls about 2%.
fn engine(rng: &mut SplitMix) -> Vec<EngineEvent> {
    let mut ev = events(rng, FLUSH, 1.0, 100_000.0);
    ev.extend(events(rng, COMPACTION, 0.2, 1_000_000.0));
    ev.extend(events(rng, STALL, 0.1, 200_000.0));
    ev
}

/// An episode of 1 to 3 slow operations (1–20 ms) around `at`.
pub(super) fn episode(rng: &mut SplitMix, at: u64, out: &mut Vec<SlowOp>) {
    for _ in 0..1 + rng.below(3) {
        out.push(SlowOp {
            kind: "read".into(),
            client: rng.below(4),
            start_us: (at + rng.below(2_000) as u64).min(WINDOW_US - 20_000),
            latency_us: 1_000.0 + rng.uniform() * 19_000.0,
            tid: 0,
            session: 0,
            asleep: Vec::new(),
            work: Vec::new(),
            nearby: 0,
        });
    }
}

/// Slow operations in `episodes` episodes at random moments, in bursts of up to three 20–200
/// ms apart when `bursts` (a busy host's hiccups).
pub(super) fn at_random(rng: &mut SplitMix, episodes: usize, bursts: bool) -> Vec<SlowOp> {
    let mut ops = Vec::new();
    let mut made = 0;
    while made < episodes {
        let mut at = rng.below(WINDOW_US as usize - 1_000_000) as u64;
        let n = if bursts { 1 + rng.below(3) } else { 1 };
        for _ in 0..n.min(episodes - made) {
            episode(rng, at, &mut ops);
            at += 20_000 + rng.below(180_000) as u64;
            made += 1;
        }
    }
    ops
}

/// How slow operations come about in a simulated step.
#[derive(Clone, Copy)]
enum Slow {
    /// At moments drawn uniformly, unrelated to the engine.
    Random,
    /// In bursts of 1–3 episodes 20–200 ms apart (a host's hiccups), unrelated to the engine.
    Bursts,
    /// 80% inside a write stall, the rest at random.
    InStalls,
}

fn step(rng: &mut SplitMix, slow: Slow, episodes: usize) -> Tail {
    let events = engine(rng);
    let stalls: Vec<&EngineEvent> = events.iter().filter(|e| e.what == STALL).collect();
    let mut ops = Vec::new();
    let mut made = 0;
    while made < episodes {
        let random = rng.below(WINDOW_US as usize - 1_000_000) as u64;
        match slow {
            Slow::Random => episode(rng, random, &mut ops),
            Slow::Bursts => {
                let mut at = random;
                for _ in 0..(1 + rng.below(3)).min(episodes - made) {
                    episode(rng, at, &mut ops);
                    at += 20_000 + rng.below(180_000) as u64;
                    made += 1;
                }
                continue;
            }
            Slow::InStalls if !stalls.is_empty() && rng.uniform() < 0.8 => {
                let s = stalls[rng.below(stalls.len())];
                let at = s.start_us + rng.below((s.end_us - s.start_us).max(1) as usize) as u64;
                episode(rng, at, &mut ops);
            }
            Slow::InStalls => episode(rng, random, &mut ops),
        }
        made += 1;
    }
    told(ops, events)
}

/// A simulated step's tail: `ops` kept over the window, beside `events` the engine told.
pub(super) fn told(ops: Vec<SlowOp>, events: Vec<EngineEvent>) -> Tail {
    Tail {
        slowest: ops,
        kept: 16,
        window_us: [0, WINDOW_US],
        events,
        engine_tells: true,
        sleeps_timed: false,
        work: Vec::new(),
    }
}

/// Over the trials: the share in which any cause was named at `at_least`, and in which the
/// stall was; the operations are writes (a stall holds them back) or not.
fn rates(seed: u64, slow: Slow, episodes: usize, at_least: Confidence, writes: bool) -> (f64, f64) {
    let mut rng = SplitMix(seed);
    let (mut any, mut stall) = (0, 0);
    for _ in 0..TRIALS {
        let kinds = explain(&step(&mut rng, slow, episodes), &|_| writes);
        let named = |c: &super::Cause| c.confidence.is_some_and(|x| x >= at_least);
        let causes = &kinds[0].causes;
        any += usize::from(causes.iter().any(named));
        stall += usize::from(causes.iter().any(|c| c.what == STALL && named(c)));
    }
    (any as f64 / TRIALS as f64, stall as f64 / TRIALS as f64)
}

#[test]
fn a_cause_unrelated_to_the_slow_operations_is_rarely_named() {
    for (seed, slow, writes) in [
        (7, Slow::Random, false),
        (8, Slow::Bursts, false),
        (10, Slow::Bursts, true),
    ] {
        for episodes in [3, 8, 16] {
            let (medium, _) = rates(seed, slow, episodes, Confidence::Medium, writes);
            let (high, _) = rates(seed, slow, episodes, Confidence::High, writes);
            eprintln!(
                "unrelated {episodes} episodes, writes {writes}: any cause named {medium:.3} \
                 medium, {high:.3} high"
            );
            assert!(medium <= 0.05, "{episodes} episodes: {medium}");
            assert!(high <= 0.01, "{episodes} episodes: {high}");
        }
    }
}

#[test]
fn slow_operations_in_write_stalls_name_the_stall() {
    // About three stalls a step: slow operations in one stall are one witness, which caps what
    // more episodes can add.
    for (episodes, power) in [(3, 0.55), (8, 0.7), (16, 0.7)] {
        let (_, stall) = rates(9, Slow::InStalls, episodes, Confidence::Medium, false);
        eprintln!("in stalls {episodes} episodes: stall named {stall:.3}");
        assert!(stall >= power, "{episodes} episodes: {stall}");
        // Writes held in the stalls are named by the time they spent there, almost always.
        let (_, held) = rates(9, Slow::InStalls, episodes, Confidence::Medium, true);
        eprintln!("writes in stalls {episodes} episodes: stall named {held:.3}");
        assert!(held >= stall, "{episodes} episodes: {held}");
    }
}
