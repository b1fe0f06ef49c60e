//! The seeded simulation that measures how often a verdict is wrong under the conditions users
//! meet: fixed repeats from `MIN_REPEATS` to 12 and adaptive rounds 3..12; run-to-run noise,
//! a drift from round to round, an order effect (the run that goes second in a round gains or
//! loses), unequal noise on the two sides, contaminated runs, the offset of another session;
//! the setups in rotated, shuffled or fixed order; judged paired by round or unpaired (Welch).
//! Its tables are docs/verdicts.md's: `cargo test --release -p fathom-stats verdict::simulation
//! -- --nocapture` prints those the tests assert, and `-- --ignored` the rest.

use super::boundary::Looks;
use super::log_ratio::{decide, LogRatio};
use super::{Verdict, MIN_REPEATS};
use crate::rng::SplitMix;

const BAND: f64 = 0.03;
const TRIALS: usize = 50_000;

/// How many runs: a fixed count, or rounds from `MIN_REPEATS` to a most, stopping at the first
/// round that decides.
#[derive(Clone, Copy, Debug)]
pub enum Rounds {
    Fixed(usize),
    Adaptive(usize),
}

/// The order of the two setups within a round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Order {
    /// Base first in odd rounds, new first in even ones (fathom's default for two setups).
    Rotate,
    /// Drawn per round.
    Shuffle,
    /// Base first in every round.
    Fixed,
}

/// How the runs are judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Analysis {
    /// The rounds' log ratios (what fathom does for rounds of one experiment).
    Paired,
    /// Welch's t on the two sides' runs.
    Welch,
}

/// What moves a run's log ops/s besides the true change: standard deviations of the logarithm
/// (about the coefficient of variation) unless said.
#[derive(Clone, Copy, Debug)]
pub struct Noise {
    /// Each run's own scatter.
    pub within: f64,
    /// The new side's own scatter where it differs from the base's.
    pub new_within: Option<f64>,
    /// A shift shared by both runs of a round, fresh each round.
    pub drift: f64,
    /// The run that goes second in a round is this much slower (a fraction; negative: faster).
    pub order: f64,
    /// Each side's runs ran in a session of its own, offset by this.
    pub session: f64,
    /// One run in this many is `contaminated_by` slower (a neighbour's burst); 0: none.
    pub contaminated_every: u64,
    pub contaminated_by: f64,
}

impl Noise {
    pub const fn within(sd: f64) -> Noise {
        Noise {
            within: sd,
            new_within: None,
            drift: 0.0,
            order: 0.0,
            session: 0.0,
            contaminated_every: 0,
            contaminated_by: 0.0,
        }
    }
}

/// A design as users run it.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub rounds: Rounds,
    pub order: Order,
    pub analysis: Analysis,
}

/// One run's log ops/s, at `place` (0 first, 1 second) in its round.
fn run(noise: &Noise, sd: f64, shift: f64, place: usize, rng: &mut SplitMix) -> f64 {
    let mut x = shift + sd * rng.normal();
    if place == 1 {
        x += (1.0 - noise.order).ln();
    }
    if noise.contaminated_every > 0 && rng.next_u64().is_multiple_of(noise.contaminated_every) {
        x += (1.0 - noise.contaminated_by).ln();
    }
    x
}

/// One comparison of NEW truly `ratio` times BASE under `noise`, laid out and judged as `plan`
/// says.
pub fn one(plan: &Plan, noise: &Noise, ratio: f64, rng: &mut SplitMix) -> Verdict {
    let (most, looks) = match plan.rounds {
        Rounds::Fixed(n) => (n, Looks::ONCE),
        Rounds::Adaptive(max) => (
            max,
            Looks {
                first: MIN_REPEATS,
                last: max,
            },
        ),
    };
    let (base_session, new_session) = (noise.session * rng.normal(), noise.session * rng.normal());
    let mut base = Vec::with_capacity(most);
    let mut new = Vec::with_capacity(most);
    for round in 1..=most {
        let drift = noise.drift * rng.normal();
        let base_first = match plan.order {
            Order::Rotate => round % 2 == 1,
            Order::Shuffle => rng.next_u64().is_multiple_of(2),
            Order::Fixed => true,
        };
        let (bp, np) = if base_first { (0, 1) } else { (1, 0) };
        let new_sd = noise.new_within.unwrap_or(noise.within);
        base.push(run(noise, noise.within, drift + base_session, bp, rng).exp() * 100.0);
        new.push(run(noise, new_sd, drift + new_session + ratio.ln(), np, rng).exp() * 100.0);
        let look = match plan.rounds {
            Rounds::Fixed(n) => round == n,
            Rounds::Adaptive(_) => round >= MIN_REPEATS,
        };
        if !look {
            continue;
        }
        let test = match plan.analysis {
            Analysis::Paired => {
                let pairs: Vec<(f64, f64)> =
                    base.iter().copied().zip(new.iter().copied()).collect();
                LogRatio::paired(&pairs)
            }
            Analysis::Welch => LogRatio::of(&base, &new),
        }
        .expect("positive figures");
        let (verdict, _, _) = decide(test.nearest(BAND), looks.level(round));
        if verdict.decided() || round == most {
            return verdict;
        }
    }
    unreachable!("the last round returns")
}

/// The share of each verdict over `trials` comparisons: faster, slower, same.
pub fn shares(plan: &Plan, noise: &Noise, ratio: f64, trials: usize, seed: u64) -> [f64; 3] {
    let mut rng = SplitMix(seed);
    let mut counts = [0usize; 3];
    for _ in 0..trials {
        match one(plan, noise, ratio, &mut rng) {
            Verdict::Faster => counts[0] += 1,
            Verdict::Slower => counts[1] += 1,
            Verdict::Same => counts[2] += 1,
            _ => {}
        }
    }
    counts.map(|c| c as f64 / trials as f64)
}

/// A plan's rates under one noise: false faster (the worst over true changes at most the
/// band's upper edge), false slower (at least its lower edge), false same (on an edge or
/// beyond), a change of twice the band found, and no change found the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rates {
    pub false_faster: f64,
    pub false_slower: f64,
    pub false_same: f64,
    pub found: f64,
    pub same_found: f64,
}

pub fn rates(plan: &Plan, noise: &Noise, trials: usize, seed: u64) -> Rates {
    let mut r = Rates::default();
    for (i, change) in [-2.0, -1.0, 0.0, 1.0, 2.0].into_iter().enumerate() {
        let [faster, slower, same] =
            shares(plan, noise, 1.0 + change * BAND, trials, seed + i as u64);
        if change <= 1.0 {
            r.false_faster = r.false_faster.max(faster);
        }
        if change >= -1.0 {
            r.false_slower = r.false_slower.max(slower);
        }
        if change != 0.0 {
            r.false_same = r.false_same.max(same);
        }
        if change == 2.0 {
            r.found = faster;
        }
        if change == 0.0 {
            r.same_found = same;
        }
    }
    r
}

/// The rounds users run: fixed counts and adaptive 3..12.
const ROUNDS: [Rounds; 8] = [
    Rounds::Fixed(3),
    Rounds::Fixed(4),
    Rounds::Fixed(5),
    Rounds::Fixed(6),
    Rounds::Fixed(8),
    Rounds::Fixed(10),
    Rounds::Fixed(12),
    Rounds::Adaptive(12),
];

fn name(r: Rounds) -> String {
    match r {
        Rounds::Fixed(n) => n.to_string(),
        Rounds::Adaptive(max) => format!("{MIN_REPEATS}..{max} adaptive"),
    }
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// Three binomial errors of a share of 2.5% over `trials`: a rate exactly at its level reads
/// above it about half the time, by chance, and a table holds two dozen such rates.
fn error(trials: usize) -> f64 {
    3.0 * (0.025 * 0.975 / trials as f64).sqrt()
}

/// Prints a table of `plan`'s rates under `noise` for every count of rounds, asserting the
/// false rates when `holds`; returns the rates.
fn table(title: &str, order: Order, analysis: Analysis, noise: &Noise, holds: bool) -> Vec<Rates> {
    println!("\n{title}\n");
    println!("| runs a side | false faster | false slower | false same | +6% found | no change found same |");
    println!("|---|---|---|---|---|---|");
    let mut out = Vec::new();
    for (i, rounds) in ROUNDS.into_iter().enumerate() {
        let plan = Plan {
            rounds,
            order,
            analysis,
        };
        let r = rates(&plan, noise, TRIALS, 0x7e57_0000 + 16 * i as u64);
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            name(rounds),
            pct(r.false_faster),
            pct(r.false_slower),
            pct(r.false_same),
            pct(r.found),
            pct(r.same_found)
        );
        if holds {
            let limit = 0.025 + error(TRIALS);
            for (what, rate) in [
                ("faster", r.false_faster),
                ("slower", r.false_slower),
                ("same", r.false_same),
            ] {
                assert!(
                    rate <= limit,
                    "{title}, {}: false {what} {rate}",
                    name(rounds)
                );
            }
        }
        out.push(r);
    }
    out
}

/// Noise alone, the runs unpaired (Welch) as two sides from outside one experiment are: every
/// rate at its level, at 2% run-to-run noise.
#[test]
fn verdicts_are_wrong_at_most_their_nominal_share() {
    table(
        "Runs with 2% noise, judged unpaired (Welch):",
        Order::Rotate,
        Analysis::Welch,
        &Noise::within(0.02),
        true,
    );
}

/// The conditions of an experiment's rounds (a 4% order effect, 2% drift from round to round,
/// 1% within a round): with the setups rotated and the rounds paired, every rate holds at every
/// count of rounds, adaptive too; in a fixed order the second setup is called slower.
#[test]
fn rotated_and_paired_rounds_hold_under_order_effects_and_drift() {
    let noise = Noise {
        within: 0.01,
        drift: 0.02,
        order: 0.04,
        ..Noise::within(0.01)
    };
    table(
        "A 4% order effect, 2% drift between rounds, 1% noise within a round; setups rotated, \
         rounds paired (fathom's default):",
        Order::Rotate,
        Analysis::Paired,
        &noise,
        true,
    );
    let fixed = table(
        "The same, setups in a fixed order, rounds paired:",
        Order::Fixed,
        Analysis::Paired,
        &noise,
        false,
    );
    assert!(fixed[4].false_slower > 0.5, "{:?}", fixed[4]);
    // Without the order effect, paired rounds find no change the same at 8 rounds.
    let drift = Noise {
        order: 0.0,
        ..noise
    };
    let paired = table(
        "2% drift between rounds, 1% noise within; rounds paired:",
        Order::Rotate,
        Analysis::Paired,
        &drift,
        true,
    );
    assert!(paired[4].same_found >= 0.90, "{:?}", paired[4]);
}

/// The rest of docs/verdicts.md's tables: the designs fathom does not default to, and the
/// conditions no design fixes (another session's offset).
#[test]
#[ignore = "a measurement (a few minutes): prints the rest of docs/verdicts.md's tables"]
fn the_other_conditions() {
    let rounds_noise = Noise {
        within: 0.01,
        drift: 0.02,
        order: 0.04,
        ..Noise::within(0.01)
    };
    table(
        "A 4% order effect, 2% drift, 1% within; setups rotated, judged unpaired (Welch):",
        Order::Rotate,
        Analysis::Welch,
        &rounds_noise,
        false,
    );
    table(
        "A 4% order effect, 2% drift, 1% within; setups shuffled, rounds paired:",
        Order::Shuffle,
        Analysis::Paired,
        &rounds_noise,
        false,
    );
    table(
        "A 4% order effect, 2% drift, 1% within; setups in a fixed order, judged unpaired:",
        Order::Fixed,
        Analysis::Welch,
        &rounds_noise,
        false,
    );
    table(
        "Unequal noise: base 1%, new 5%; unpaired:",
        Order::Rotate,
        Analysis::Welch,
        &Noise {
            new_within: Some(0.05),
            ..Noise::within(0.01)
        },
        false,
    );
    table(
        "Contaminated runs: 2% noise, one run in ten 20% slower; paired:",
        Order::Rotate,
        Analysis::Paired,
        &Noise {
            contaminated_every: 10,
            contaminated_by: 0.20,
            ..Noise::within(0.02)
        },
        false,
    );
    for sd in [0.10, 0.40] {
        table(
            &format!("Large noise, {:.0}%; paired:", sd * 100.0),
            Order::Rotate,
            Analysis::Paired,
            &Noise::within(sd),
            false,
        );
    }
    for session in [0.02, 0.03] {
        table(
            &format!(
                "Each side in a session of its own, offset {:.0}%, 1% noise within: unpaired, \
                 as a base kept from another night is judged:",
                session * 100.0
            ),
            Order::Rotate,
            Analysis::Welch,
            &Noise {
                session,
                ..Noise::within(0.01)
            },
            false,
        );
    }
}

/// How often docs/verdicts.md's CI recipe fails a night on noise alone: an experiment of the
/// base and the candidate, `rounds` rounds in rotated order, `steps` steps judged paired, the
/// gate failing on any step called slower (with Holm's adjustment or without), every step's
/// true ratio `ratio`. The rounds' drift (2%) and any order effect are shared by the steps of a
/// round (they are one run each); the session's offset is shared by both setups (one session);
/// 1% noise within a round.
fn recipe_failures(
    order: f64,
    steps: usize,
    rounds: usize,
    ratio: f64,
    holm: bool,
    trials: usize,
) -> f64 {
    let noise = Noise {
        drift: 0.02,
        order,
        ..Noise::within(0.01)
    };
    let mut rng = SplitMix(0xc1_7ec1 + steps as u64 * 31 + rounds as u64 + holm as u64);
    let mut failed = 0;
    for _ in 0..trials {
        let mut base = vec![Vec::new(); steps];
        let mut new = vec![Vec::new(); steps];
        for round in 1..=rounds {
            let drift = noise.drift * rng.normal();
            let base_first = round % 2 == 1;
            let (bp, np) = if base_first { (0, 1) } else { (1, 0) };
            for s in 0..steps {
                base[s].push(run(&noise, noise.within, drift, bp, &mut rng));
                new[s].push(run(&noise, noise.within, drift + ratio.ln(), np, &mut rng));
            }
        }
        let nearest: Vec<_> = (0..steps)
            .map(|s| {
                let pairs: Vec<(f64, f64)> = base[s]
                    .iter()
                    .zip(&new[s])
                    .map(|(b, n)| (b.exp(), n.exp()))
                    .collect();
                LogRatio::paired(&pairs).expect("pairs").nearest(BAND)
            })
            .collect();
        let slower = if holm {
            let p: Vec<f64> = nearest.iter().map(|n| n.family).collect();
            super::adjust::adjusted(&p, super::Adjust::Holm)
                .iter()
                .zip(&nearest)
                .any(|(q, n)| n.verdict == Verdict::Slower && *q <= super::ALPHA)
        } else {
            nearest
                .iter()
                .any(|n| n.verdict == Verdict::Slower && n.p <= super::ALPHA)
        };
        failed += usize::from(slower);
    }
    failed as f64 / trials as f64
}

/// The CI recipe's nights: ten steps, five rotated rounds of the base and the candidate in one
/// session, `fail_on = ["slower"]`. With Holm's adjustment a night fails on noise alone at most
/// 2.5% of the time even with every step at the band's edge; without it, far more often.
#[test]
fn the_ci_recipe_fails_a_quiet_night_rarely() {
    println!(
        "\n| order effect | adjustment | no change | every step 3% slower (the band's edge) |"
    );
    println!("|---|---|---|---|");
    for order in [0.0, 0.04] {
        for holm in [false, true] {
            let none = recipe_failures(order, 10, 5, 1.0, holm, 20_000);
            let edge = recipe_failures(order, 10, 5, 0.97, holm, 20_000);
            println!(
                "| {:.0}% | {} | {} | {} |",
                order * 100.0,
                if holm {
                    "Holm (adjust = \"holm\")"
                } else {
                    "none"
                },
                pct(none),
                pct(edge)
            );
            if holm {
                assert!(edge <= 0.025 + error(20_000), "{edge}");
            }
        }
    }
}
