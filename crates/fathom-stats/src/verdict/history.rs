//! Judging across sessions against the base's history. Sides that ran apart in time (a base
//! kept from last night, tonight's runs) differ by whatever changed between the two sessions
//! as well as by the setups, and their runs' spread within a session says nothing of that:
//! Welch's test on them is wrong far more often than 2.5% (docs/verdicts.md: sessions). Where a
//! results store holds the base's recent runs, each from its own session, their spread holds
//! the sessions' variance too: NEW's mean is judged as one more point of that history (a
//! prediction interval, as Conbench judges a run against its baseline's distribution).

use super::LogRatio;
use fathom_schema::result::RunManifest;
use std::sync::Arc;

/// The fewest runs of the base's history a verdict is judged against.
pub const MIN_HISTORY: usize = 5;
/// The most, newest first: older nights may describe another machine's state.
pub const MOST_HISTORY: usize = 30;

/// Where the base's history comes from: a step's figure (ops/s) in the runs recorded before a
/// time (Unix seconds) of the series `base` belongs to, oldest first.
pub trait BaseHistory: Send + Sync {
    fn before(&self, base: &RunManifest, step: &str, before: u64) -> Vec<f64>;
}

/// A comparison's source of the base's history, if it has one.
#[derive(Clone, Default)]
pub struct History(pub Option<Arc<dyn BaseHistory>>);

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "History(store)"
        } else {
            "History(none)"
        })
    }
}

impl LogRatio {
    /// NEW's runs against the base's `history` (each run from a session of its own): the mean
    /// of NEW's log figures less the history's, with the history's spread as a prediction's
    /// error, sd · √(1 + 1/K) at K − 1 degrees of freedom. NEW's mean is treated as one more
    /// session's point, which is conservative when NEW holds several runs of its session.
    /// `None` with fewer than `MIN_HISTORY` points or one that is not positive.
    pub fn against_history(history: &[f64], new: &[f64]) -> Option<LogRatio> {
        let ok = |xs: &[f64]| xs.iter().all(|x| *x > 0.0 && x.is_finite());
        if history.len() < MIN_HISTORY || new.is_empty() || !ok(history) || !ok(new) {
            return None;
        }
        let logs: Vec<f64> = history.iter().map(|x| x.ln()).collect();
        let k = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / k;
        let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
        let new_mean = new.iter().map(|x| x.ln()).sum::<f64>() / new.len() as f64;
        Some(LogRatio {
            diff: new_mean - mean,
            se: (var * (1.0 + 1.0 / k)).sqrt(),
            df: k - 1.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_session_is_one_more_point_of_the_history() {
        let e = |x: f64| x.exp();
        let history: Vec<f64> = [0.0, 0.1, -0.1, 0.2, -0.2].iter().map(|x| e(*x)).collect();
        let t = LogRatio::against_history(&history, &[e(0.5), e(0.3)]).unwrap();
        assert!((t.diff - 0.4).abs() < 1e-12);
        let var: f64 = (0.01 + 0.01 + 0.04 + 0.04) / 4.0;
        assert!((t.se - (var * 1.2).sqrt()).abs() < 1e-12, "{}", t.se);
        assert_eq!(t.df, 4.0);
        assert_eq!(LogRatio::against_history(&history[..4], &[1.0]), None);
    }
}
