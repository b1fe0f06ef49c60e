//! The statistical test behind a verdict: on the logarithms of each side's ops/s, a one-sample
//! t test of the rounds' log ratios where the runs are paired by round, Welch's t where they
//! are not. The ratio it judges is that of the two sides' geometric means; its interval and its
//! one-sided p-values against the band's edges hold their level at three runs a side, where a
//! bootstrap of medians does not (docs/verdicts.md has the simulation that measures both).

use super::Verdict;
use crate::student;

/// The one-sided error of each verdict: an interval of 95% leaves 2.5% on each side.
pub const ALPHA: f64 = 0.025;

/// ln(NEW) − ln(BASE) in mean, its standard error and degrees of freedom (Welch's, or n − 1
/// for pairs).
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

    /// The test of pairs of positive figures (BASE, NEW), one pair a round: the mean of the
    /// rounds' log ratios, its standard error and n − 1 degrees of freedom; `None` with fewer
    /// than two pairs or a figure that is not positive.
    pub fn paired(pairs: &[(f64, f64)]) -> Option<LogRatio> {
        let ok = |x: f64| x > 0.0 && x.is_finite();
        if pairs.len() < 2 || !pairs.iter().all(|&(b, n)| ok(b) && ok(n)) {
            return None;
        }
        let d: Vec<f64> = pairs.iter().map(|&(b, n)| n.ln() - b.ln()).collect();
        let (mean, var) = mean_var(&d);
        Some(LogRatio {
            diff: mean,
            se: (var / d.len() as f64).sqrt(),
            df: (d.len() - 1) as f64,
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

    /// The verdict this test comes nearest to against the band 1 ± `threshold`, with its
    /// one-sided p-value and the p-value a family of verdicts is adjusted with. Faster tests
    /// "the ratio is at most 1 + threshold", slower "at least 1 − threshold", same both "at
    /// least 1 + threshold" and "at most 1 − threshold" (two one-sided tests; its p is the
    /// larger). A verdict holds when its p is at most the level its look is held to
    /// (`ALPHA` for fixed repeats). For a family, a direction's p is twice the smaller
    /// one-sided p (either direction could have been claimed), the same's its own.
    pub fn nearest(&self, threshold: f64) -> Nearest {
        let (up, down) = ((1.0 + threshold).ln(), (1.0 - threshold).ln());
        let (faster, slower) = (self.above(up), self.below(down));
        let same = self.above(down).max(self.below(up));
        let either = (2.0 * faster.min(slower)).min(1.0);
        [
            (Verdict::Faster, faster, either),
            (Verdict::Slower, slower, either),
            (Verdict::Same, same, same),
        ]
        .into_iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(verdict, p, family)| Nearest { verdict, p, family })
        .expect("three candidates")
    }
}

/// The verdict a test comes nearest to, its one-sided p-value, and the p-value a family of
/// verdicts is adjusted with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nearest {
    pub verdict: Verdict,
    pub p: f64,
    pub family: f64,
}

/// How a p-value becomes a verdict: held to `level` (the look's, `Looks::level`), and
/// reported scaled to `ALPHA` so that every verdict reads "holds at p ≤ 2.5%": the p returned
/// is p · ALPHA / level. Returns the verdict, its scaled p and the family's p scaled alike.
pub fn decide(nearest: Nearest, level: f64) -> (Verdict, f64, f64) {
    let scale = ALPHA / level;
    let p = (nearest.p * scale).min(1.0);
    let verdict = if p <= ALPHA {
        nearest.verdict
    } else {
        Verdict::Undecided
    };
    (verdict, p, (nearest.family * scale).min(1.0))
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
        assert_eq!(decide(tight(1.10).nearest(0.03), ALPHA).0, Verdict::Faster);
        assert_eq!(decide(tight(0.90).nearest(0.03), ALPHA).0, Verdict::Slower);
        assert_eq!(decide(tight(1.00).nearest(0.03), ALPHA).0, Verdict::Same);
        // 1.04 against a 3% band: p of "faster" is about 0.04; once, undecided at 2.5%.
        let n = tight(1.04).nearest(0.03);
        assert_eq!(n.verdict, Verdict::Faster);
        assert!(n.p > ALPHA && n.p < 0.1, "{}", n.p);
        // A direction's family p is twice the smaller one-sided p.
        assert!((n.family - 2.0 * n.p).abs() < 1e-12);
        // A p of 0.004 decides at 2.5%, not at a look held to 0.25%.
        let p = Nearest {
            verdict: Verdict::Faster,
            p: 0.004,
            family: 0.008,
        };
        let (v, scaled, family) = decide(p, ALPHA);
        assert_eq!((v, scaled, family), (Verdict::Faster, 0.004, 0.008));
        let (v, scaled, _) = decide(p, ALPHA / 10.0);
        assert_eq!(v, Verdict::Undecided);
        assert!((scaled - 0.04).abs() < 1e-12);
        let exact = LogRatio {
            diff: 0.0,
            se: 0.0,
            df: 4.0,
        };
        let n = exact.nearest(0.03);
        assert_eq!((n.verdict, n.p), (Verdict::Same, 0.0));
    }

    /// Pairs: the rounds' log ratios, their mean and standard error; a drift shared by a
    /// round's two runs leaves no trace.
    #[test]
    fn pairs_judge_the_rounds_ratios() {
        let e = |x: f64| x.exp();
        let pairs = [(e(0.0), e(0.1)), (e(1.0), e(1.2)), (e(-1.0), e(-0.7))];
        let t = LogRatio::paired(&pairs).unwrap();
        assert!((t.diff - 0.2).abs() < 1e-12);
        assert!((t.se - (0.01f64 / 3.0).sqrt()).abs() < 1e-12, "{}", t.se);
        assert_eq!(t.df, 2.0);
        assert_eq!(LogRatio::paired(&pairs[..1]), None);
        assert_eq!(LogRatio::paired(&[(1.0, 0.0), (1.0, 1.0)]), None);
    }
}
