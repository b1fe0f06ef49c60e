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
                let total = w[0].cpu.delta(&w[1].cpu).total();
                window(secs, others, total, self.ticks_per_sec)
            })
            .max_by(|a, b| a.pct.total_cmp(&b.pct))
    }
}

/// The shortest window a peak is read over: the kernel counts CPU time in ticks (10 ms), so a
/// window of a few ticks — the last sample to the step's end, often — turns one tick of
/// another process into whole cores.
const MIN_WINDOW_SECONDS: f64 = 1.0;

/// Other processes' `others` ticks of the host's `total` over a window of `secs`.
fn window(secs: f64, others: u64, total: u64, ticks_per_sec: f64) -> Option<Peak> {
    (secs >= MIN_WINDOW_SECONDS).then(|| Peak {
        cores: others as f64 / ticks_per_sec / secs,
        pct: 100.0 * others as f64 / total.max(1) as f64,
        seconds: secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_of_a_few_ticks_is_no_peak() {
        // Seen on a 2-core host: 0.02 s between the last sample and the step's end, two
        // ticks of others read as 8.7 cores, 100% of the host.
        assert_eq!(window(0.02, 2, 2, 100.0), None);
        let burst = window(2.0, 100, 400, 100.0).unwrap();
        assert_eq!((burst.cores, burst.pct), (0.5, 25.0));
    }
}
