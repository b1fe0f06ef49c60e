//! Between a base and a new setup, which of what a kind's slowest operations spent their time
//! in or did grew: each figure of a kept operation — its time asleep in each kind of wait and
//! waiting for a CPU (`--waits=bpf`), its time inside each kind of engine event, its count of
//! each kind of work — taken once an episode (its slowest operation, chosen by latency), and the
//! new side's witnesses set against the base's by a one-sided Mann–Whitney test, exact for
//! the sizes a tail has. Ties count as not greater, which can only lower the statistic, so the
//! chance is exact or conservative. Time inside a kind of event must also overlap it more
//! often than the new side's events' share of its window explains; `grew_simulation.rs`
//! measures both (docs/tail.md).

use super::{confidence_of, covered, episode_witnesses, overlap_by_chance};
use crate::bound::Confidence;
use fathom_schema::result::tail::{SlowOp, Tail};
use std::collections::BTreeMap;

/// What a figure counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    /// Microseconds of the operation.
    Us,
    /// A count of work.
    Count,
}

/// One figure of a kind's slowest operations on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// `io`, `waiting for a cpu`, `inside compaction`, `tombstones skipped`.
    pub what: String,
    pub unit: Unit,
    /// The median over each side's witnesses.
    pub base: f64,
    pub new: f64,
    /// The chance the new side's witnesses would rank this high against the base's with no
    /// difference between them.
    pub chance: f64,
    /// `Some` when it grew: `chance` under 0.01 (medium) or 0.001 (high), the new median above
    /// the base's.
    pub confidence: Option<Confidence>,
}

/// The most witnesses a side pools over its repeats (the exact test's table grows with the
/// product of the two sides' counts).
pub const MAX_WITNESSES: usize = 96;

/// Each figure both sides can tell of kind `kind`, the named ones first, then by chance. A
/// side is one tail or several (its repeats, each episode of each a witness of its own).
pub fn figures(base: &[&Tail], new: &[&Tail], kind: &str) -> Vec<Figure> {
    let (fb, fn_) = (pooled(base, kind), pooled(new, kind));
    let mut out: Vec<Figure> = (fb.iter())
        .filter_map(|((what, unit), bv)| {
            let nv = fn_.get(&(what.clone(), *unit))?;
            if bv.is_empty() || nv.is_empty() {
                return None;
            }
            // Time inside an event grows by chance where the new side's events cover more of
            // its window: it counts only where its slow operations overlap them more often
            // than that explains (the run section's test), whichever chance is larger.
            let by_chance =
                (what.strip_prefix("inside ")).map_or(0.0, |w| overlap_by_chance(new, kind, w));
            let chance = greater_chance(nv, bv).max(by_chance);
            let (base, new) = (median(bv), median(nv));
            let confidence = confidence_of(chance).filter(|_| new > base);
            Some(Figure {
                what: what.clone(),
                unit: *unit,
                base,
                new,
                chance,
                confidence,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        (b.confidence.cmp(&a.confidence))
            .then(a.chance.total_cmp(&b.chance))
            .then(a.what.cmp(&b.what))
    });
    out
}

/// The kind's kept operations, one an episode.
fn witnesses<'a>(tail: &'a Tail, kind: &str) -> Vec<&'a SlowOp> {
    let ops: Vec<&SlowOp> = tail.slowest.iter().filter(|o| o.kind == kind).collect();
    episode_witnesses(&ops)
}

type Values = BTreeMap<(String, Unit), Vec<f64>>;

/// Each figure the side's tails tell over their witnesses, each tail's values after the last
/// (a wait one repeat's witnesses never slept in is 0 µs for them), up to `MAX_WITNESSES`.
fn pooled(tails: &[&Tail], kind: &str) -> Values {
    let sleeps: Vec<&str> = {
        let mut k: Vec<&str> = (tails.iter().filter(|t| t.sleeps_timed))
            .flat_map(|t| t.slowest.iter().filter(|o| o.kind == kind))
            .flat_map(|o| &o.asleep)
            .map(|a| a.kind.as_str())
            .collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    let mut out: Values = BTreeMap::new();
    for tail in tails {
        for (key, v) in values(tail, &witnesses(tail, kind), &sleeps) {
            out.entry(key).or_default().extend(v);
        }
    }
    for v in out.values_mut() {
        v.truncate(MAX_WITNESSES);
    }
    out
}

/// Each figure one tail tells over `ops`; with timed sleeps, one for each of `sleeps`.
fn values(tail: &Tail, ops: &[&SlowOp], sleeps: &[&str]) -> Values {
    let mut out: Values = BTreeMap::new();
    let mut put = |what: String, unit, v: Vec<f64>| {
        out.insert((what, unit), v);
    };
    if ops.is_empty() {
        return out;
    }
    if tail.sleeps_timed {
        for k in sleeps {
            let v = ops.iter().map(|o| asleep(o, k)).collect();
            put(k.to_string(), Unit::Us, v);
        }
        let on_cpu = (ops.iter())
            .map(|o| (o.latency_us - o.asleep.iter().map(|a| a.us).sum::<f64>()).max(0.0))
            .collect();
        put("on a cpu".into(), Unit::Us, on_cpu);
    }
    if tail.engine_tells {
        for what in fathom_api::events::WHATS {
            let spans: Vec<(u64, u64)> = (tail.events.iter())
                .filter(|e| e.what == *what)
                .map(|e| e.sure())
                .collect();
            let v = (ops.iter())
                .map(|o| covered(&spans, o.start_us, o.end_us()) as f64)
                .collect();
            put(format!("inside {what}"), Unit::Us, v);
        }
    }
    for (c, name) in tail.work.iter().enumerate() {
        if ops.iter().all(|o| o.work.len() > c) {
            let v = ops.iter().map(|o| o.work[c].n as f64).collect();
            put(name.clone(), Unit::Count, v);
        }
    }
    out
}

fn asleep(o: &SlowOp, kind: &str) -> f64 {
    o.asleep
        .iter()
        .filter(|a| a.kind == kind)
        .map(|a| a.us)
        .sum()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The one-sided Mann–Whitney chance that `new`'s values would outrank `base`'s as much or
/// more with both drawn alike: U counts the pairs where the new value is strictly greater, its
/// null distribution counted exactly.
pub(super) fn greater_chance(new: &[f64], base: &[f64]) -> f64 {
    let u: usize = (new.iter())
        .map(|x| base.iter().filter(|y| x > y).count())
        .sum();
    let (m, n) = (new.len(), base.len());
    // ways[j][k], for i new values: orderings of i new and j base values with U = k, kept for
    // the last i only (memory (n + 1)(mn + 1), not m times that).
    let top = m * n;
    let mut last = vec![vec![0f64; top + 1]; n + 1];
    for row in &mut last {
        row[0] = 1.0;
    }
    for i in 1..=m {
        let mut ways = vec![vec![0f64; top + 1]; n + 1];
        ways[0][0] = 1.0;
        for j in 1..=n {
            for k in 0..=i * j {
                // The largest value is a new one (above all j base values) or a base one.
                let from_new = if k >= j { last[j][k - j] } else { 0.0 };
                ways[j][k] = from_new + ways[j - 1][k];
            }
        }
        last = ways;
    }
    let all: f64 = last[n].iter().sum();
    (last[n][u..].iter().sum::<f64>() / all).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_tail_of_u_matches_counting() {
        // Two against two: 6 orderings, U = 4 in one of them.
        assert!((greater_chance(&[3.0, 4.0], &[1.0, 2.0]) - 1.0 / 6.0).abs() < 1e-12);
        // U of 0 or more: certain.
        assert_eq!(greater_chance(&[0.0], &[1.0]), 1.0);
        // Ties count as not greater.
        assert_eq!(greater_chance(&[1.0, 1.0], &[1.0, 1.0]), 1.0);
        // Eight against eight, all greater: 1 of C(16, 8).
        let p = greater_chance(&[10.0; 8], &[1.0; 8]);
        assert!((p - 1.0 / 12_870.0).abs() < 1e-12, "{p}");
    }

    /// Large pooled sides: the same chance as the normal approximation gives, near enough,
    /// and no memory to speak of.
    #[test]
    fn ninety_six_a_side_is_exact_and_cheap() {
        let base: Vec<f64> = (0..96).map(f64::from).collect();
        let new: Vec<f64> = (0..96).map(|i| f64::from(i) + 12.0).collect();
        let p = greater_chance(&new, &base);
        // U = 5,646 against a mean of 4,608 and a deviation of 385: z ≈ 2.7, p ≈ 0.0035.
        assert!((0.002..0.006).contains(&p), "{p}");
    }

    #[test]
    fn medians_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
