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
}
