//! The seeded simulation behind `fathom compare`'s "grew with" (docs/tail.md): two setups whose
//! slowest operations spent their time alike — the same waits, the same work, episodes at
//! random or in bursts — must rarely get a figure named as grown; a new setup whose slow
//! operations spent five times as long in the device must get it named; both with each side's
//! repeats pooled, their levels drifting.

use super::grew::figures;
use super::simulation::{at_random, events, told, WINDOW_US};
use crate::bound::Confidence;
use crate::rng::SplitMix;
use fathom_schema::result::tail::{Asleep, Tail, WorkCount};

const TRIALS: usize = 1_000;

/// A lognormal draw about `median`, spread by about a factor of two.
fn lognormal(rng: &mut SplitMix, median: f64) -> f64 {
    median * (0.7 * rng.normal()).exp()
}

/// A side's tail: `episodes` episodes (in bursts of up to three when `bursts`), each operation
/// asleep in `io` about `io_us` and on a futex about 300 µs, skipping a count of tombstones
/// that is none for most.
fn side(rng: &mut SplitMix, episodes: usize, bursts: bool, io_us: f64) -> Tail {
    let mut ops = at_random(rng, episodes, bursts);
    for op in &mut ops {
        let io = lognormal(rng, io_us);
        let futex = lognormal(rng, 300.0);
        op.latency_us = io + futex + lognormal(rng, 200.0);
        op.asleep = vec![
            Asleep {
                kind: "io".into(),
                us: io,
                at: None,
            },
            Asleep {
                kind: "futex".into(),
                us: futex,
                at: None,
            },
        ];
        let skipped = if rng.uniform() < 0.7 {
            0
        } else {
            lognormal(rng, 50.0) as u64
        };
        op.work = vec![WorkCount {
            n: skipped,
            median: 0,
            at_least: 0,
        }];
        op.nearby = 64;
    }
    Tail {
        slowest: ops,
        kept: 16,
        window_us: [0, WINDOW_US],
        events: Vec::new(),
        engine_tells: false,
        sleeps_timed: true,
        work: vec!["tombstones skipped".into()],
    }
}

/// Over the trials: the share with any figure named at `at_least`, and with `io` named.
fn rates(
    seed: u64,
    episodes: usize,
    bursts: bool,
    new_io_us: f64,
    at_least: Confidence,
) -> (f64, f64) {
    pooled_rates(seed, (1, episodes), (bursts, 0.0), new_io_us, at_least)
}

/// `rates` over sides of `repeats` repeats of `episodes` episodes each, pooled, each repeat's
/// device time moved by a drift of its own (a lognormal factor of spread `drift`: runs of one
/// session differ).
fn pooled_rates(
    seed: u64,
    (repeats, episodes): (usize, usize),
    (bursts, drift): (bool, f64),
    new_io_us: f64,
    at_least: Confidence,
) -> (f64, f64) {
    let mut rng = SplitMix(seed);
    let (mut any, mut io) = (0, 0);
    for _ in 0..TRIALS {
        let mut draw = |io_us: f64| -> Vec<Tail> {
            (0..repeats)
                .map(|_| {
                    let level = (drift * rng.normal()).exp();
                    side(&mut rng, episodes, bursts, io_us * level)
                })
                .collect()
        };
        let (base, new) = (draw(2_000.0), draw(new_io_us));
        let (b, n): (Vec<&Tail>, Vec<&Tail>) = (base.iter().collect(), new.iter().collect());
        let f = figures(&b, &n, "read");
        let named = |x: &super::grew::Figure| x.confidence.is_some_and(|c| c >= at_least);
        any += usize::from(f.iter().any(named));
        io += usize::from(f.iter().any(|x| x.what == "io" && named(x)));
    }
    (any as f64 / TRIALS as f64, io as f64 / TRIALS as f64)
}

#[test]
fn alike_setups_rarely_get_a_figure_named_as_grown() {
    for (seed, bursts) in [(31, false), (32, true)] {
        for episodes in [3, 8, 16] {
            let (medium, _) = rates(seed, episodes, bursts, 2_000.0, Confidence::Medium);
            let (high, _) = rates(seed, episodes, bursts, 2_000.0, Confidence::High);
            eprintln!(
                "alike, {episodes} episodes a side, bursts {bursts}: any of 4 figures named \
                 {medium:.3} medium, {high:.3} high"
            );
            assert!(medium <= 0.05, "{episodes} episodes: {medium}");
            assert!(high <= 0.01, "{episodes} episodes: {high}");
        }
    }
}

/// Three repeats a side of three episodes each, pooled (nine witnesses a side), the repeats'
/// device time drifting by about 10%: alike sides (their episodes in bursts) rarely get a
/// figure named, and five times the device time (episodes apart) is named where one repeat
/// of three could name nothing.
#[test]
fn pooled_repeats_name_what_one_repeat_cannot() {
    for drift in [0.0, 0.1] {
        let alike = |at| pooled_rates(34, (3, 3), (true, drift), 2_000.0, at);
        let ((medium, _), (high, _)) = (alike(Confidence::Medium), alike(Confidence::High));
        let (_, io) = pooled_rates(35, (3, 3), (false, drift), 10_000.0, Confidence::Medium);
        eprintln!(
            "3 repeats of 3 episodes a side, drift {drift}: alike named {medium:.3} medium, \
             {high:.3} high; device time 5x: io named {io:.3}"
        );
        assert!(medium <= 0.05 && high <= 0.01, "{medium} {high}");
        assert!(io >= 0.85, "{io}");
    }
}

#[test]
fn five_times_the_device_time_is_named() {
    // Three episodes a side cannot name one: the smallest chance of three against three is 1
    // in 20.
    for (episodes, power) in [(3, 0.0), (5, 0.5), (8, 0.85), (16, 0.95)] {
        let (_, io) = rates(33, episodes, false, 10_000.0, Confidence::Medium);
        eprintln!("device time 5x, {episodes} episodes a side: io named {io:.3}");
        assert!(io >= power, "{episodes} episodes: {io}");
    }
}

/// A side's tail of `episodes` episodes beside compactions arriving at `per_sec` (about a
/// second long each): at random moments, or each inside a compaction when `linked`.
fn beside_compactions(rng: &mut SplitMix, episodes: usize, per_sec: f64, linked: bool) -> Tail {
    let events = events(rng, "compaction", per_sec, 1_000_000.0);
    let mut ops = at_random(rng, episodes, false);
    if linked && !events.is_empty() {
        for op in &mut ops {
            let e = &events[rng.below(events.len())];
            let room = (e.end_us - e.start_us).saturating_sub(op.latency_us as u64);
            op.start_us = e.start_us + rng.below(room as usize + 1) as u64;
        }
    }
    told(ops, events)
}

/// Over the trials: the share with `inside compaction` named at `at_least`, sides of
/// `repeats` repeats of `episodes` episodes, the base's compactions arriving at `base_rate` a
/// second and the new's at `new_rate`, the new side's slow operations inside them if `linked`.
fn compaction_rate(
    seed: u64,
    (repeats, episodes): (usize, usize),
    (base_rate, new_rate): (f64, f64),
    linked: bool,
    at_least: Confidence,
) -> f64 {
    let mut rng = SplitMix(seed);
    let mut named = 0;
    for _ in 0..TRIALS {
        let mut draw = |rate: f64, linked: bool| -> Vec<Tail> {
            (0..repeats)
                .map(|_| beside_compactions(&mut rng, episodes, rate, linked))
                .collect()
        };
        let (base, new) = (draw(base_rate, false), draw(new_rate, linked));
        let (b, n): (Vec<&Tail>, Vec<&Tail>) = (base.iter().collect(), new.iter().collect());
        let f = figures(&b, &n, "read");
        named +=
            usize::from(f.iter().any(|x| {
                x.what == "inside compaction" && x.confidence.is_some_and(|c| c >= at_least)
            }));
    }
    named as f64 / TRIALS as f64
}

/// Compactions covering about 60% of the new side's window against 10% of the base's, the
/// slow operations at random moments on both: more of them overlap one on the new side only
/// because there is more to overlap, and that is not named as grown; slow operations inside
/// the new side's compactions (covering as much as the base's) are.
#[test]
fn events_covering_more_of_the_window_are_weighed_by_chance() {
    let mut failed = Vec::new();
    for (repeats, episodes) in [(1, 8), (1, 16), (3, 5)] {
        let sides = (repeats, episodes);
        let medium = compaction_rate(36, sides, (0.1, 0.9), false, Confidence::Medium);
        let high = compaction_rate(36, sides, (0.1, 0.9), false, Confidence::High);
        let linked = compaction_rate(37, sides, (0.1, 0.1), true, Confidence::Medium);
        eprintln!(
            "{repeats} x {episodes} episodes a side, compactions 10% against 60% of the window, \
             unrelated: named {medium:.3} medium, {high:.3} high; inside them (10% both): \
             named {linked:.3}"
        );
        if medium > 0.05 || high > 0.01 || linked < 0.5 {
            failed.push((repeats, episodes, medium, high, linked));
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}
