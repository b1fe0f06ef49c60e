//! Interference over a step's busiest window: a burst of other processes inside a long step is
//! a small share of the step's average and a large one of the few seconds it lasted.

use super::{Sample, Sampler};

/// Other processes' CPU over the busiest window between two walks of /proc inside a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peak {
    pub cores: f64,
    /// Of the host's CPU, percent.
    pub pct: f64,
    pub seconds: f64,
}

impl Sampler {
    /// The busiest window of other processes' CPU between consecutive `samples` (in time order)
    /// that walked /proc; `None` with fewer than two such windows, where the step's own figure
    /// says it all. A burst of a few seconds inside a long step is too small a share of the
    /// step's average to pass the disturbance threshold, and as large a share of its window.
    pub fn others_peak(&self, samples: &[&Sample]) -> Option<Peak> {
        let walked: Vec<&Sample> = samples
            .iter()
            .copied()
            .filter(|s| s.measured.is_some() && s.kernel.is_some())
            .collect();
        if walked.len() < 3 {
            return None;
        }
        walked
            .windows(2)
            .filter_map(|w| {
                let secs = w[1].at.duration_since(w[0].at).as_secs_f64();
                let (others, _) = self.others_ticks(w[0], w[1])?;
                let total = w[0].cpu.delta(&w[1].cpu).total().max(1) as f64;
                (secs > 0.0).then(|| Peak {
                    cores: others as f64 / self.ticks_per_sec / secs,
                    pct: 100.0 * others as f64 / total,
                    seconds: secs,
                })
            })
            .max_by(|a, b| a.pct.total_cmp(&b.pct))
    }
}
