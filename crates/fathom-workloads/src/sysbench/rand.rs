//! sysbench's random numbers (docs/workloads.md §3.3): `--rand-type` uniform, special (the
//! 1.0.20 default), gaussian, pareto and zipfian over `[a, b]`, from a per-thread generator.

use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

/// A `--rand-type` with its options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RandType {
    Uniform,
    /// `--rand-spec-iter`, `--rand-spec-pct`, `--rand-spec-res`.
    Special {
        iter: u32,
        pct: f64,
        res: f64,
    },
    Gaussian {
        iter: u32,
    },
    Pareto {
        h: f64,
    },
    Zipfian {
        exp: f64,
    },
}

/// One thread's generator.
pub struct SbRand {
    rng: SmallRng,
    kind: RandType,
    zipf: Option<Zipf>,
}

impl SbRand {
    pub fn new(kind: RandType, seed: u64) -> SbRand {
        SbRand {
            rng: SmallRng::seed_from_u64(seed),
            kind,
            zipf: None,
        }
    }

    /// Uniform in [0, 1) from the top 52 bits, as sysbench's `uniform_double`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        unit(&mut self.rng)
    }

    /// `a + floor(U * (b - a + 1))`.
    #[inline]
    pub fn uniform(&mut self, a: i64, b: i64) -> i64 {
        uniform(&mut self.rng, a, b)
    }

    /// A string from a template, as `sysbench.rand.string`.
    pub fn fill_digits(&mut self, template: &str, out: &mut String) {
        fill_string(&mut self.rng, template, out)
    }

    /// `rand.default(a, b)`: the configured distribution.
    pub fn default(&mut self, a: i64, b: i64) -> i64 {
        if let Some(v) = draw(self.kind, &mut self.rng, a, b) {
            return v;
        }
        let RandType::Zipfian { exp } = self.kind else {
            unreachable!("only zipfian keeps state")
        };
        let n = (b - a + 1).max(1) as u64;
        if self.zipf.as_ref().is_none_or(|z| z.n != n) {
            self.zipf = Some(Zipf::new(n, exp));
        }
        let z = self.zipf.take().expect("set above");
        let k = z.sample(self);
        self.zipf = Some(z);
        a + k as i64 - 1
    }
}

/// Uniform in [0, 1) from the top 52 bits, as sysbench's `uniform_double`.
#[inline]
pub fn unit(rng: &mut SmallRng) -> f64 {
    (rng.next_u64() >> 12) as f64 / (1u64 << 52) as f64
}

/// `a + floor(U * (b - a + 1))`.
#[inline]
pub fn uniform(rng: &mut SmallRng, a: i64, b: i64) -> i64 {
    a + (unit(rng) * (b - a + 1) as f64) as i64
}

/// `sysbench.rand.string`: each `#` of the template becomes a random digit, each `@` a random
/// lower-case letter, the rest stays.
pub fn fill_string(rng: &mut SmallRng, template: &str, out: &mut String) {
    out.clear();
    for ch in template.chars() {
        match ch {
            '#' => out.push((b'0' + uniform(rng, 0, 9) as u8) as char),
            '@' => out.push((b'a' + uniform(rng, 0, 25) as u8) as char),
            _ => out.push(ch),
        }
    }
}

/// A draw over [a, b] of a distribution that keeps no state between draws (all but zipfian,
/// which gives `None`): the one formula both the sysbench workload and workload files use.
pub fn draw(kind: RandType, rng: &mut SmallRng, a: i64, b: i64) -> Option<i64> {
    Some(match kind {
        RandType::Uniform => uniform(rng, a, b),
        RandType::Special { iter, pct, res } => special(rng, a, b, (iter, pct, res)),
        RandType::Gaussian { iter } => {
            let sum: i64 = (0..iter).map(|_| uniform(rng, a, b)).sum();
            sum / iter.max(1) as i64
        }
        RandType::Pareto { h } => {
            let power = h.ln() / (1.0 - h).ln();
            a + ((b - a + 1) as f64 * unit(rng).powf(power)) as i64
        }
        RandType::Zipfian { .. } => return None,
    })
}

/// 1.0.20's `special`: `res_pct` of the draws in a window of `pct` of the range around its
/// middle, the rest the mean of `iter` uniform draws.
fn special(rng: &mut SmallRng, a: i64, b: i64, (iter, pct, res_pct): (u32, f64, f64)) -> i64 {
    let t = (b - a) as f64;
    let u = unit(rng);
    let res = u * t * 100.0 / (100.0 - res_pct);
    if res < t {
        let sum: f64 = (0..iter).map(|_| unit(rng)).sum();
        a + (sum * t / iter.max(1) as f64) as i64
    } else {
        a + (u * (t * pct / 100.0 + 1.0) + t / 2.0 - t * pct / 200.0) as i64
    }
}

/// 1.0.20's defaults for the distributions with options: `--rand-spec-iter=12`,
/// `--rand-spec-pct=1`, `--rand-spec-res=75`, `--rand-pareto-h=0.2`.
pub const SPECIAL: RandType = RandType::Special {
    iter: 12,
    pct: 1.0,
    res: 75.0,
};
pub const GAUSSIAN: RandType = RandType::Gaussian { iter: 12 };
pub const PARETO: RandType = RandType::Pareto { h: 0.2 };

/// Rejection-inversion Zipf sampler (Hörmann and Derflinger) over 1..=n.
struct Zipf {
    n: u64,
    exp: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    fn new(n: u64, exp: f64) -> Zipf {
        let mut z = Zipf {
            n,
            exp,
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.exp * x.ln()).exp()
    }
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.exp) * lx) * lx
    }
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exp)).max(-1.0);
        (helper1(t) * x).exp()
    }
    fn sample(&self, r: &mut SbRand) -> u64 {
        loop {
            let u = self.h_n + r.unit() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inverse(u);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            if k as f64 - x <= self.s || u >= self.h_integral(k as f64 + 0.5) - self.h(k as f64) {
                return k;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(kind: RandType, n: i64, draws: usize) -> Vec<usize> {
        let mut r = SbRand::new(kind, 7);
        let mut h = vec![0usize; n as usize];
        for _ in 0..draws {
            let v = r.default(1, n);
            assert!((1..=n).contains(&v), "{kind:?} gave {v}");
            h[(v - 1) as usize] += 1;
        }
        h
    }

    #[test]
    fn every_type_stays_in_range() {
        for kind in [
            RandType::Uniform,
            RandType::Special {
                iter: 12,
                pct: 1.0,
                res: 75.0,
            },
            RandType::Gaussian { iter: 12 },
            RandType::Pareto { h: 0.2 },
            RandType::Zipfian { exp: 0.8 },
        ] {
            histogram(kind, 1000, 20_000);
        }
    }

    #[test]
    fn special_puts_most_draws_in_the_middle_percent() {
        let h = histogram(
            RandType::Special {
                iter: 12,
                pct: 1.0,
                res: 75.0,
            },
            10_000,
            100_000,
        );
        let middle: usize = h[4_950..5_050].iter().sum();
        // 75% land in the 1% window, plus the bell's small share of it.
        assert!((74_000..80_000).contains(&middle), "{middle}");
    }

    #[test]
    fn pareto_and_zipfian_favour_the_low_end() {
        let p = histogram(RandType::Pareto { h: 0.2 }, 1000, 50_000);
        // h = 0.2: 80% of draws in the first 20% of the range.
        let low: usize = p[..200].iter().sum();
        assert!((38_000..42_000).contains(&low), "{low}");
        let z = histogram(RandType::Zipfian { exp: 0.8 }, 1000, 50_000);
        assert!(
            z[0] > z[1] && z[1] > z[9] && z[9] > z[500],
            "{:?}",
            &z[..10]
        );
    }
}
