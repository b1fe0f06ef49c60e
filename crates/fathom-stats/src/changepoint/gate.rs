//! The nightly gate on a history: does the newest segment of a series (the runs since its last
//! change) sit at another level than the segment before it, by at least a minimum magnitude?
//! As Otava reports a regression: the newest level against the one before, not "a change
//! somewhere among the newest N runs", which fires only for the few nights a change spends
//! among them and stops firing while the level stays down. E-divisive's permutation test takes
//! nights as exchangeable; nights whose neighbours correlate (a host's state carries over) make
//! it find changes in noise, so the gate confirms the newest change by a parametric bootstrap:
//! the split's t against the most extreme split t of series without a change that carry over
//! from night to night as the history's residuals show (an AR(1) estimate, pooled over the
//! history's series). How often it fails on quiet nights and how often it finds a drop, with
//! correlated nights, is measured by the seeded simulation below (docs/history.md).

use super::Change;

pub use fathom_schema::figures::Worse;

/// The one-sided level the gate's confirmation holds a change to.
pub const LEVEL: f64 = 0.016;

/// The newest segment's level against the one before it: medians, and where it begins, and
/// the confirmation's one-sided p-values that the newest level is lower and higher.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shift {
    /// The index of the newest segment's first point (the last change's).
    pub at: usize,
    pub before: f64,
    pub after: f64,
    pub p_lower: f64,
    pub p_higher: f64,
}

impl Shift {
    /// The newest level over the one before, less 1.
    pub fn relative(&self) -> f64 {
        self.after / self.before - 1.0
    }

    /// Whether the shift is at least `min_change` and confirmed at `LEVEL` in its direction:
    /// either way, or (given `worse`) that way only.
    pub fn fails(&self, min_change: f64, worse: Option<Worse>) -> bool {
        let r = self.relative();
        let lower = r <= -min_change && self.p_lower <= LEVEL;
        let higher = r >= min_change && self.p_higher <= LEVEL;
        match worse {
            None => lower || higher,
            Some(Worse::Lower) => lower,
            Some(Worse::Higher) => higher,
        }
    }
}

/// What a series' residuals about its segments' means say of how nights carry over: the sums
/// of lag-1 products and of squares (pairs within a segment only), the points and the segments.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Residuals {
    lagged: f64,
    squares: f64,
    points: usize,
    segments: usize,
}

impl Residuals {
    /// The residuals of `xs`'s logs about the means of the segments its changes bound.
    pub fn of(xs: &[f64], changes: &[Change]) -> Residuals {
        let logs: Vec<f64> = xs.iter().map(|x| x.max(f64::MIN_POSITIVE).ln()).collect();
        let mut bounds = vec![0];
        bounds.extend(changes.iter().map(|c| c.at));
        bounds.push(xs.len());
        Residuals::of_logs(&logs, &bounds)
    }

    fn of_logs(logs: &[f64], bounds: &[usize]) -> Residuals {
        let mut r = Residuals {
            points: logs.len(),
            segments: bounds.len() - 1,
            ..Residuals::default()
        };
        for w in bounds.windows(2) {
            let seg = &logs[w[0]..w[1]];
            let mean = seg.iter().sum::<f64>() / seg.len().max(1) as f64;
            let e: Vec<f64> = seg.iter().map(|x| x - mean).collect();
            r.squares += e.iter().map(|x| x * x).sum::<f64>();
            r.lagged += e.windows(2).map(|p| p[0] * p[1]).sum::<f64>();
        }
        r
    }

    /// Several series' residuals together: series of one machine share how its nights carry
    /// over, and thirty nights alone tell it only to about ±0.17.
    pub fn pooled(all: &[Residuals]) -> Residuals {
        all.iter().fold(Residuals::default(), |a, r| Residuals {
            lagged: a.lagged + r.lagged,
            squares: a.squares + r.squares,
            points: a.points + r.points,
            segments: a.segments + r.segments,
        })
    }

    /// The carry-over (an AR(1) coefficient) the confirmation assumes: the residuals' lag-1
    /// autocorrelation, corrected for its bias about fitted means (Marriott and Pope's
    /// (1 + 3φ) / n, once per segment), raised by one standard error (a carry-over taken too
    /// low makes the confirmation too ready to confirm), in [0, 0.9].
    pub fn carry_over(&self) -> f64 {
        if self.squares <= 0.0 || self.points < 3 {
            return 0.0;
        }
        let n = self.points as f64;
        let phi = self.lagged / self.squares;
        let corrected = (phi + (1.0 + 3.0 * phi) * self.segments as f64 / n).clamp(0.0, 0.9);
        (corrected + ((1.0 - corrected * corrected) / n).sqrt()).clamp(0.0, 0.9)
    }

    /// The residuals' standard deviation.
    fn sd(&self) -> f64 {
        (self.squares / (self.points as f64 - self.segments as f64).max(1.0)).sqrt()
    }
}

/// The two-sample t (pooled variance) of `xs[k..]` against `xs[..k]`, from prefix sums of
/// values and squares.
fn split_t(sum: &[f64], sq: &[f64], k: usize) -> f64 {
    let n = sum.len() - 1;
    let (a, b) = (k as f64, (n - k) as f64);
    let (ma, mb) = (sum[k] / a, (sum[n] - sum[k]) / b);
    let within = (sq[k] - a * ma * ma) + (sq[n] - sq[k] - b * mb * mb);
    let var = (within / (a + b - 2.0)).max(0.0);
    let se = (var * (1.0 / a + 1.0 / b)).sqrt();
    if se <= 0.0 {
        return if mb > ma {
            f64::INFINITY
        } else if mb < ma {
            f64::NEG_INFINITY
        } else {
            0.0
        };
    }
    (mb - ma) / se
}

/// The largest and smallest split t over a series' splits leaving `MIN_SIDE` points a side.
fn extreme_t(xs: &[f64]) -> (f64, f64) {
    let mut sum = vec![0.0];
    let mut sq = vec![0.0];
    for x in xs {
        sum.push(sum.last().unwrap() + x);
        sq.push(sq.last().unwrap() + x * x);
    }
    let (mut hi, mut lo) = (f64::NEG_INFINITY, f64::INFINITY);
    for k in MIN_SIDE..=xs.len().saturating_sub(MIN_SIDE) {
        let t = split_t(&sum, &sq, k);
        hi = hi.max(t);
        lo = lo.min(t);
    }
    (hi, lo)
}

/// Nights a side of a split needs for the confirmation to judge it: a newest segment shorter
/// than this waits (the change before it is judged, the young segment merged into the newest).
/// Splits near a series' ends have the most extreme t in noise; leaving them out lowers the
/// bar the other splits must pass, so 5 (not E-divisive's 3) both fails fewer quiet series and
/// finds more drops (docs/history.md's table).
pub const MIN_SIDE: usize = 5;
/// Series the confirmation draws to know its statistic's spread without a change.
const DRAWS: usize = 1999;

/// One-sided p-values that the newest segment's log level (`after`) is lower and higher than
/// the one before (`before`), allowing for the search that chose the split and for nights that
/// carry over: the split's Welch t against the most extreme split t of `DRAWS` seeded series
/// of the same length without a change, AR(1) with the series' own carry-over `phi` and
/// scatter `sd` (a parametric bootstrap). 1 either way when a side has fewer than `MIN_SIDE`.
fn confirm(before: &[f64], after: &[f64], phi: f64, sd: f64) -> (f64, f64) {
    if before.len() < MIN_SIDE || after.len() < MIN_SIDE {
        return (1.0, 1.0);
    }
    let joined: Vec<f64> = before.iter().chain(after).copied().collect();
    let mut sum = vec![0.0];
    let mut sq = vec![0.0];
    for x in &joined {
        sum.push(sum.last().unwrap() + x);
        sq.push(sq.last().unwrap() + x * x);
    }
    let t = split_t(&sum, &sq, before.len());
    let mut rng = crate::rng::SplitMix(0x9a7e_5eed);
    let (mut lower, mut higher) = (1usize, 1usize);
    let mut series = vec![0.0; joined.len()];
    let innovation = sd * (1.0 - phi * phi).sqrt();
    for _ in 0..DRAWS {
        let mut x = sd * rng.normal();
        for v in series.iter_mut() {
            *v = x;
            x = phi * x + innovation * rng.normal();
        }
        let (hi, lo) = extreme_t(&series);
        lower += usize::from(lo <= t);
        higher += usize::from(hi >= t);
    }
    let draws = (DRAWS + 1) as f64;
    (lower as f64 / draws, higher as f64 / draws)
}

/// The newest segment of `xs` (positive figures) against the one before, given its changes (in
/// order): the newest change the confirmation holds at `LEVEL`, the changes after it that it
/// does not hold merged into the newest segment (a change found in noise after a real one
/// would otherwise hide it); without one confirmed, the newest change as found; `None` without
/// a change. `carry_over`: the nights' carry-over pooled over the series of the history
/// (`Residuals::pooled`); `None`, this series' own.
pub fn newest(xs: &[f64], changes: &[Change], carry_over: Option<f64>) -> Option<Shift> {
    let logs: Vec<f64> = xs.iter().map(|x| x.max(f64::MIN_POSITIVE).ln()).collect();
    let mut kept: Vec<usize> = changes.iter().map(|c| c.at).collect();
    let mut first: Option<Shift> = None;
    while let Some(&at) = kept.last() {
        let from = kept.len().checked_sub(2).map_or(0, |i| kept[i]);
        let mut bounds = vec![0];
        bounds.extend(&kept);
        bounds.push(xs.len());
        let residuals = Residuals::of_logs(&logs, &bounds);
        let phi = carry_over.unwrap_or_else(|| residuals.carry_over());
        let (p_lower, p_higher) = confirm(&logs[from..at], &logs[at..], phi, residuals.sd());
        let s = Shift {
            at,
            before: fathom_schema::group::median(&xs[from..at]),
            after: fathom_schema::group::median(&xs[at..]),
            p_lower,
            p_higher,
        };
        if s.p_lower.min(s.p_higher) <= LEVEL {
            return Some(s);
        }
        first.get_or_insert(s);
        kept.pop();
    }
    first
}

/// The smallest shift the gate fails on, unless told otherwise.
pub const MIN_CHANGE: f64 = 0.02;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changepoint::{changes, Search};
    use crate::rng::SplitMix;

    /// `n` nights of 3% noise around 1 whose neighbours correlate by `phi` (AR(1), the marginal
    /// spread kept at 3%), times `factor` from night `from` (index) on.
    fn nights(seed: u64, n: usize, phi: f64, factor: f64, from: usize) -> Vec<f64> {
        let mut rng = SplitMix(seed);
        let mut x = 0.03 * rng.normal();
        (0..n)
            .map(|i| {
                if i > 0 {
                    x = phi * x + (1.0 - phi * phi).sqrt() * 0.03 * rng.normal();
                }
                (1.0 + x) * if i >= from { factor } else { 1.0 }
            })
            .collect()
    }

    /// A history of `others` + 1 series of 30 nights on one machine (nights correlated by
    /// `phi`), the first tested: quiet, or 5% lower from night 20. The gate at night 30 on the
    /// first, with the carry-over pooled over all of them (`pooled`) or its own.
    fn gate_at_30(seed: u64, phi: f64, drop: bool, others: u64, pooled: bool) -> bool {
        let search = Search::default();
        let tested = nights(seed, 30, phi, if drop { 0.95 } else { 1.0 }, 19);
        let tested_changes = changes(&tested, &search);
        let carry = pooled.then(|| {
            let mut all = vec![Residuals::of(&tested, &tested_changes)];
            for o in 0..others {
                let xs = nights(seed * 1000 + o + 7, 30, phi, 1.0, 30);
                all.push(Residuals::of(&xs, &changes(&xs, &search)));
            }
            Residuals::pooled(&all).carry_over()
        });
        newest(&tested, &tested_changes, carry)
            .is_some_and(|s| s.fails(MIN_CHANGE, Some(Worse::Lower)))
    }

    /// The gate's rates over `stores` histories: quiet series failing, and 5% drops found.
    fn rates(phi: f64, stores: u64, others: u64, pooled: bool) -> (f64, f64) {
        let (mut false_fail, mut found) = (0, 0);
        for s in 0..stores {
            false_fail += usize::from(gate_at_30(s, phi, false, others, pooled));
            found += usize::from(gate_at_30(s + 1_000_000, phi, true, others, pooled));
        }
        (
            false_fail as f64 / stores as f64,
            found as f64 / stores as f64,
        )
    }

    /// The gate's promise at nights correlated by 0.3, a history of ten series of 30 nights on
    /// one machine: at most 2% of quiet series fail it, and at least 60% of series 5% lower
    /// from night 20 fail it at night 30 (1,000 histories, the table's row).
    #[test]
    fn the_gate_holds_on_correlated_nights() {
        let (false_fail, found) = rates(0.3, 1000, 9, true);
        println!(
            "phi 0.3, 10 series: quiet series failing {false_fail:.3}, drops found {found:.3}"
        );
        assert!(false_fail <= 0.02, "{false_fail}");
        assert!(found >= 0.60, "{found}");
    }

    /// docs/history.md's table: the gate at three correlations, with the carry-over pooled over
    /// ten series and with a series' own.
    #[test]
    #[ignore = "a measurement (minutes): prints docs/history.md's table of the gate"]
    fn the_gates_table() {
        println!("| nights' correlation | carry-over read from | quiet series failing | 5% drops found at night 30 |");
        println!("|---|---|---|---|");
        for phi in [0.0, 0.3, 0.5] {
            for (name, pooled) in [("ten series", true), ("the series alone", false)] {
                let (f, d) = rates(phi, 1000, 9, pooled);
                println!("| {phi} | {name} | {:.1}% | {:.1}% |", f * 100.0, d * 100.0);
            }
        }
    }

    #[test]
    fn the_newest_segment_against_the_one_before() {
        let xs = [
            10.0, 10.0, 10.0, 10.0, 10.0, 8.0, 8.0, 8.0, 8.0, 8.0, 9.0, 9.0, 9.0, 9.0, 9.0,
        ];
        let c = |at| Change { at, p: 0.001 };
        let s = newest(&xs, &[c(5), c(10)], None).unwrap();
        assert_eq!((s.at, s.before, s.after), (10, 8.0, 9.0));
        assert!(s.p_higher < 0.001 && s.p_lower > 0.99, "no spread: {s:?}");
        assert!(s.fails(0.1, None) && s.fails(0.1, Some(Worse::Higher)));
        assert!(!s.fails(0.1, Some(Worse::Lower)) && !s.fails(0.2, None));
        assert_eq!(newest(&xs, &[], None), None);
        let s = newest(&xs, &[c(5)], None).unwrap();
        assert_eq!((s.before, s.after), (10.0, 8.5));
        // A newest segment of fewer than MIN_SIDE nights waits: the change before it is judged,
        // the young nights merged into its newest segment.
        let mut young = xs.to_vec();
        young.extend([9.5; 2]);
        let s = newest(&young, &[c(5), c(10), c(15)], None).unwrap();
        assert_eq!((s.at, s.before), (10, 8.0), "{s:?}");
        // Spread as large as the shift: not confirmed.
        let noisy = [10.0, 7.0, 12.0, 8.0, 10.5, 7.5, 9.0, 11.0, 7.0, 10.0];
        let s = newest(&noisy, &[c(5)], None).unwrap();
        assert!(!s.fails(0.01, None), "{s:?}");
    }
}
