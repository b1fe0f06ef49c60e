//! The rate a find-max search reports, and whether its confirmation probes predict that a
//! re-run at that rate meets the target: a prediction bound over the probes' headrooms.

use crate::student;
use fathom_schema::result::{Probe, ProbePhase};

/// Confirmation probes at a rate that must all meet the target for a search to report it.
pub const CONFIRMATIONS: usize = 3;
/// The chance a re-run at the reported rate meets the target that the confirmation aims at:
/// its prediction bound is the 92nd percentile, above this because the search accepts the
/// first rate whose probes happened to land low (the simulation in `fathom-run`'s findmax
/// measures the chance the reported rate gives: at least this).
pub const RERUN_MEETS: f64 = 0.85;
const PREDICTION: f64 = 0.92;

/// Whether confirmation probes' headrooms (`Probe::headroom`, all of which met the target)
/// predict that a re-run meets it: the upper prediction bound of one more probe's headroom at
/// `PREDICTION`, mean + t · sd · √(1 + 1/n) at n − 1 degrees of freedom (the log latency of a
/// probe scatters about normally), is at most 0. Without headrooms (a target of failures
/// alone), every probe meeting it is enough.
pub fn predicts_rerun(headrooms: &[f64]) -> bool {
    headrooms.is_empty() || rerun_bound(headrooms) <= 0.0
}

/// The upper prediction bound of one more probe's headroom (`predicts_rerun`); +∞ for fewer
/// than two.
pub fn rerun_bound(headrooms: &[f64]) -> f64 {
    let n = headrooms.len() as f64;
    if headrooms.len() < 2 {
        return f64::INFINITY;
    }
    let mean = headrooms.iter().sum::<f64>() / n;
    let sd = (headrooms.iter().map(|h| (h - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let t = student::quantile(PREDICTION, n - 1.0);
    mean + t * sd * (1.0 + 1.0 / n).sqrt()
}

/// The rate a search reports from its probes' records: the highest rate whose
/// `CONFIRMATIONS` confirmations all met the target and predict a re-run meets it
/// (`predicts_rerun`), where the search confirmed one; else (a run recorded before searches
/// confirmed, or one stopped early) the highest rate that met it; and whether it was confirmed.
pub fn reported(probes: &[&Probe]) -> Option<(f64, bool)> {
    let mut confirmed: Option<f64> = None;
    for p in probes.iter().filter(|p| p.phase == ProbePhase::Confirm) {
        let Some(rate) = p.rate else { continue };
        let at: Vec<&&Probe> = probes
            .iter()
            .filter(|q| q.phase == ProbePhase::Confirm && q.rate == Some(rate))
            .collect();
        let headrooms: Vec<f64> = at.iter().filter_map(|q| q.headroom).collect();
        if at.len() >= CONFIRMATIONS && at.iter().all(|q| q.met) && predicts_rerun(&headrooms) {
            confirmed = Some(confirmed.map_or(rate, |c: f64| c.max(rate)));
        }
    }
    if let Some(c) = confirmed {
        return Some((c, true));
    }
    probes
        .iter()
        .filter(|p| p.met)
        .filter_map(|p| p.rate)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))
        .map(|r| (r, false))
}
