//! Workload parameters (`--param key=value`): each workload declares them as one struct of
//! knobs (`fathom_api::knobs`), so its doc comments are the help, its `Default` the defaults,
//! and an unknown or malformed parameter is an error naming it and what is accepted.

use fathom_api::knobs::{self, Knobs};
use fathom_api::units;
use std::collections::BTreeMap;

pub use fathom_api::knobs::{record, specs, Size, Span, Spec as ParamSpec, Switch};

/// A workload's parameters, with the one `--duration` sets: the length of every timed step.
/// Implemented by `timed!`, which names the field so that a name without its field, or a
/// field that is not a `Span`, does not compile.
pub trait Timed {
    const DURATION: &'static str;
}

/// `timed!(Params, field)`: `--duration` sets `Params`' `field`, a `Span`.
macro_rules! timed {
    ($params:ty, $field:ident) => {
        impl $crate::params::Timed for $params {
            const DURATION: &'static str = {
                const _: fn(&$params) -> &$crate::params::Span = |p| &p.$field;
                stringify!($field)
            };
        }
    };
}
pub(crate) use timed;

/// Given parameters, as `key=value` text.
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: BTreeMap<String, String>,
}

impl Params {
    pub fn new(values: BTreeMap<String, String>) -> Self {
        Params { values }
    }

    /// Parses `key=value` strings.
    pub fn parse(pairs: &[String]) -> anyhow::Result<Params> {
        let values = units::parse_key_values(pairs, "parameter").map_err(anyhow::Error::msg)?;
        Ok(Params { values })
    }

    /// The parameters as given (defaults not filled in).
    pub fn given(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.values.insert(key.to_string(), value.into());
    }

    /// Fails on a parameter the workload does not list.
    pub fn check(&self, workload: &str, specs: &[ParamSpec]) -> anyhow::Result<()> {
        for k in self.values.keys() {
            if !specs.iter().any(|s| &s.name == k) {
                let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
                anyhow::bail!(
                    "workload `{workload}` has no parameter `{k}`; it takes: {}",
                    names.join(", ")
                );
            }
        }
        Ok(())
    }

    /// The workload's typed parameters: the given ones over the defaults.
    pub fn read<T: Knobs>(&self, workload: &str) -> anyhow::Result<T> {
        self.check(workload, &specs::<T>())?;
        knobs::read("parameter", &self.values)
    }
}

/// Resolves a `seed` parameter: as given, or for 0 one from the clock (the caller records it).
pub fn seed_or_clock(seed: u64) -> u64 {
    if seed != 0 {
        return seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_secs())
}

/// A seed for one client thread of one step, derived from the run's seed.
pub fn thread_seed(seed: u64, step: usize, thread: usize) -> u64 {
    seed.wrapping_mul(1_000_003)
        .wrapping_add((step * 1000 + thread) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_parameters_name_the_accepted_ones() {
        let spec = |name: &str| ParamSpec {
            name: name.into(),
            default: String::new(),
            values: String::new(),
            help: String::new(),
        };
        let p = Params::parse(&["num_kyes=5".into()]).unwrap();
        let e = p
            .check("dbbench", &[spec("num_keys"), spec("seed")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no parameter `num_kyes`") && e.contains("takes: num_keys, seed"),
            "{e}"
        );
        assert!(Params::parse(&["oops".into()])
            .unwrap_err()
            .to_string()
            .contains("not key=value"));
    }
}
