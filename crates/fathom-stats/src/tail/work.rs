//! A step's slowest operations against the work they did (`Tail::work`, RocksDB's perf
//! context): each kept operation carries its counters beside the median of the operations of
//! its kind just before it on its client, and how many of those did as much or more — the rank
//! of its work among operations of the same moment. A counter is named when the slow
//! operations ranked higher than chance allows: each episode gives one witness, its slowest
//! operation (chosen by latency, not by work), whose rank p-value is `(1 + at_least) / (1 +
//! nearby)`; the episodes' p-values are combined by Fisher's method. With no link between work
//! and latency a rank is uniform (ties only make it larger), so the chance is exact or
//! conservative; `simulation.rs` measures it (docs/tail.md).

use super::{confidence_of, episode_witnesses, Cause};
use fathom_schema::result::tail::SlowOp;

/// A kept operation "did more" than the operations beside it when at most this share of them
/// did as much: the share of the kept operations counted so (`slow%`).
pub const MORE_THAN: f64 = 0.1;

/// A counter of time (`µs reading pages`) is named only when the time the slow operations spent
/// over their neighbours' is at least this share of their latency (the median over those that
/// did more): a slow operation's thread taken off its CPU stretches every timer it is inside,
/// so more µs of something that is a sliver of the operation does not explain it.
pub const TIME_SHARE: f64 = 0.1;

/// Each counter the slow operations `ops` carry, as a cause; `None` for one no operation did
/// more of than its neighbours.
pub(super) fn causes(names: &[String], ops: &[&SlowOp]) -> Vec<Cause> {
    let witnesses = episode_witnesses(ops);
    (names.iter().enumerate())
        .filter_map(|(c, name)| cause(c, name, ops, &witnesses))
        .collect()
}

/// The rank p-value of operation `o`'s counter `c` among its nearby ones; `None` without them.
fn rank_p(o: &SlowOp, c: usize) -> Option<f64> {
    let w = o.work.get(c)?;
    (o.nearby > 0).then(|| (1.0 + f64::from(w.at_least)) / (1.0 + f64::from(o.nearby)))
}

fn cause(c: usize, name: &str, ops: &[&SlowOp], witnesses: &[&SlowOp]) -> Option<Cause> {
    let more: Vec<&&SlowOp> = ops
        .iter()
        .filter(|o| rank_p(o, c).is_some_and(|p| p <= MORE_THAN))
        .collect();
    if more.is_empty() {
        return None;
    }
    let ps: Vec<f64> = witnesses.iter().filter_map(|o| rank_p(o, c)).collect();
    let chance = fisher(&ps);
    let median = |v: &mut Vec<u64>| -> f64 {
        v.sort_unstable();
        v.get(v.len() / 2).map_or(0.0, |&x| x as f64)
    };
    // Of those that did more: what they did, and what the operations beside them did.
    let slow = median(&mut more.iter().map(|o| o.work[c].n).collect());
    let typical = median(&mut more.iter().map(|o| o.work[c].median).collect());
    let explains = !name.starts_with("µs ") || time_share(&more, c) >= TIME_SHARE;
    Some(Cause {
        what: format!("more {name}"),
        ops: more.len(),
        episodes: ps.iter().filter(|&&p| p <= MORE_THAN).count(),
        time_share: None,
        held: None,
        chance,
        confidence: confidence_of(chance).filter(|_| explains),
        example: format!("{slow:.0} against {typical:.0} for the operations beside them"),
        against: Some([slow, typical]),
    })
}

/// The median share of their latency that `ops` spent in counter `c` (µs) over their
/// neighbours' median.
fn time_share(ops: &[&&SlowOp], c: usize) -> f64 {
    let mut shares: Vec<f64> = (ops.iter())
        .map(|o| o.work[c].n.saturating_sub(o.work[c].median) as f64 / o.latency_us.max(1.0))
        .collect();
    shares.sort_by(f64::total_cmp);
    shares.get(shares.len() / 2).copied().unwrap_or(0.0)
}

/// Fisher's combination of independent p-values: the chance that -2 Σ ln p is as large with
/// every null true (a chi-squared of 2k degrees of freedom, whose tail has a closed form).
pub(super) fn fisher(ps: &[f64]) -> f64 {
    if ps.is_empty() {
        return 1.0;
    }
    let half: f64 = -ps
        .iter()
        .map(|p| p.max(f64::MIN_POSITIVE).ln())
        .sum::<f64>();
    // P(chi2_2k > 2h) = e^-h Σ_{i<k} h^i / i!
    let (mut term, mut sum) = (1.0, 1.0);
    for i in 1..ps.len() {
        term *= half / i as f64;
        sum += term;
    }
    ((-half).exp() * sum).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::result::tail::WorkCount;

    /// Eight slow operations of 2 ms, a second apart, each doing `n` against 20 for all 64
    /// operations beside them, in a counter called `name`.
    fn named_with(name: &str, n: u64) -> Option<crate::bound::Confidence> {
        let ops: Vec<SlowOp> = (0..8u64)
            .map(|i| SlowOp {
                kind: "get".into(),
                client: 0,
                start_us: i * 1_000_000,
                latency_us: 2_000.0,
                tid: 0,
                session: 0,
                asleep: Vec::new(),
                work: vec![WorkCount {
                    n,
                    median: 20,
                    at_least: 0,
                }],
                nearby: 64,
            })
            .collect();
        let refs: Vec<&SlowOp> = ops.iter().collect();
        causes(&[name.to_string()], &refs)[0].confidence
    }

    /// More time in a timer names it only when that time is a tenth of the operations' or more.
    #[test]
    fn a_timer_names_a_cause_only_for_a_share_of_the_latency() {
        assert!(named_with("rows examined", 100).is_some());
        assert!(named_with("µs waiting for table locks", 100).is_none());
        assert!(named_with("µs waiting for table locks", 1_500).is_some());
    }

    #[test]
    fn fisher_matches_the_chi_squared_tail() {
        // One p-value is its own combination.
        assert!((fisher(&[0.2]) - 0.2).abs() < 1e-12);
        // Two of 0.05: -2 ln(0.0025) = 11.98 on 4 degrees of freedom, a tail of 0.0175.
        assert!((fisher(&[0.05, 0.05]) - 0.0175).abs() < 2e-4);
        assert_eq!(fisher(&[]), 1.0);
        assert!(fisher(&[1.0, 1.0, 1.0]) > 0.999);
    }
}
