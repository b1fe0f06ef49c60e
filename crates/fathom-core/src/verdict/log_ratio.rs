//! The statistical test behind a verdict: Welch's t on the logarithms of each side's ops/s.
//! The ratio it judges is that of the two sides' geometric means; its interval and its
//! one-sided p-values against the band's edges hold their level at three runs a side, where a
//! bootstrap of medians does not (docs/verdicts.md has the simulation that measures both).

use super::Verdict;
use crate::student;

/// The one-sided error of each verdict: an interval of 95% leaves 2.5% on each side.
pub const ALPHA: f64 = 0.025;

/// ln(NEW) − ln(BASE) in mean, its standard error and Welch's degrees of freedom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogRatio {
    pub diff: f64,
    pub se: f64,
    pub df: f64,
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

impl LogRatio {
    /// The test of two sides' positive figures; `None` with fewer than two of them on a side
    /// or a figure that is not positive.
    pub fn of(base: &[f64], new: &[f64]) -> Option<LogRatio> {
        let logs = |xs: &[f64]| -> Option<Vec<f64>> {
            (xs.len() >= 2 && xs.iter().all(|x| *x > 0.0 && x.is_finite()))
                .then(|| xs.iter().map(|x| x.ln()).collect())
        };
        let (b, n) = (logs(base)?, logs(new)?);
        let ((mb, vb), (mn, vn)) = (mean_var(&b), mean_var(&n));
        let (qb, qn) = (vb / b.len() as f64, vn / n.len() as f64);
        let se = (qb + qn).sqrt();
        let df = if se > 0.0 {
            (qb + qn).powi(2)
                / (qb * qb / (b.len() as f64 - 1.0) + qn * qn / (n.len() as f64 - 1.0))
        } else {
            (b.len() + n.len() - 2) as f64
        };
        Some(LogRatio {
            diff: mn - mb,
            se,
            df,
        })
    }

    /// The ratio of the geometric means, NEW over BASE.
    pub fn ratio(&self) -> f64 {
        self.diff.exp()
    }

    /// The interval of the ratio leaving `alpha` on each side (0.025: the 95% interval).
    pub fn interval(&self, alpha: f64) -> (f64, f64) {
        let half = student::quantile(1.0 - alpha, self.df) * self.se;
        ((self.diff - half).exp(), (self.diff + half).exp())
    }

    /// P(a t at least this far beyond `edge`, upwards), were the true log ratio `edge`.
    fn above(&self, edge: f64) -> f64 {
        match self.se {
            0.0 if self.diff > edge => 0.0,
            0.0 => 1.0,
            se => 1.0 - student::cdf((self.diff - edge) / se, self.df),
        }
    }

    fn below(&self, edge: f64) -> f64 {
        match self.se {
            0.0 if self.diff < edge => 0.0,
            0.0 => 1.0,
            se => student::cdf((self.diff - edge) / se, self.df),
        }
    }

    /// The verdict this test comes nearest to and its one-sided p-value against the band
    /// 1 ± `threshold`: faster tests "the ratio is at most 1 + threshold", slower "at least
    /// 1 − threshold", same both "at least 1 + threshold" and "at most 1 − threshold" (two
    /// one-sided tests; its p is the larger). A verdict holds when its p is at most `ALPHA`
    /// (after `Spend` has had its say).
    pub fn nearest(&self, threshold: f64) -> (Verdict, f64) {
        let (up, down) = ((1.0 + threshold).ln(), (1.0 - threshold).ln());
        [
            (Verdict::Faster, self.above(up)),
            (Verdict::Slower, self.below(down)),
            (Verdict::Same, self.above(down).max(self.below(up))),
        ]
        .into_iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("three candidates")
    }
}

/// How a p-value becomes a verdict: the looks an experiment's adaptive rounds may take at its
/// comparisons (each judged at `ALPHA` / looks, Bonferroni over the looks, so a comparison
/// decided at any round is wrong at most `ALPHA` of the time).
pub fn decide(nearest: (Verdict, f64), looks: usize) -> (Verdict, f64) {
    let p = (nearest.1 * looks.max(1) as f64).min(1.0);
    (
        if p <= ALPHA {
            nearest.0
        } else {
            Verdict::Undecided
        },
        p,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_on_logs_matches_a_worked_example() {
        // ln of these: base 0, 0.1, 0.2 (mean 0.1, var 0.01); new 0.2, 0.3, 0.4, 0.5 (mean
        // 0.35, var 0.016667).
        let e = |x: f64| x.exp();
        let t = LogRatio::of(&[e(0.0), e(0.1), e(0.2)], &[e(0.2), e(0.3), e(0.4), e(0.5)]).unwrap();
        assert!((t.diff - 0.25).abs() < 1e-12);
        let se2: f64 = 0.01 / 3.0 + 0.05 / 3.0 / 4.0;
        assert!((t.se - se2.sqrt()).abs() < 1e-12);
        let df = se2 * se2 / ((0.01f64 / 3.0).powi(2) / 2.0 + (0.05f64 / 12.0).powi(2) / 3.0);
        assert!((t.df - df).abs() < 1e-9, "{}", t.df);
        let (lo, hi) = t.interval(ALPHA);
        assert!(
            (lo * hi - 0.5f64.exp()).abs() < 1e-9,
            "symmetric on the log scale"
        );
        assert_eq!(LogRatio::of(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(LogRatio::of(&[0.0, 1.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn the_nearest_verdict_and_its_spending_over_looks() {
        let tight = |r: f64| LogRatio {
            diff: r.ln(),
            se: 0.005,
            df: 10.0,
        };
        assert_eq!(decide(tight(1.10).nearest(0.03), 1).0, Verdict::Faster);
        assert_eq!(decide(tight(0.90).nearest(0.03), 1).0, Verdict::Slower);
        assert_eq!(decide(tight(1.00).nearest(0.03), 1).0, Verdict::Same);
        // 1.04 against a 3% band: p of "faster" is about 0.04; once, undecided at 2.5%.
        let (v, p) = tight(1.04).nearest(0.03);
        assert_eq!(v, Verdict::Faster);
        assert!(p > ALPHA && p < 0.1, "{p}");
        // A p of 0.004 decides once, not at one of ten looks.
        let p = (Verdict::Faster, 0.004);
        assert_eq!(decide(p, 1), (Verdict::Faster, 0.004));
        assert_eq!(decide(p, 10).0, Verdict::Undecided);
        let exact = LogRatio {
            diff: 0.0,
            se: 0.0,
            df: 4.0,
        };
        assert_eq!(exact.nearest(0.03), (Verdict::Same, 0.0));
    }
}
