//! The seeded simulation that measures how often a verdict is wrong, at the repeat counts and
//! noise users meet: fixed repeats from `MIN_REPEATS` to 12 and adaptive rounds 3..12, run-to-run
//! noise of 1-10%, true changes of none, the band's edge and twice the band, either way. Its
//! table is docs/verdicts.md's; `cargo test --release -p fathom-core verdict::simulation --
//! --nocapture` prints it.

use super::log_ratio::{decide, LogRatio};
use super::{Verdict, MIN_REPEATS};
use crate::rng::SplitMix;

const BAND: f64 = 0.03;
const TRIALS: usize = 20_000;

/// How a design takes its runs: a fixed count, or rounds from `MIN_REPEATS` to a most, stopping
/// at the first round that decides.
#[derive(Clone, Copy)]
enum Design {
    Fixed(usize),
    Adaptive(usize),
}

struct Normal(SplitMix);

impl Normal {
    fn uniform(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box-Muller; one of the pair is enough here).
    fn draw(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// One comparison: runs whose log ops/s scatter by `noise` (a standard deviation of the
/// logarithm, about the coefficient of variation), NEW truly `ratio` times BASE.
fn one(design: Design, noise: f64, ratio: f64, rng: &mut Normal) -> Verdict {
    let (most, looks) = match design {
        Design::Fixed(n) => (n, 1),
        Design::Adaptive(max) => (max, max + 1 - MIN_REPEATS),
    };
    let mut base = Vec::with_capacity(most);
    let mut new = Vec::with_capacity(most);
    for round in 1..=most {
        base.push((noise * rng.draw()).exp() * 100.0);
        new.push((noise * rng.draw()).exp() * 100.0 * ratio);
        let look = match design {
            Design::Fixed(n) => round == n,
            Design::Adaptive(_) => round >= MIN_REPEATS,
        };
        if !look {
            continue;
        }
        let test = LogRatio::of(&base, &new).expect("positive figures");
        let (verdict, _) = decide(test.nearest(BAND), looks);
        if verdict.decided() || round == most {
            return verdict;
        }
    }
    unreachable!("the last round returns")
}

/// The share of each verdict over `TRIALS` comparisons: faster, slower, same.
fn shares(design: Design, noise: f64, ratio: f64, seed: u64) -> [f64; 3] {
    let mut rng = Normal(SplitMix(seed));
    let mut counts = [0usize; 3];
    for _ in 0..TRIALS {
        match one(design, noise, ratio, &mut rng) {
            Verdict::Faster => counts[0] += 1,
            Verdict::Slower => counts[1] += 1,
            Verdict::Same => counts[2] += 1,
            _ => {}
        }
    }
    counts.map(|c| c as f64 / TRIALS as f64)
}

const NOISES: [f64; 4] = [0.01, 0.02, 0.05, 0.10];

/// The rates of one design: false faster or slower, the worst over the changes of its shares
/// pooled over the noise levels (a one-sided t test is blind to the noise's scale, so each
/// noise level is another sample of the same rate); false same, the worst over changes and
/// noise levels (it is not: the band has a width, and the least noise errs most); and how
/// often a change of twice the band, and no change, were decided rightly at 2% and 5% noise.
struct Rates {
    wrong_way: f64,
    wrong_same: f64,
    found: [f64; 2],
    same_found: [f64; 2],
}

fn rates(design: Design, seed: &mut u64) -> Rates {
    let mut r = Rates {
        wrong_way: 0.0,
        wrong_same: 0.0,
        found: [0.0; 2],
        same_found: [0.0; 2],
    };
    for change in [-2.0, -1.0, 0.0, 1.0, 2.0] {
        let mut wrong_way = 0.0;
        for (i, noise) in NOISES.into_iter().enumerate() {
            *seed += 1;
            let [faster, slower, same] = shares(design, noise, 1.0 + change * BAND, *seed);
            // Faster is false wherever the truth is at most the band's upper edge, slower
            // wherever it is at least the lower edge; same wherever the truth is on an edge or
            // beyond.
            wrong_way += if change <= 1.0 { faster } else { 0.0 }
                + if change >= -1.0 { slower } else { 0.0 };
            if change != 0.0 {
                r.wrong_same = r.wrong_same.max(same);
            }
            let at = i.checked_sub(1).filter(|i| *i < 2);
            match (at, change) {
                (Some(i), 2.0) => r.found[i] = faster,
                (Some(i), 0.0) => r.same_found[i] = same,
                _ => {}
            }
        }
        r.wrong_way = r.wrong_way.max(wrong_way / NOISES.len() as f64);
    }
    r
}

#[test]
fn verdicts_are_wrong_at_most_their_nominal_share() {
    let designs = [3, 4, 5, 6, 8, 10, 12]
        .map(Design::Fixed)
        .into_iter()
        .chain([Design::Adaptive(12)]);
    let mut seed = 0x7e57;
    println!("| runs a side | false faster or slower | false same | +6% found (2%, 5% noise) | no change found same (2%, 5% noise) |");
    println!("|---|---|---|---|---|");
    // Twice the binomial error of a share of 2.5%, over the pooled comparisons and over one
    // cell's: a rate exactly at its level reads above it about half the time, by chance.
    let error = |trials: usize| 2.0 * (0.025 * 0.975 / trials as f64).sqrt();
    for design in designs {
        let w = rates(design, &mut seed);
        let name = match design {
            Design::Fixed(n) => format!("{n}"),
            Design::Adaptive(max) => format!("{MIN_REPEATS}..{max} adaptive"),
        };
        let pct = |x: f64| format!("{:.2}%", x * 100.0);
        println!(
            "| {name} | {} | {} | {}, {} | {}, {} |",
            pct(w.wrong_way),
            pct(w.wrong_same),
            pct(w.found[0]),
            pct(w.found[1]),
            pct(w.same_found[0]),
            pct(w.same_found[1]),
        );
        let pooled = error(TRIALS * NOISES.len());
        assert!(w.wrong_way <= 0.025 + pooled, "{name}: {}", w.wrong_way);
        assert!(
            w.wrong_same <= 0.025 + error(TRIALS),
            "{name}: {}",
            w.wrong_same
        );
    }
}
