//! E-divisive means and Bayesian online detection on the same synthetic series: shifts of
//! known size at a known place, and noise alone of three shapes. The figures in
//! docs/history.md come from `cargo test --release -p fathom-stats changepoint::trial --
//! --ignored --nocapture`.

use super::bocpd::{self, Prior};
use super::{changes, Search};
use crate::rng::SplitMix;

/// A uniform draw in (0, 1).
fn uniform(rng: &mut SplitMix) -> f64 {
    (rng.below(1 << 30) as f64 + 0.5) / (1u64 << 30) as f64
}

/// Normal noise by Box-Muller: `n` points of mean 1, sd `sd`.
pub fn noise(seed: u64, n: usize, sd: f64) -> Vec<f64> {
    let mut rng = SplitMix(seed);
    (0..n)
        .map(|_| {
            let a = uniform(&mut rng);
            1.0 + sd
                * (-2.0 * a.ln()).sqrt()
                * (2.0 * std::f64::consts::PI * uniform(&mut rng)).cos()
        })
        .collect()
}

/// The shapes of noise a benchmark's runs show.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Normal,
    /// Skewed: most runs near the top, a tail of slow ones (exponential, sd 3%).
    Skewed,
    /// Two modes: one run in five 8% slower (a noisy neighbour, a compaction caught).
    Bimodal,
}

fn series(shape: Shape, seed: u64, n: usize) -> Vec<f64> {
    let mut rng = SplitMix(seed ^ 0xa5a5);
    match shape {
        Shape::Normal => noise(seed, n, 0.03),
        Shape::Skewed => (0..n)
            .map(|_| 1.0 - 0.03 * (-uniform(&mut rng).ln() - 1.0))
            .collect(),
        Shape::Bimodal => noise(seed, n, 0.01)
            .into_iter()
            .map(|x| if uniform(&mut rng) < 0.2 { x * 0.92 } else { x })
            .collect(),
    }
}

/// A method: the changes it finds in a series.
type Method<'a> = (&'a str, Box<dyn Fn(&[f64]) -> Vec<usize> + 'a>);

fn methods() -> Vec<Method<'static>> {
    let edivisive = |xs: &[f64]| -> Vec<usize> {
        changes(xs, &Search::default())
            .iter()
            .map(|c| c.at)
            .collect()
    };
    let mut out: Vec<Method> = vec![("E-divisive", Box::new(edivisive))];
    let priors = [
        (0.01, 0.03, 3),
        (0.01, 0.03, 10),
        (0.01, 0.01, 10),
        (0.01, 0.10, 10),
        (0.1, 0.03, 10),
    ];
    for (hazard, noise, lag) in priors {
        let prior = Prior { hazard, noise };
        let name = format!(
            "BOCPD hazard 1/{:.0}, noise {:.0}%, lag {lag}",
            1.0 / hazard,
            noise * 100.0
        );
        out.push((
            Box::leak(name.into_boxed_str()),
            Box::new(move |xs: &[f64]| bocpd::changes(xs, &prior, lag, 3, 0.5)),
        ));
    }
    out
}

/// Of 100 series of 30 normal points (sd 3%) shifted by `shift` from point 20 on: those
/// where a change was found, and those with one within a point of 20.
fn detections(method: &dyn Fn(&[f64]) -> Vec<usize>, shift: f64) -> (usize, usize) {
    let (mut found, mut near) = (0, 0);
    for seed in 0..100 {
        let mut xs = noise(seed + 1000, 30, 0.03);
        xs[20..].iter_mut().for_each(|x| *x *= 1.0 - shift);
        let at = method(&xs);
        found += usize::from(!at.is_empty());
        near += usize::from(at.iter().any(|t| t.abs_diff(20) <= 1));
    }
    (found, near)
}

/// False changes in 500 series of 30 points of noise alone.
fn false_changes(method: &dyn Fn(&[f64]) -> Vec<usize>, shape: Shape) -> usize {
    (0..500)
        .map(|seed| method(&series(shape, seed, 30)).len())
        .sum()
}

#[test]
#[ignore = "a measurement (about a minute): prints the comparison in docs/history.md"]
fn edivisive_against_bocpd() {
    println!("| method | 3% | 5% | 10% | 20% | false, normal | false, skewed | false, bimodal |");
    println!("|---|---|---|---|---|---|---|---|");
    for (name, method) in methods() {
        let shifts: Vec<String> = [0.03, 0.05, 0.10, 0.20]
            .iter()
            .map(|&s| {
                let (found, near) = detections(&*method, s);
                format!("{found} ({near})")
            })
            .collect();
        let falses: Vec<String> = [Shape::Normal, Shape::Skewed, Shape::Bimodal]
            .iter()
            .map(|&shape| false_changes(&*method, shape).to_string())
            .collect();
        println!(
            "| {name} | {} | {} |",
            shifts.join(" | "),
            falses.join(" | ")
        );
    }
}
