//! Bayesian online change-point detection (Adams and MacKay, 2007), built to be measured
//! against E-divisive means on the same series (`trial`), not used by `fathom history`
//! (docs/history.md says why). Each point is Normal with a mean and variance unknown within a
//! run (a Normal-Gamma prior, so a point's prediction is a Student t); a run ends at each
//! point with a constant hazard. After each point the posterior over how long the current run
//! is says how likely a run began a few points back.

use crate::student::ln_gamma;

/// The model's priors.
#[derive(Clone, Copy, Debug)]
pub struct Prior {
    /// The chance that a run ends at any given point (1 / the expected run length).
    pub hazard: f64,
    /// The noise the prior expects, as a share of the series' first point (0.03: 3%).
    pub noise: f64,
}

/// Normal-Gamma statistics of a run: mean, its pseudo-count, and the precision's shape and
/// rate.
#[derive(Clone, Copy, Debug)]
struct Stats {
    mu: f64,
    kappa: f64,
    alpha: f64,
    beta: f64,
}

impl Stats {
    /// The log density of `x` under the run's Student t prediction.
    fn log_predict(&self, x: f64) -> f64 {
        let nu = 2.0 * self.alpha;
        let scale2 = self.beta * (self.kappa + 1.0) / (self.alpha * self.kappa);
        let z = (x - self.mu).powi(2) / (nu * scale2);
        ln_gamma((nu + 1.0) / 2.0)
            - ln_gamma(nu / 2.0)
            - 0.5 * (nu * std::f64::consts::PI * scale2).ln()
            - (nu + 1.0) / 2.0 * z.ln_1p()
    }
    fn with(&self, x: f64) -> Stats {
        Stats {
            mu: (self.kappa * self.mu + x) / (self.kappa + 1.0),
            kappa: self.kappa + 1.0,
            alpha: self.alpha + 0.5,
            beta: self.beta + self.kappa * (x - self.mu).powi(2) / (2.0 * (self.kappa + 1.0)),
        }
    }
}

/// For each point t, the posterior probability, `lag` points later (or at the series' end),
/// that a run began at t.
/// The run-length distribution is over runs that include the newest point: a run of length 1
/// began at it and is predicted by the prior alone.
pub fn began(xs: &[f64], prior: &Prior, lag: usize) -> Vec<f64> {
    let Some(&first) = xs.first() else {
        return Vec::new();
    };
    let sd = prior.noise * first.abs().max(f64::MIN_POSITIVE);
    // alpha 2 so the prior's expected variance, beta / (alpha - 1), is sd².
    let fresh = Stats {
        mu: first,
        kappa: 1.0,
        alpha: 2.0,
        beta: sd * sd,
    };
    let mut probs = vec![1.0];
    let mut runs = vec![fresh.with(first)];
    let mut out = vec![0.0; xs.len()];
    for (s, &x) in xs.iter().enumerate().skip(1) {
        let mut next = Vec::with_capacity(probs.len() + 1);
        next.push(prior.hazard * fresh.log_predict(x).exp());
        for (p, stats) in probs.iter().zip(&runs) {
            next.push(p * (1.0 - prior.hazard) * stats.log_predict(x).exp());
        }
        let total: f64 = next.iter().sum();
        probs = next.iter().map(|p| p / total).collect();
        runs.insert(0, fresh);
        runs.iter_mut().for_each(|r| *r = r.with(x));
        // A run of `lag` points now began at s + 1 - lag.
        if s + 1 >= lag && lag >= 1 {
            out[s + 1 - lag] = probs.get(lag - 1).copied().unwrap_or(0.0);
        }
    }
    // The last points, `lag` from the end: as likely as the whole series says.
    let n = xs.len();
    for (t, p) in out
        .iter_mut()
        .enumerate()
        .skip((n + 1).saturating_sub(lag).max(1))
    {
        *p = probs[n - 1 - t];
    }
    out
}

/// The changes: points where a run began with posterior above `threshold` `lag` points
/// later, `min_size` points from either end, each the most likely within `min_size` of it.
pub fn changes(
    xs: &[f64],
    prior: &Prior,
    lag: usize,
    min_size: usize,
    threshold: f64,
) -> Vec<usize> {
    let p = began(xs, prior, lag.max(min_size));
    let n = xs.len();
    (min_size..=n.saturating_sub(min_size))
        .filter(|&t| {
            let (lo, hi) = (t.saturating_sub(min_size - 1), (t + min_size).min(n));
            p[t] > threshold && (lo..hi).all(|u| u == t || p[u] < p[t])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_is_right() {
        assert!((ln_gamma(1.0)).abs() < 1e-12);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn a_step_is_a_run_beginning_where_it_is() {
        let mut xs: Vec<f64> = (0..30)
            .map(|i| 1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0))
            .collect();
        xs[20..].iter_mut().for_each(|x| *x *= 0.8);
        let prior = Prior {
            hazard: 0.01,
            noise: 0.03,
        };
        assert_eq!(changes(&xs, &prior, 3, 3, 0.5), vec![20]);
        assert_eq!(changes(&xs, &prior, 10, 3, 0.5), vec![20]);
    }
}
