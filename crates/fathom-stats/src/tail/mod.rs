//! Why a step's slowest operations were slow: its kept slowest operations of each kind laid
//! against what the engine did meanwhile (flushes, compactions, stalls, checkpoints). A cause
//! is named when more of the slow operations overlapped it than chance would put there: the
//! operations are grouped into episodes (slow operations within `EPISODE_GAP_US` of each other
//! are one moment of the step, not independent witnesses), each episode's chance of
//! overlapping the cause is what a span of its length placed anywhere in the window would
//! have, and the count that did is weighed by its exact tail probability (Poisson binomial).
//! Writes held back by the engine (a write stop or stall), and any operation of a server whose
//! sessions waited on a lock, are named by their mechanism instead: an operation that spent most
//! of its time inside one waited on it, however often the engine stalls. The seeded simulation in `simulation.rs` measures how often a cause is named when
//! the slow operations had nothing to do with it, and how often a real one is found
//! (docs/tail.md).

pub mod grew;
#[cfg(test)]
mod grew_simulation;
#[cfg(test)]
mod simulation;
pub mod work;
#[cfg(test)]
mod work_simulation;

use crate::bound::Confidence;
use fathom_api::events::{EngineEvent, LOCK_WAIT, STALL, STOP, WHATS};
use fathom_schema::result::tail::{SlowOp, Tail};
use std::collections::BTreeMap;

/// Slow operations closer than this (µs) belong to one episode.
pub const EPISODE_GAP_US: u64 = 250_000;
/// The chance probability under which a cause is named with high and with medium confidence.
pub const HIGH: f64 = 0.001;
pub const MEDIUM: f64 = 0.01;
/// The share of the slow writes' time inside a stop or stall from which it is named, with
/// medium and with high confidence.
pub const HELD_MEDIUM: f64 = 0.5;
pub const HELD_HIGH: f64 = 0.8;

/// One kind's slowest operations, explained.
#[derive(Clone, Debug, PartialEq)]
pub struct KindTail {
    pub kind: String,
    /// Operations kept, and the episodes they fall in.
    pub kept: usize,
    pub episodes: usize,
    pub slowest_us: f64,
    /// The median of the kept operations' latencies.
    pub median_us: f64,
    /// Each kind of event any slow operation overlapped, likeliest cause first.
    pub causes: Vec<Cause>,
    /// With their sleeps timed (`--waits=bpf`): the share of the kept operations' time their
    /// threads spent asleep in each kind of wait, or waiting for a CPU, largest first; `None`
    /// when not timed.
    pub asleep: Option<Vec<AsleepShare>>,
}

/// The share of a kind's slowest operations' time spent in one kind of wait.
#[derive(Clone, Debug, PartialEq)]
pub struct AsleepShare {
    /// `io`, `futex`, `waiting for a cpu`, …
    pub kind: String,
    pub share: f64,
    /// With `--waits=bpf-stacks`: the place (`Asleep::at`) that most of the placed time
    /// of this kind was spent at.
    pub at: Option<String>,
}

/// A kind of engine event, against one kind's slowest operations.
#[derive(Clone, Debug, PartialEq)]
pub struct Cause {
    /// `write stall`, `compaction`, …
    pub what: String,
    /// Kept operations, and episodes, that overlapped one.
    pub ops: usize,
    pub episodes: usize,
    /// The share of the window such events covered (`None` for work done).
    pub time_share: Option<f64>,
    /// The share of the kept operations' time spent inside such events (`None` for work done).
    pub held: Option<f64>,
    /// The chance that as many episodes or more would overlap one with no link between them.
    pub chance: f64,
    /// `Some` when named as a cause: by chance (under `MEDIUM`), or for writes in a stop or
    /// stall by the time they spent in it (`HELD_MEDIUM`).
    pub confidence: Option<Confidence>,
    /// The detail of the event the slowest overlapping operation met; for work done, the
    /// counts against the nearby operations'.
    pub example: String,
    /// For work done: of the kept operations that did more than the operations beside them,
    /// the median count, and the median of their neighbours' medians.
    pub against: Option<[f64; 2]>,
}

impl KindTail {
    /// The share of the kept operations that overlapped a named cause.
    pub fn explained(&self) -> f64 {
        let named: Vec<&Cause> = self
            .causes
            .iter()
            .filter(|c| c.confidence.is_some())
            .collect();
        let top = named.iter().map(|c| c.ops).max().unwrap_or(0);
        top as f64 / self.kept.max(1) as f64
    }
}

/// Each kind's slowest operations of `tail`, explained by its events; `writes` says which
/// kinds write (a write stop holds them back).
pub fn explain(tail: &Tail, writes: &dyn Fn(&str) -> bool) -> Vec<KindTail> {
    let mut kinds: Vec<&str> = tail.slowest.iter().map(|s| s.kind.as_str()).collect();
    kinds.dedup();
    kinds
        .into_iter()
        .map(|kind| {
            let ops: Vec<&SlowOp> = tail.slowest.iter().filter(|s| s.kind == kind).collect();
            let held_back = writes(kind);
            let mut k = of_kind(kind, &ops, &tail.events, tail.window_us, held_back);
            k.asleep = tail.sleeps_timed.then(|| asleep_shares(&ops));
            k.causes.extend(work::causes(&tail.work, &ops));
            sort(&mut k.causes);
            k
        })
        .collect()
}

fn of_kind(
    kind: &str,
    ops: &[&SlowOp],
    events: &[EngineEvent],
    window: [u64; 2],
    writes: bool,
) -> KindTail {
    let spans = episodes(ops);
    let mut lat: Vec<f64> = ops.iter().map(|o| o.latency_us).collect();
    lat.sort_by(f64::total_cmp);
    let mut causes: Vec<Cause> = WHATS
        .iter()
        .filter_map(|what| {
            let of: Vec<&EngineEvent> = events.iter().filter(|e| e.what == *what).collect();
            // A stop or stall holds writes back; a lock wait holds any statement.
            let blocks = (writes && (*what == STOP || *what == STALL)) || *what == LOCK_WAIT;
            cause(what, &of, ops, &spans, window, blocks)
        })
        .collect();
    sort(&mut causes);
    KindTail {
        kind: kind.to_string(),
        kept: ops.len(),
        episodes: spans.len(),
        slowest_us: lat.last().copied().unwrap_or(0.0),
        median_us: lat.get(lat.len() / 2).copied().unwrap_or(0.0),
        causes,
        asleep: None,
    }
}

/// Named causes first, then by chance, then by the operations they cover.
fn sort(causes: &mut [Cause]) {
    causes.sort_by(|a, b| {
        (b.confidence.cmp(&a.confidence))
            .then(a.chance.total_cmp(&b.chance))
            .then(b.ops.cmp(&a.ops))
    });
}

/// The confidence a chance under the null earns: high under `HIGH`, medium under `MEDIUM`.
fn confidence_of(chance: f64) -> Option<Confidence> {
    if chance < HIGH {
        Some(Confidence::High)
    } else if chance < MEDIUM {
        Some(Confidence::Medium)
    } else {
        None
    }
}

/// The share of the operations' summed latency their threads spent asleep in each kind of
/// wait, largest first; each placed where most of its placed time was.
fn asleep_shares(ops: &[&SlowOp]) -> Vec<AsleepShare> {
    let total: f64 = ops.iter().map(|o| o.latency_us).sum::<f64>().max(1.0);
    // Each kind's time, and its time at each place.
    let mut by: BTreeMap<&str, (f64, BTreeMap<&str, f64>)> = BTreeMap::new();
    for a in ops.iter().flat_map(|o| &o.asleep) {
        let (us, places) = by.entry(&a.kind).or_default();
        *us += a.us;
        if let Some(at) = &a.at {
            *places.entry(at).or_default() += a.us;
        }
    }
    let mut shares: Vec<AsleepShare> = (by.into_iter())
        .map(|(kind, (us, places))| AsleepShare {
            kind: kind.to_string(),
            share: (us / total).min(1.0),
            at: (places.into_iter())
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(p, _)| p.to_string()),
        })
        .collect();
    shares.sort_by(|a, b| b.share.total_cmp(&a.share));
    shares
}

/// The events `of` (one kind) against the operations; `None` when none overlapped one.
/// `blocks`: the events hold the operations back (a write stop, writes).
fn cause(
    what: &str,
    of: &[&EngineEvent],
    ops: &[&SlowOp],
    spans: &[(u64, u64)],
    window: [u64; 2],
    blocks: bool,
) -> Option<Cause> {
    let hits = |s: u64, e: u64| of.iter().any(|ev| ev.overlaps(s, e));
    let hit_ops: Vec<&&SlowOp> = ops
        .iter()
        .filter(|o| hits(o.start_us, o.end_us()))
        .collect();
    let slowest = hit_ops
        .iter()
        .max_by(|a, b| a.latency_us.total_cmp(&b.latency_us))?;
    // The event that held the slowest operation longest says what held it; of two alike (one
    // wait seen in a log and in the views), the one that says more.
    let (s0, e0) = (slowest.start_us, slowest.end_us());
    let example = (of.iter())
        .filter(|ev| ev.overlaps(s0, e0))
        .max_by_key(|ev| {
            (
                covered(&[(ev.start_us, ev.end_us)], s0, e0),
                ev.detail.len(),
            )
        })
        .map_or_else(String::new, |ev| ev.detail.clone());
    let intervals: Vec<(u64, u64)> = of.iter().map(|e| (e.start_us, e.end_us)).collect();
    let (mut chances, mut hit) = (Vec::new(), 0);
    overlaps(&intervals, spans, window, (&mut chances, &mut hit));
    let chance = tail_at_least(&chances, hit);
    // Time inside counts where the events surely were (a sampled one's looks that saw it).
    let sure: Vec<(u64, u64)> = of.iter().map(|e| e.sure()).collect();
    let inside: f64 = ops
        .iter()
        .map(|o| covered(&sure, o.start_us, o.end_us()) as f64)
        .sum();
    let held = inside / ops.iter().map(|o| o.latency_us).sum::<f64>().max(1.0);
    let by_chance = confidence_of(chance);
    let by_mechanism = if !blocks || held < HELD_MEDIUM {
        None
    } else if held >= HELD_HIGH {
        Some(Confidence::High)
    } else {
        Some(Confidence::Medium)
    };
    let confidence = by_chance.max(by_mechanism);
    Some(Cause {
        what: what.to_string(),
        ops: hit_ops.len(),
        episodes: hit,
        time_share: Some(overlap_chance(&intervals, 0, window)),
        held: Some(held.min(1.0)),
        chance,
        confidence,
        example,
        against: None,
    })
}

/// The chance that the episodes of kind `kind`'s slowest operations over `tails` (pooled)
/// would overlap events `what` as often as they did with no link between them: the run
/// section's test of a cause, over each tail's own window and events.
pub(super) fn overlap_by_chance(tails: &[&Tail], kind: &str, what: &str) -> f64 {
    let (mut chances, mut hit) = (Vec::new(), 0);
    for tail in tails {
        let ops: Vec<&SlowOp> = tail.slowest.iter().filter(|o| o.kind == kind).collect();
        let intervals: Vec<(u64, u64)> = (tail.events.iter())
            .filter(|e| e.what == what)
            .map(|e| (e.start_us, e.end_us))
            .collect();
        let spans = episodes(&ops);
        overlaps(&intervals, &spans, tail.window_us, (&mut chances, &mut hit));
    }
    tail_at_least(&chances, hit)
}

/// Adds to `chances` each span's chance of overlapping one of `intervals` placed at random in
/// `window`, and to `hit` the spans that do overlap one.
fn overlaps(
    intervals: &[(u64, u64)],
    spans: &[(u64, u64)],
    window: [u64; 2],
    (chances, hit): (&mut Vec<f64>, &mut usize),
) {
    for &(s, e) in spans {
        chances.push(overlap_chance(intervals, e - s, window));
        *hit += usize::from(intervals.iter().any(|&(a, b)| a <= e && s <= b));
    }
}

/// How much of `[start, end]` the intervals cover, µs.
fn covered(intervals: &[(u64, u64)], start: u64, end: u64) -> u64 {
    union_len(intervals.iter().map(|&(s, e)| (s.max(start), e.min(end))))
}

/// The length of the union of `parts` (empty ones ignored).
fn union_len(parts: impl Iterator<Item = (u64, u64)>) -> u64 {
    let mut parts: Vec<(u64, u64)> = parts.filter(|(s, e)| s < e).collect();
    parts.sort_unstable();
    let (mut total, mut reach) = (0, 0);
    for (s, e) in parts {
        let s = s.max(reach);
        if e > s {
            total += e - s;
            reach = e;
        }
    }
    total
}

/// The operations' spans merged where they lie within `EPISODE_GAP_US` of each other.
fn episodes(ops: &[&SlowOp]) -> Vec<(u64, u64)> {
    let mut spans: Vec<(u64, u64)> = ops.iter().map(|o| (o.start_us, o.end_us())).collect();
    spans.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 + EPISODE_GAP_US => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Each episode's slowest operation: one witness a moment, chosen by latency alone.
fn episode_witnesses<'a>(ops: &[&'a SlowOp]) -> Vec<&'a SlowOp> {
    episodes(ops)
        .iter()
        .filter_map(|&(s, e)| {
            (ops.iter())
                .filter(|o| o.start_us >= s && o.start_us <= e)
                .max_by(|a, b| a.latency_us.total_cmp(&b.latency_us))
                .copied()
        })
        .collect()
}

/// The chance that a span of `len` µs placed uniformly in `window` overlaps one of
/// `intervals`: the measure of the starts that do, over the starts there are.
fn overlap_chance(intervals: &[(u64, u64)], len: u64, [from, to]: [u64; 2]) -> f64 {
    let last_start = to.saturating_sub(len);
    if last_start <= from {
        return if intervals.is_empty() { 0.0 } else { 1.0 };
    }
    let starts =
        (intervals.iter()).map(|&(s, e)| (s.saturating_sub(len).max(from), e.min(last_start)));
    let covered = union_len(starts);
    covered as f64 / (last_start - from) as f64
}

/// The chance that at least `k` of independent events of the chances `p` happen (the Poisson
/// binomial distribution's upper tail, exactly).
fn tail_at_least(p: &[f64], k: usize) -> f64 {
    if k == 0 {
        return 1.0;
    }
    // dist[j]: the chance of exactly j so far.
    let mut dist = vec![0.0; p.len() + 1];
    dist[0] = 1.0;
    for (i, &pi) in p.iter().enumerate() {
        for j in (0..=i + 1).rev() {
            let stay = dist[j] * (1.0 - pi);
            let came = if j > 0 { dist[j - 1] * pi } else { 0.0 };
            dist[j] = stay + came;
        }
    }
    dist[k.min(dist.len())..].iter().sum::<f64>().min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chance_of_overlap_counts_the_starts_that_meet_an_interval() {
        // One interval of 10 in a window of 100: a point meets it 10% of the time, a span of 10
        // placed anywhere in the 90 starts meets it over 20 of them.
        assert!((overlap_chance(&[(50, 60)], 0, [0, 100]) - 0.10).abs() < 1e-9);
        assert!((overlap_chance(&[(50, 60)], 10, [0, 100]) - 20.0 / 90.0).abs() < 1e-9);
        // Overlapping intervals are counted once.
        assert!((overlap_chance(&[(10, 30), (20, 40)], 0, [0, 100]) - 0.30).abs() < 1e-9);
    }

    #[test]
    fn the_poisson_binomial_tail_matches_the_binomial() {
        // Four fair coins: P(at least 3) = 5/16.
        assert!((tail_at_least(&[0.5; 4], 3) - 5.0 / 16.0).abs() < 1e-12);
        assert_eq!(tail_at_least(&[0.3; 4], 0), 1.0);
        assert!(tail_at_least(&[0.3; 4], 5) == 0.0);
    }

    #[test]
    fn slow_operations_close_together_are_one_episode() {
        let op = |start_us, latency_us| SlowOp {
            kind: "r".into(),
            client: 0,
            start_us,
            latency_us,
            tid: 0,
            session: 0,
            asleep: Vec::new(),
            work: Vec::new(),
            nearby: 0,
        };
        let ops = [op(0, 100.0), op(5_000, 100.0), op(1_000_000, 50.0)];
        let refs: Vec<&SlowOp> = ops.iter().collect();
        assert_eq!(episodes(&refs), vec![(0, 5_100), (1_000_000, 1_000_050)]);
    }
}
