//! A phase's or a client group's rate as a workload file writes it (`rate = 500`, a list of
//! rates, steps or a ramp), read into a `Rate` and, once the phase's length is known, turned
//! into the driver's schedule of arrivals.

use fathom_api::pace::{Piece, Schedule};
use std::time::Duration;

/// How many operations per second a phase or group is meant to start.
#[derive(Clone, Debug, PartialEq)]
pub enum Rate {
    /// One rate throughout.
    Fixed(f64),
    /// Each rate for an equal share of the phase's duration, in order.
    List(Vec<f64>),
    /// `start`, then `step` more every `every`, up to `end` (then held), or until the phase
    /// ends.
    Steps {
        start: f64,
        step: f64,
        every: Duration,
        end: Option<f64>,
    },
    /// From `from` to `to`, linearly over the phase's duration.
    Ramp { from: f64, to: f64 },
}

/// What a rate may be written as, for errors.
pub const RATE_FORMS: &str = "a rate in operations per second: a number, a list of numbers, \
     { from = A, to = B } (a ramp) or { start = A, step = B, every = \"10s\" } (steps; `end` \
     optional)";

impl Rate {
    /// Reads a rate as the file wrote it; the error says what was expected.
    pub fn read(v: &toml::Value) -> Result<Rate, String> {
        let number = |v: &toml::Value, what: &str| -> Result<f64, String> {
            let n = match v {
                toml::Value::Integer(i) => *i as f64,
                toml::Value::Float(f) => *f,
                _ => return Err(format!("{what}: a number of operations per second")),
            };
            if n.is_finite() && n > 0.0 {
                Ok(n)
            } else {
                Err(format!("{what}: above 0 operations per second"))
            }
        };
        match v {
            toml::Value::Integer(_) | toml::Value::Float(_) => number(v, "rate").map(Rate::Fixed),
            toml::Value::Array(a) if !a.is_empty() => a
                .iter()
                .map(|x| number(x, "each rate of the list"))
                .collect::<Result<_, _>>()
                .map(Rate::List),
            toml::Value::Table(t) => {
                let mut keys: Vec<&str> = t.keys().map(String::as_str).collect();
                keys.sort_unstable();
                let get = |k: &str| number(&t[k], k);
                match keys.as_slice() {
                    ["from", "to"] => Ok(Rate::Ramp {
                        from: get("from")?,
                        to: get("to")?,
                    }),
                    ["end", "every", "start", "step"] | ["every", "start", "step"] => {
                        let every = match &t["every"] {
                            toml::Value::String(s) => fathom_api::units::parse_duration(s)?,
                            _ => return Err("every: a length of time such as \"10s\"".into()),
                        };
                        if every.is_zero() {
                            return Err("every: longer than 0s".into());
                        }
                        Ok(Rate::Steps {
                            start: get("start")?,
                            step: get("step")?,
                            every,
                            end: t.get("end").map(|_| get("end")).transpose()?,
                        })
                    }
                    _ => Err(RATE_FORMS.into()),
                }
            }
            _ => Err(RATE_FORMS.into()),
        }
    }

    /// Whether the rate changes with the phase's time and so needs its duration to be laid out
    /// (a list or a ramp; steps without an end).
    pub fn needs_duration(&self) -> bool {
        match self {
            Rate::Fixed(_) => false,
            Rate::List(_) | Rate::Ramp { .. } => true,
            Rate::Steps { end, .. } => end.is_none(),
        }
    }

    /// The schedule over a phase that runs for `duration` after its warmup (`None`: counted,
    /// where only a fixed rate or bounded steps are allowed).
    pub fn schedule(&self, duration: Option<Duration>) -> Schedule {
        let seconds = duration.map_or(0.0, |d| d.as_secs_f64());
        let flat = |seconds: f64, rate: f64| Piece {
            seconds,
            from: rate,
            to: rate,
        };
        let pieces = match self {
            Rate::Fixed(r) => vec![flat(0.0, *r)],
            Rate::List(rates) => {
                let each = seconds / rates.len() as f64;
                rates.iter().map(|r| flat(each, *r)).collect()
            }
            Rate::Ramp { from, to } => vec![Piece {
                seconds,
                from: *from,
                to: *to,
            }],
            Rate::Steps {
                start,
                step,
                every,
                end,
            } => {
                let every = every.as_secs_f64();
                let count = match end {
                    Some(end) => ((end - start) / step).ceil().max(0.0) as usize + 1,
                    None => (seconds / every).ceil().max(1.0) as usize,
                };
                (0..count.min(100_000))
                    .map(|k| {
                        let r = start + step * k as f64;
                        flat(every, end.map_or(r, |e| r.min(e)))
                    })
                    .collect()
            }
        };
        Schedule { pieces }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Rate, String> {
        let t: toml::Table = toml::from_str(&format!("rate = {text}")).unwrap();
        Rate::read(&t["rate"])
    }

    #[test]
    fn every_form_reads_and_lays_out() {
        let min = Some(Duration::from_secs(60));
        assert_eq!(read("500").unwrap().schedule(min).at(30.0), 500.0);
        let list = read("[100, 200, 400]").unwrap();
        assert_eq!(list.schedule(min).at(25.0), 200.0);
        assert_eq!(list.schedule(min).at(59.0), 400.0);
        let ramp = read("{ from = 100, to = 700 }").unwrap();
        assert!((ramp.schedule(min).at(30.0) - 400.0).abs() < 1e-9);
        let steps = read("{ start = 100, step = 100, every = \"10s\" }").unwrap();
        assert_eq!(steps.schedule(min).at(35.0), 400.0);
        assert_eq!(steps.schedule(min).pieces.len(), 6);
        let capped = read("{ start = 100, step = 100, every = \"10s\", end = 250 }").unwrap();
        assert!(!capped.needs_duration());
        assert_eq!(capped.schedule(None).at(15.0), 200.0);
        assert_eq!(capped.schedule(None).at(1e4), 250.0);
    }

    #[test]
    fn bad_rates_say_what_was_expected() {
        for (text, wanted) in [
            ("0", "above 0"),
            ("-5", "above 0"),
            ("\"fast\"", "a number, a list"),
            ("[]", "a number, a list"),
            ("[100, \"x\"]", "each rate of the list"),
            ("{ from = 1 }", "a ramp"),
            ("{ from = 1, to = 0 }", "to: above 0"),
            (
                "{ start = 1, step = 1, every = 10 }",
                "every: a length of time",
            ),
            (
                "{ start = 1, step = 1, every = \"soon\" }",
                "not a duration",
            ),
        ] {
            let e = read(text).unwrap_err();
            assert!(e.contains(wanted), "{text}: {e}");
        }
    }
}
