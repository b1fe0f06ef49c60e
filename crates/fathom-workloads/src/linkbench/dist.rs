//! LinkBench's probability distributions (docs/workloads.md §1.5.1), drawn from Java's
//! generator in LinkBench's order: Zipf as Gray et al. generate it, uniform, geometric (the
//! multiget size) and log-normal (payload sizes).

use super::jrand::JavaRandom;

/// Zipf over `[min, max)`: `min` is the most popular value (Gray et al. 1994).
#[derive(Clone, Debug)]
pub struct Zipf {
    min: i64,
    n: f64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
}

/// Below this many items the harmonic number is summed exactly (theta <= 1).
const EXACT_BELOW: i64 = 100_000;

/// The generalised harmonic number H(n, theta), as LinkBench computes it.
pub fn zeta(n: i64, theta: f64) -> f64 {
    if theta > 1.0 || n < EXACT_BELOW {
        (1..=n).map(|k| (k as f64).powf(-theta)).sum()
    } else {
        // LinkBench's ApproxHarmonic.
        (n as f64).powf(1.0 - theta) / (1.0 - theta) + 0.58 - 1.0 / (1.0 - theta)
    }
}

impl Zipf {
    pub fn new(min: i64, max: i64, theta: f64) -> anyhow::Result<Zipf> {
        if theta.is_nan() || theta <= 0.0 || (theta - 1.0).abs() < f64::EPSILON {
            anyhow::bail!("Zipf shape must be positive and not 1, got {theta}");
        }
        if max <= min + 1 {
            anyhow::bail!("Zipf over [{min}, {max}) needs at least two values");
        }
        let n = max - min;
        let zetan = zeta(n, theta);
        let nf = n as f64;
        Ok(Zipf {
            min,
            n: nf,
            theta,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - (1.0 + 0.5f64.powf(theta)) / zetan),
        })
    }

    pub fn draw(&self, rng: &mut JavaRandom) -> i64 {
        let p = rng.next_double();
        let uz = p * self.zetan;
        if uz < 1.0 {
            return self.min;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.min + 1;
        }
        let offset = (self.n * (self.eta * p - self.eta + 1.0).powf(self.alpha)).floor();
        if offset >= self.n {
            self.min + self.n as i64 - 1
        } else {
            self.min + offset as i64
        }
    }
}

/// Uniform over `[min, max)` (`min + nextInt(n)`).
pub fn uniform(rng: &mut JavaRandom, min: i64, max: i64) -> i64 {
    let n = max - min;
    if n <= i32::MAX as i64 {
        min + rng.next_int_bound(n as i32) as i64
    } else {
        // Beyond 2^31 ids: a high and a low draw, composed.
        let hi = rng.next_int_bound((n >> 31) as i32 + 1) as i64;
        let lo = rng.next_int_bound(i32::MAX) as i64;
        min + ((hi << 31) + lo) % n
    }
}

/// Geometric with success probability `p` over `[min, max)`: `min + ceil(ln(1-r)/ln(1-p))`,
/// truncated to `max - 1` (with min 1 it returns 1 only when r is exactly 0).
pub fn geometric(rng: &mut JavaRandom, min: i64, max: i64, p: f64) -> i64 {
    let r = rng.next_double();
    if r == 0.0 {
        return min;
    }
    let k = ((1.0 - r).ln() / (1.0 - p).ln()).ceil() as i64;
    (min + k).min(max - 1)
}

/// Log-normal around `median` with `sigma`, rounded and clipped to `[min, max)`.
pub fn log_normal(rng: &mut JavaRandom, median: f64, sigma: f64, min: i64, max: i64) -> i64 {
    let v = (rng.next_gaussian() * sigma + median.ln()).exp().round() as i64;
    v.clamp(min, max - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_makes_min_the_most_popular_and_follows_its_shape() {
        let z = Zipf::new(1, 1_000_001, 0.8).unwrap();
        let mut r = JavaRandom::new(1);
        let mut counts = std::collections::HashMap::new();
        let draws = 200_000;
        for _ in 0..draws {
            let v = z.draw(&mut r);
            assert!((1..1_000_001).contains(&v));
            *counts.entry(v).or_insert(0u32) += 1;
        }
        // P(min) = 1/zetan, P(min+1) = 2^-0.8/zetan.
        let p1 = counts[&1] as f64 / draws as f64;
        let expected = 1.0 / zeta(1_000_000, 0.8);
        assert!(
            (p1 - expected).abs() / expected < 0.05,
            "{p1} vs {expected}"
        );
        assert!(counts[&1] > counts[&2] && counts[&2] > counts.get(&10).copied().unwrap_or(0));
    }

    #[test]
    fn harmonic_numbers_switch_to_the_approximation_at_100000() {
        let exact: f64 = (1..=99_999).map(|k| (k as f64).powf(-0.8)).sum();
        assert!((zeta(99_999, 0.8) - exact).abs() < 1e-9);
        let approx = zeta(1_000_000, 0.8);
        let exact: f64 = (1..=1_000_000).map(|k| (k as f64).powf(-0.8)).sum();
        assert!((approx - exact).abs() / exact < 1e-3, "{approx} vs {exact}");
    }

    #[test]
    fn multiget_sizes_never_take_their_minimum() {
        // min 1, max 128, p 0.382: sizes in [2, 127], mean about 1 + 1/p.
        let mut r = JavaRandom::new(3);
        let sizes: Vec<i64> = (0..100_000)
            .map(|_| geometric(&mut r, 1, 128, 0.382))
            .collect();
        assert!(sizes.iter().all(|s| (2..=127).contains(s)));
        let mean = sizes.iter().sum::<i64>() as f64 / sizes.len() as f64;
        assert!((mean - (1.0 + 1.0 / 0.382)).abs() < 0.05, "{mean}");
    }

    #[test]
    fn payload_sizes_have_their_median() {
        let mut r = JavaRandom::new(5);
        let mut v: Vec<i64> = (0..20_001)
            .map(|_| log_normal(&mut r, 8.0, 1.0, 0, 255))
            .collect();
        v.sort_unstable();
        assert_eq!(v[10_000], 8);
        assert!(*v.last().unwrap() <= 254);
    }
}
