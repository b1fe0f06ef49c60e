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
    Some(Cause {
        what: format!("more {name}"),
        ops: more.len(),
        episodes: ps.iter().filter(|&&p| p <= MORE_THAN).count(),
        time_share: None,
        held: None,
        chance,
        confidence: confidence_of(chance),
        example: format!("{slow:.0} against {typical:.0} for the operations beside them"),
        against: Some([slow, typical]),
    })
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
