//! The bound of a step: which share of the measured threads' time (the engine's CPU, fathom's
//! own, waiting for a CPU, the device, commits, locks, the network, pacing) bounded it, decided
//! the same way for every step and every repeat, with a confidence; how often that decision is
//! wrong at the noise steps show run to run is measured by a seeded simulation (`simulate`).

pub mod judge;
pub mod simulate;

use fathom_schema::result::threads::GroupTime;
use fathom_schema::result::threads::GroupWaits;

/// One share of the time of the threads a step is judged by, as a fraction of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    pub name: &'static str,
    pub fraction: f64,
}

/// What bounded a step.
#[derive(Clone, Debug)]
pub enum Bound {
    /// One share clearly ahead of the rest.
    One(&'static str),
    /// Two close shares ahead of the rest, the larger first. Two bounds are the same whichever
    /// of the pair was larger: close shares swap from repeat to repeat.
    Two(&'static str, &'static str),
    /// No share or pair ahead.
    None,
    /// Repeats disagree.
    Unstable,
}

impl PartialEq for Bound {
    fn eq(&self, other: &Bound) -> bool {
        match (self, other) {
            (Bound::One(a), Bound::One(b)) => a == b,
            (Bound::Two(a, b), Bound::Two(c, d)) => (a, b) == (c, d) || (a, b) == (d, c),
            (Bound::None, Bound::None) | (Bound::Unstable, Bound::Unstable) => true,
            _ => false,
        }
    }
}

impl Eq for Bound {}

/// How far ahead the top share must be of the next (absolute, of the whole time) to be the
/// bound alone, and how much of the time the top one (or two) must hold.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub margin: f64,
    pub one: f64,
    pub two: f64,
}

/// The rule reports use: a share is the bound with 40% of the time and 10 points ahead; two
/// close shares are with 60% between them.
pub const RULE: Rule = Rule {
    margin: 0.10,
    one: 0.40,
    two: 0.60,
};

impl Rule {
    /// The bound of one window's shares.
    pub fn decide(&self, shares: &[Share]) -> Bound {
        let mut s: Vec<Share> = shares
            .iter()
            .copied()
            .filter(|s| s.fraction > 0.0)
            .collect();
        s.sort_by(|a, b| b.fraction.total_cmp(&a.fraction));
        let (Some(a), b) = (s.first(), s.get(1)) else {
            return Bound::None;
        };
        let second = b.map_or(0.0, |b| b.fraction);
        if a.fraction >= self.one && a.fraction - second >= self.margin {
            return Bound::One(a.name);
        }
        match b {
            Some(b) if a.fraction + b.fraction >= self.two => {
                let third = s.get(2).map_or(0.0, |c| c.fraction);
                if b.fraction - third >= self.margin {
                    Bound::Two(a.name, b.name)
                } else {
                    Bound::None
                }
            }
            _ => Bound::None,
        }
    }

    /// The bound over repeats: what more than half of them decide (a pair whichever of its
    /// two was larger); else, when some repeats decide a pair and the rest one of its two,
    /// that pair (they agree on what bounded the step, and differ on whether one of the two was
    /// far enough ahead), the larger on average first; else `Unstable`.
    pub fn vote(&self, repeats: &[Vec<Share>]) -> Bound {
        let decided: Vec<Bound> = repeats.iter().map(|r| self.decide(r)).collect();
        for d in &decided {
            let n = decided.iter().filter(|x| *x == d).count();
            if 2 * n > decided.len() {
                return d.clone();
            }
        }
        let mut names: Vec<&'static str> = Vec::new();
        for d in &decided {
            let named = match d {
                Bound::One(a) => vec![*a],
                Bound::Two(a, b) => vec![*a, *b],
                _ => return Bound::Unstable,
            };
            for n in named {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        let pair = decided.iter().any(|d| matches!(d, Bound::Two(..)));
        match names[..] {
            [a, b] if pair => {
                let mean = mean_shares(repeats);
                let of = |n: &str| {
                    mean.iter()
                        .find(|s| s.name == n)
                        .map_or(0.0, |s| s.fraction)
                };
                if of(b) > of(a) {
                    Bound::Two(b, a)
                } else {
                    Bound::Two(a, b)
                }
            }
            _ => Bound::Unstable,
        }
    }
}

/// How sure a verdict is: from the margin it was decided by, lowered by what weakens it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    /// From the margin a verdict was decided by (the top share over the next, or the pair's
    /// lower over the third), of the mean shares over the repeats: the simulation's error per
    /// level is in docs/bounds.md.
    pub fn of_margin(margin: f64) -> Confidence {
        if margin >= 0.25 {
            Confidence::High
        } else if margin >= 0.15 {
            Confidence::Medium
        } else {
            Confidence::Low
        }
    }

    /// One level lower.
    pub fn lower(self) -> Confidence {
        match self {
            Confidence::High => Confidence::Medium,
            _ => Confidence::Low,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

impl Rule {
    /// The margin `bound` was decided by among `shares`: the named share over the largest
    /// other, or the pair's lower over the largest third; 0 for no single bound.
    pub fn margin(&self, bound: &Bound, shares: &[Share]) -> f64 {
        let of = |name: &str| {
            shares
                .iter()
                .filter(|s| s.name == name)
                .map(|s| s.fraction)
                .sum::<f64>()
        };
        let best_other = |skip: &[&str]| {
            shares
                .iter()
                .filter(|s| !skip.contains(&s.name))
                .map(|s| s.fraction)
                .fold(0.0, f64::max)
        };
        match bound {
            Bound::One(a) => of(a) - best_other(&[a]),
            Bound::Two(a, b) => of(a).min(of(b)) - best_other(&[a, b]),
            _ => 0.0,
        }
    }
}

/// The mean of each share over repeats (a share missing from a repeat counts 0 there).
pub fn mean_shares(repeats: &[Vec<Share>]) -> Vec<Share> {
    let mut out: Vec<Share> = Vec::new();
    for r in repeats {
        for s in r {
            match out.iter_mut().find(|o| o.name == s.name) {
                Some(o) => o.fraction += s.fraction,
                None => out.push(*s),
            }
        }
    }
    let n = repeats.len().max(1) as f64;
    for o in &mut out {
        o.fraction /= n;
    }
    out
}

/// The share names a wait kind of `--waits` goes to: its off-CPU time split by what the
/// threads slept in.
const WAIT_SHARES: [(&str, &str); 7] = [
    ("futex", "locks"),
    ("fsync", "commits"),
    ("socket", "network"),
    ("sleep", "sleep"),
    ("io", "device"),
    ("fault", "device"),
    ("other", "off cpu"),
];

/// The shares of a group of threads' time (its busy threads' for the harness and the engine):
/// on a CPU (split into the engine's and fathom's own by `harness_cpu_s`, fathom's CPU over the
/// window where it is known), runnable waiting for a CPU, paced, and the time off a CPU. That
/// is block IO ("device", with delay accounting) and the rest ("off cpu": a lock, the network,
/// a condition) — or, with `--waits` samples of the group, all of it split in proportion to
/// what the sampled threads slept in: locks (futex), commits (the fsync family), network,
/// sleep, device (block IO and page faults) and the rest.
pub fn shares_of(
    g: &GroupTime,
    harness_cpu_s: Option<f64>,
    waits: Option<&GroupWaits>,
) -> Vec<Share> {
    if g.wall_s <= 0.0 {
        return Vec::new();
    }
    let f = |x: f64| x / g.wall_s;
    let harness = harness_cpu_s.unwrap_or(0.0).clamp(0.0, g.cpu_s);
    let mut out = vec![
        Share {
            name: "engine cpu",
            fraction: f(g.cpu_s - harness),
        },
        Share {
            name: "waiting for a cpu",
            fraction: f(g.runq_s),
        },
    ];
    if harness > 0.0 {
        out.push(Share {
            name: "harness cpu",
            fraction: f(harness),
        });
    }
    if let Some(p) = g.paced_s {
        out.push(Share {
            name: "paced",
            fraction: f(p),
        });
    }
    let off = g.blkio_s.unwrap_or(0.0) + g.other_s;
    match waits.and_then(|w| off_cpu_seconds(w, g.paced_s)) {
        Some(kinds) => {
            let total: f64 = kinds.iter().map(|k| k.1).sum();
            for (kind, name) in WAIT_SHARES {
                let x = kinds.iter().find(|k| k.0 == kind).map_or(0.0, |k| k.1);
                match out.iter_mut().find(|s| s.name == name) {
                    Some(s) => s.fraction += f(off * x / total),
                    None => out.push(Share {
                        name,
                        fraction: f(off * x / total),
                    }),
                }
            }
        }
        None => {
            out.push(Share {
                name: "off cpu",
                fraction: f(g.other_s),
            });
            if let Some(io) = g.blkio_s {
                out.push(Share {
                    name: "device",
                    fraction: f(io),
                });
            }
        }
    }
    out
}

/// The sampled seconds of each kind of wait off a CPU, the clients' pacing (asleep in a timer,
/// counted exactly apart) taken out of their sleep; `None` without such samples.
fn off_cpu_seconds(w: &GroupWaits, paced_s: Option<f64>) -> Option<Vec<(&'static str, f64)>> {
    let kinds: Vec<(&str, f64)> = WAIT_SHARES
        .iter()
        .map(|&(kind, _)| {
            let x = w.seconds.get(kind).copied().unwrap_or(0.0);
            let x = if kind == "sleep" {
                (x - paced_s.unwrap_or(0.0)).max(0.0)
            } else {
                x
            };
            (kind, x)
        })
        .collect();
    (kinds.iter().map(|k| k.1).sum::<f64>() > 0.0).then_some(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(v: &[(&'static str, f64)]) -> Vec<Share> {
        v.iter()
            .map(|&(name, fraction)| Share { name, fraction })
            .collect()
    }

    #[test]
    fn decides_one_two_or_none() {
        let r = RULE;
        assert_eq!(
            r.decide(&shares(&[("cpu", 0.7), ("io", 0.2), ("lock", 0.1)])),
            Bound::One("cpu")
        );
        assert_eq!(
            r.decide(&shares(&[("cpu", 0.36), ("io", 0.34), ("lock", 0.1)])),
            Bound::Two("cpu", "io")
        );
        assert_eq!(
            r.decide(&shares(&[("a", 0.3), ("b", 0.25), ("c", 0.25), ("d", 0.2)])),
            Bound::None
        );
        assert_eq!(r.decide(&[]), Bound::None);
    }

    #[test]
    fn repeats_vote() {
        let cpu = shares(&[("cpu", 0.7), ("io", 0.2)]);
        let io = shares(&[("cpu", 0.2), ("io", 0.7)]);
        assert_eq!(
            RULE.vote(&[cpu.clone(), cpu.clone(), io.clone()]),
            Bound::One("cpu")
        );
        assert_eq!(RULE.vote(&[cpu.clone(), io.clone()]), Bound::Unstable);
        // Close shares that swap, or one repeat that finds one of them far enough ahead: the
        // pair, the larger on average first.
        let both = shares(&[("cpu", 0.40), ("io", 0.36), ("lock", 0.1)]);
        let swapped = shares(&[("io", 0.40), ("cpu", 0.37), ("lock", 0.1)]);
        let ahead = shares(&[("cpu", 0.48), ("io", 0.34), ("lock", 0.1)]);
        assert_eq!(
            RULE.vote(&[both.clone(), swapped.clone()]),
            Bound::Two("cpu", "io")
        );
        assert_eq!(
            RULE.vote(&[both.clone(), ahead.clone(), ahead, swapped]),
            Bound::Two("cpu", "io")
        );
        assert!(matches!(
            RULE.vote(&[both.clone(), both]),
            Bound::Two("cpu", "io")
        ));
    }

    #[test]
    fn a_groups_shares_add_up() {
        let g = GroupTime {
            threads: 2,
            busy: 2,
            wall_s: 10.0,
            cpu_s: 6.0,
            runq_s: 1.0,
            blkio_s: Some(2.0),
            paced_s: None,
            other_s: 1.0,
            blkio_dropped: 0,
        };
        let s = shares_of(&g, Some(1.5), None);
        let total: f64 = s.iter().map(|s| s.fraction).sum();
        assert!((total - 1.0).abs() < 1e-9, "{s:?}");
        assert_eq!(RULE.decide(&s), Bound::One("engine cpu"));
    }

    #[test]
    fn waits_split_the_time_off_a_cpu() {
        let g = GroupTime {
            threads: 4,
            busy: 4,
            wall_s: 10.0,
            cpu_s: 2.0,
            runq_s: 0.5,
            blkio_s: Some(0.5),
            paced_s: None,
            other_s: 7.0,
            blkio_dropped: 0,
        };
        let mut w = GroupWaits {
            samples: 500,
            ..GroupWaits::default()
        };
        w.seconds.insert("cpu".into(), 2.5);
        w.seconds.insert("futex".into(), 6.0);
        w.seconds.insert("io".into(), 1.5);
        let s = shares_of(&g, None, Some(&w));
        let get = |n: &str| s.iter().find(|x| x.name == n).unwrap().fraction;
        assert!((get("locks") - 0.75 * 6.0 / 7.5).abs() < 1e-9, "{s:?}");
        assert!((get("device") - 0.75 * 1.5 / 7.5).abs() < 1e-9, "{s:?}");
        let total: f64 = s.iter().map(|s| s.fraction).sum();
        assert!((total - 1.0).abs() < 1e-9, "{s:?}");
        assert_eq!(RULE.decide(&s), Bound::One("locks"));
        let b = RULE.decide(&s);
        assert!((RULE.margin(&b, &s) - (0.6 - 0.2)).abs() < 1e-9);
    }
}
