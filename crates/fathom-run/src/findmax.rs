//! `--find-max TARGET` (`fathom findmax`): the highest arrival rate a timed step sustains while
//! meeting a latency or failure target. The step runs once closed loop to find its capacity,
//! then open loop at half of it, doubling or halving until one rate meets the target and
//! another misses it, then at the geometric middle of the two until they are within
//! `PRECISION` of each other. Each probe is a step of the run, saved as it finishes.

use fathom_core::recorder::Latency;
use fathom_core::result::{Probe, StepSummary};
use fathom_core::units::parse_duration;

/// The search stops once the rate that met and the one that missed are this close.
pub const PRECISION: f64 = 0.02;
/// Open-loop probes at most, after the closed-loop one.
pub const MAX_PROBES: usize = 16;
/// A probe that finished fewer operations than this share of its arrivals fell behind: the
/// engine did not sustain the rate, whatever its latency.
pub const KEPT_UP: f64 = 0.95;

/// A run's search: its target, and how its probes' arrivals come (as `--arrivals` and
/// `--queue` say).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FindMax {
    pub target: Target,
    pub spacing: fathom_core::pace::Spacing,
    pub shared: bool,
}

impl FindMax {
    /// Open-loop arrivals at `rate`, latency from each one's intended start.
    pub fn open_loop(&self, rate: f64) -> fathom_core::driver::OpenLoop {
        fathom_core::driver::OpenLoop {
            ops_per_sec: rate,
            spacing: self.spacing,
            shared: self.shared,
            latency_from: fathom_core::driver::LatencyFrom::Arrival,
        }
    }
}

/// What a probe must meet, every condition of it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Target {
    /// As written.
    pub text: String,
    pub conditions: Vec<Condition>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Condition {
    /// A percentile of the named kind's latency (all kinds together when `None`) at most so
    /// many microseconds.
    Latency {
        kind: Option<String>,
        percentile: String,
        at_most_us: f64,
    },
    /// Failed operations at most this share of all.
    Failed { at_most: f64 },
}

const PERCENTILES: &[&str] = &["p50", "p75", "p95", "p99", "p99.9", "p99.99", "max"];

fn percentile(l: &Latency, name: &str) -> f64 {
    match name {
        "p50" => l.p50,
        "p75" => l.p75,
        "p95" => l.p95,
        "p99" => l.p99,
        "p99.9" => l.p99_9,
        "p99.99" => l.p99_99,
        _ => l.max,
    }
}

impl Target {
    /// Reads `p99<=5ms`, `READ:p99.9<=20ms`, `failed<=1%`, several joined by commas.
    pub fn parse(text: &str) -> Result<Target, String> {
        let expected =
            "conditions such as p99<=5ms, READ:p99.9<=20ms or failed<=1%, joined by commas";
        let mut conditions = Vec::new();
        for part in text.split(',').map(str::trim) {
            let Some((what, limit)) = part.split_once("<=") else {
                return Err(format!("`{part}`: expected {expected}"));
            };
            let (what, limit) = (what.trim(), limit.trim());
            if what == "failed" {
                let share = limit
                    .strip_suffix('%')
                    .and_then(|p| p.trim().parse::<f64>().ok())
                    .filter(|p| (0.0..=100.0).contains(p))
                    .ok_or_else(|| format!("`{part}`: a share such as 1% after failed<="))?;
                conditions.push(Condition::Failed {
                    at_most: share / 100.0,
                });
                continue;
            }
            let (kind, pct) = match what.rsplit_once(':') {
                Some((k, p)) => (Some(k.trim().to_string()), p.trim()),
                None => (None, what),
            };
            if !PERCENTILES.contains(&pct) {
                return Err(format!(
                    "`{part}`: a percentile of {} before <=",
                    PERCENTILES.join(", ")
                ));
            }
            let at_most = parse_duration(limit).map_err(|e| format!("`{part}`: {e}"))?;
            conditions.push(Condition::Latency {
                kind,
                percentile: pct.to_string(),
                at_most_us: at_most.as_secs_f64() * 1e6,
            });
        }
        Ok(Target {
            text: text.to_string(),
            conditions,
        })
    }

    /// Checks the target's operation kinds against those the step records.
    pub fn check_kinds(&self, kinds: &[&str]) -> Result<(), String> {
        for c in &self.conditions {
            if let Condition::Latency { kind: Some(k), .. } = c {
                if !kinds.contains(&k.as_str()) {
                    return Err(format!(
                        "--find-max names operation {k}, which the step does not run; it runs {}",
                        kinds.join(", ")
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether a probe at `rate` met the target, and what it measured.
    pub fn judge(&self, s: &StepSummary, rate: Option<f64>) -> (bool, String) {
        let mut met = true;
        let mut said = Vec::new();
        for c in &self.conditions {
            match c {
                Condition::Latency {
                    kind,
                    percentile: p,
                    at_most_us,
                } => {
                    let latency = match kind {
                        Some(k) => s.by_op.get(k).map(|o| &o.latency_us),
                        None => Some(&s.latency_us),
                    };
                    let v = latency.map_or(f64::INFINITY, |l| percentile(l, p));
                    let ok = v <= *at_most_us;
                    met &= ok;
                    let who = kind.as_deref().map_or(String::new(), |k| format!("{k} "));
                    let sign = if ok { "<=" } else { ">" };
                    said.push(format!(
                        "{who}{p} {:.2} ms {sign} {:.2} ms",
                        v / 1e3,
                        at_most_us / 1e3
                    ));
                }
                Condition::Failed { at_most } => {
                    let share = s.failed as f64 / (s.ops + s.failed).max(1) as f64;
                    let ok = share <= *at_most;
                    met &= ok;
                    said.push(format!("failed {:.2}%", share * 100.0));
                }
            }
        }
        if let Some(r) = rate {
            let kept = s.ops_per_sec / r;
            let ok = kept >= KEPT_UP;
            met &= ok;
            said.push(format!("kept up {:.1}%", kept * 100.0));
        }
        (met, said.join("; "))
    }
}

/// Where a search stands: the highest rate that met the target and the lowest that missed.
#[derive(Debug, Default)]
pub struct Search {
    pub met: Option<f64>,
    pub missed: Option<f64>,
    pub probes: usize,
}

impl Search {
    /// The rate of the next probe after the closed-loop capacity `capacity`, or after the last
    /// probe at `rate` (met or not); `None` when the search is done.
    pub fn next(&mut self, last: Option<(f64, bool)>, capacity: f64) -> Option<f64> {
        match last {
            None => return Some((capacity / 2.0).max(1.0)),
            Some((rate, true)) => self.met = Some(self.met.map_or(rate, |m| m.max(rate))),
            Some((rate, false)) => self.missed = Some(self.missed.map_or(rate, |m| m.min(rate))),
        }
        self.probes += 1;
        if self.probes >= MAX_PROBES {
            return None;
        }
        match (self.met, self.missed) {
            (Some(m), None) => Some(m * 2.0),
            (None, Some(x)) if x / 2.0 >= 1.0 => Some(x / 2.0),
            (None, _) => None,
            (Some(m), Some(x)) if x / m > 1.0 + PRECISION => Some((m * x).sqrt()),
            (Some(_), Some(_)) => None,
        }
    }
}

/// A rate as a probe's step name carries it: whole operations per second, or two decimals
/// below ten.
pub fn rate_name(rate: f64) -> String {
    if rate >= 10.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate:.2}")
    }
}

/// A probe's record on its step.
pub fn probe(step: &str, target: &Target, s: &StepSummary, rate: Option<f64>) -> Probe {
    let (met, judged) = target.judge(s, rate);
    Probe {
        step: step.to_string(),
        rate,
        target: target.text.clone(),
        met: rate.is_some() && met,
        judged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_and_bad_ones_say_what_is_expected() {
        let t = Target::parse("p99<=5ms, READ:p99.9<=20ms,failed<=1%").unwrap();
        assert_eq!(t.conditions.len(), 3);
        assert_eq!(
            t.conditions[1],
            Condition::Latency {
                kind: Some("READ".into()),
                percentile: "p99.9".into(),
                at_most_us: 20_000.0
            }
        );
        for (bad, wanted) in [
            ("p99<5ms", "expected conditions"),
            ("p98<=5ms", "a percentile of"),
            ("p99<=soon", "not a duration"),
            ("failed<=lots", "a share such as 1%"),
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert!(e.contains(wanted), "{bad}: {e}");
        }
    }

    /// A simulated engine that meets the target below 1000 ops/s: the search ends within
    /// PRECISION of it, from any capacity.
    #[test]
    fn the_search_closes_in_on_the_breaking_rate() {
        for capacity in [300.0, 1100.0, 50_000.0] {
            let mut s = Search::default();
            let mut rate = s.next(None, capacity);
            while let Some(r) = rate {
                rate = s.next(Some((r, r <= 1000.0)), capacity);
            }
            let (m, x) = (s.met.unwrap(), s.missed.unwrap());
            assert!(m <= 1000.0 && x > 1000.0, "{capacity}: {m} {x}");
            assert!(x / m <= 1.0 + PRECISION, "{capacity}: {m} {x}");
            assert!(s.probes < MAX_PROBES, "{capacity}: {} probes", s.probes);
        }
    }

    #[test]
    fn a_probe_that_falls_behind_misses_whatever_its_latency() {
        let t = Target::parse("p99<=1s").unwrap();
        let s = StepSummary {
            ops_per_sec: 800.0,
            ..Default::default()
        };
        assert!(!t.judge(&s, Some(1000.0)).0);
        assert!(t.judge(&s, Some(820.0)).0);
    }
}
