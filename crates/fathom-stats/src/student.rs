//! Student's t distribution (its distribution function and quantiles), for the verdicts' t
//! intervals: computed here from the regularized incomplete beta function, so a verdict needs
//! no statistics library and prints the same digits on every machine.

/// ln Γ(x) for x > 0, by Lanczos' approximation (g = 7, nine terms; about 15 digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |s, (i, g)| s + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz), valid for
/// x < (a + 1) / (a + b + 2).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let step = |coef: f64, c: &mut f64, d: &mut f64| {
            *d = 1.0 + coef * *d;
            *d = 1.0 / if d.abs() < TINY { TINY } else { *d };
            *c = 1.0 + coef / *c;
            *c = if c.abs() < TINY { TINY } else { *c };
            *d * *c
        };
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        h *= step(even, &mut c, &mut d);
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        let delta = step(odd, &mut c, &mut d);
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom (any df > 0, not only whole ones:
/// Welch's are not).
pub fn cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The t with P(T ≤ t) = p, by bisection on `cdf` (to 1e-12).
pub fn quantile(p: f64, df: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "a quantile of p = {p}");
    let (mut lo, mut hi) = (-1.0, 1.0);
    while cdf(lo, df) > p {
        lo *= 2.0;
    }
    while cdf(hi, df) < p {
        hi *= 2.0;
    }
    while hi - lo > 1e-12 * hi.abs().max(1.0) {
        let mid = 0.5 * (lo + hi);
        if cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// P(Z > z) for a standard normal Z: erfc(z / √2) / 2, by erfc's power series near 0 and its
/// continued fraction in the tails (about 14 digits, relative, in either tail).
pub fn normal_upper(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    if z < 0.0 {
        return 1.0 - normal_upper(-z);
    }
    let x = z / std::f64::consts::SQRT_2;
    if x < 2.5 {
        // erf(x) = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1)).
        let (mut term, mut sum, mut n) = (x, x, 0.0);
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x * x / n;
            sum += term / (2.0 * n + 1.0);
        }
        return 0.5 * (1.0 - sum * 2.0 / std::f64::consts::PI.sqrt());
    }
    // erfc(x) = e^(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …))))), from the
    // bottom up.
    let mut f = x;
    for k in (1..=80).rev() {
        f = x + (k as f64 / 2.0) / f;
    }
    0.5 * (-x * x).exp() / (std::f64::consts::PI.sqrt() * f)
}

/// The z with P(Z > z) = p: Abramowitz and Stegun's 26.2.23 as a start, then Newton's steps
/// on `normal_upper`.
pub fn normal_upper_quantile(p: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "a quantile of p = {p}");
    if p > 0.5 {
        return -normal_upper_quantile(1.0 - p);
    }
    let t = (-2.0 * p.ln()).sqrt();
    let mut z = t
        - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
            / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t);
    for _ in 0..4 {
        let density = (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
        z += (normal_upper(z) - p) / density;
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_the_printed_tables() {
        // Two-sided 95% critical values of any t table, and Welch-style fractional df.
        for (df, t) in [
            (1.0, 12.706_204_736),
            (2.0, 4.302_652_730),
            (4.0, 2.776_445_105),
            (10.0, 2.228_138_852),
            (30.0, 2.042_272_456),
            (1e6, 1.959_966_3),
        ] {
            let q = quantile(0.975, df);
            assert!((q - t).abs() < 1e-6 * t, "df {df}: {q} against {t}");
        }
        assert!((cdf(0.0, 3.7) - 0.5).abs() < 1e-12);
        // df = 1 is Cauchy: P(T ≤ 1) = 3/4.
        assert!((cdf(1.0, 1.0) - 0.75).abs() < 1e-12);
        let q = quantile(0.0025, 4.5);
        assert!((cdf(q, 4.5) - 0.0025).abs() < 1e-12, "{q}");
    }

    /// The normal tail against printed values (scipy.stats.norm.sf), near 0 and far out.
    #[test]
    fn the_normal_tail_and_its_quantiles() {
        for (z, p) in [
            (0.0, 0.5),
            (1.0, 0.158_655_253_931_457_05),
            (1.959_963_984_540_054, 0.025),
            (3.0, 0.001_349_898_031_630_094_6),
            (3.6, 0.000_159_108_590_157_534_8),
            (6.0, 9.865_876_450_376_946e-10),
            (-2.0, 0.977_249_868_051_820_8),
        ] {
            let got = normal_upper(z);
            assert!((got - p).abs() <= 1e-12 * p, "z {z}: {got} against {p}");
            if p < 0.999 {
                let back = normal_upper_quantile(p);
                assert!((back - z).abs() < 1e-9, "p {p}: {back} against {z}");
            }
        }
    }
}
