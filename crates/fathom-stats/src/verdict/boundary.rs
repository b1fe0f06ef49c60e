//! When adaptive rounds may stop: a group-sequential boundary of O'Brien and Fleming's type.
//! A comparison judged at every round from its first look to its last is wrong at most
//! `ALPHA` of the time in all, with most of that error kept for the late looks, where the
//! runs can tell more. The boundary's constant for each first and last round is computed once
//! by a seeded simulation (`calibrate`) and kept in `boundary_table.rs`.

use super::log_ratio::ALPHA;
use crate::student;
use serde::Serialize;

/// The rounds at which a comparison may be judged: every round from `first` to `last`. Fixed
/// repeats look once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Looks {
    pub first: usize,
    pub last: usize,
}

/// The boundary's constants: `(first, last, c)`; a look at n rounds rejects at the nominal
/// one-sided level P(Z > c · √(last / n)).
pub use super::boundary_table::CONSTANTS;

impl Looks {
    /// One look: fixed repeats.
    pub const ONCE: Looks = Looks { first: 0, last: 0 };

    /// How many looks.
    pub fn count(&self) -> usize {
        (self.last + 1).saturating_sub(self.first).max(1)
    }

    /// The boundary's constant, where the table has one.
    fn constant(&self) -> Option<f64> {
        use super::boundary_table::{FIRST_MOST, LAST_MOST};
        if self.first > FIRST_MOST || self.last > LAST_MOST {
            return None;
        }
        CONSTANTS
            .iter()
            .find(|(f, l, _)| *f == self.first && *l == self.last)
            .map(|e| e.2)
    }

    /// The one-sided level a verdict judged at `n` rounds is held to: `ALPHA` for one look;
    /// the boundary's nominal level at that look for several (n outside first..=last counts
    /// as the nearer end); beyond the table, `ALPHA` shared equally among the looks
    /// (Bonferroni's, which holds but wastes power).
    pub fn level(&self, n: usize) -> f64 {
        if self.count() == 1 {
            return ALPHA;
        }
        match self.constant() {
            Some(c) => {
                let n = n.clamp(self.first, self.last) as f64;
                student::normal_upper(c * (self.last as f64 / n).sqrt())
            }
            None => ALPHA / self.count() as f64,
        }
    }
}

/// The boundary's constants for looks at every round from `first` to each last round up to
/// `last_most`, by `trials` seeded sequences under the null: each round adds a normal
/// per-round log ratio, each look is a one-sample t test (the paired design's) at `n − 1`
/// degrees of freedom, and a constant is the one at which `ALPHA` of the sequences cross the
/// boundary at some look. The test's p-values are free of the noise's scale, so one constant
/// serves every noise level. One pass serves every last round: a sequence's peak over looks
/// up to `last` is the running peak of z · √n, over √last.
pub fn calibrate(first: usize, last_most: usize, trials: usize, seed: u64) -> Vec<(usize, f64)> {
    let mut rng = crate::rng::SplitMix(seed);
    let lasts = first + 1..=last_most;
    let mut peaks: Vec<Vec<f64>> = lasts.clone().map(|_| Vec::with_capacity(trials)).collect();
    for _ in 0..trials {
        let (mut sum, mut squares) = (0.0, 0.0);
        let mut running = f64::NEG_INFINITY;
        for n in 1..=last_most {
            let d = rng.normal();
            sum += d;
            squares += d * d;
            if n < first.max(2) {
                continue;
            }
            let nf = n as f64;
            let mean = sum / nf;
            let var = ((squares - nf * mean * mean) / (nf - 1.0)).max(1e-300);
            let t = mean / (var / nf).sqrt();
            let p = (1.0 - student::cdf(t, nf - 1.0)).clamp(1e-300, 1.0 - 1e-16);
            running = running.max(student::normal_upper_quantile(p) * nf.sqrt());
            if n > first {
                peaks[n - first - 1].push(running / nf.sqrt());
            }
        }
    }
    let at = ((1.0 - ALPHA) * trials as f64).ceil() as usize;
    lasts
        .zip(peaks)
        .map(|(last, mut p)| {
            p.sort_by(f64::total_cmp);
            (last, p[at.min(trials - 1)])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept table is what the simulation computes: one entry recomputed with fewer trials
    /// lands within that smaller simulation's own error of it.
    #[test]
    fn the_kept_constants_are_the_simulations() {
        let looks = Looks { first: 3, last: 12 };
        let kept = looks.constant().expect("3..12 is in the table");
        let fresh = calibrate(3, 12, 40_000, 0xb0_0d)
            .pop()
            .expect("one last round")
            .1;
        assert!((kept - fresh).abs() < 0.04, "kept {kept}, fresh {fresh}");
        // The first look is held far below 2.5%, the last a little below it.
        assert!(looks.level(3) < 0.001, "{}", looks.level(3));
        let last = looks.level(12);
        assert!(last > 0.015 && last < ALPHA, "{last}");
        assert_eq!(Looks::ONCE.level(5), ALPHA);
        // Past the table, Bonferroni over the looks.
        let wide = Looks {
            first: 3,
            last: 500,
        };
        assert_eq!(wide.level(10), ALPHA / 498.0);
    }

    /// Regenerates `boundary_table.rs` (about a minute in release):
    /// `cargo test --release -p fathom-stats verdict::boundary -- --ignored --nocapture`.
    #[test]
    #[ignore = "a computation: prints the table kept in boundary_table.rs"]
    fn print_the_table() {
        use super::super::boundary_table::{FIRST_MOST, LAST_MOST};
        println!("pub const CONSTANTS: &[(usize, usize, f64)] = &[");
        for first in 3..=FIRST_MOST {
            for (last, c) in calibrate(first, LAST_MOST, 200_000, 0x5e9 + first as u64) {
                println!("    ({first}, {last}, {c:.4}),");
            }
        }
        println!("];");
    }
}
