//! Workload parameters (`--param key=value`): each workload lists the ones it takes, with
//! defaults, so an unknown or malformed one is an error that says what is accepted.

use fathom_core::units;
use std::collections::BTreeMap;
use std::time::Duration;

/// One parameter a workload takes.
pub struct ParamSpec {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

/// Given parameters, checked against a workload's specs.
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
            if !specs.iter().any(|s| s.name == k) {
                let names: Vec<_> = specs.iter().map(|s| s.name).collect();
                anyhow::bail!(
                    "workload `{workload}` has no parameter `{k}`; it takes: {}",
                    names.join(", ")
                );
            }
        }
        Ok(())
    }

    /// The value in force: given, or the spec's default.
    pub fn raw<'a>(&'a self, specs: &'a [ParamSpec], name: &str) -> &'a str {
        self.values
            .get(name)
            .map(String::as_str)
            .or_else(|| specs.iter().find(|s| s.name == name).map(|s| s.default))
            .unwrap_or_else(|| panic!("parameter `{name}` has no spec"))
    }

    pub fn u64(&self, specs: &[ParamSpec], name: &str) -> anyhow::Result<u64> {
        let raw = self.raw(specs, name);
        raw.replace('_', "")
            .parse()
            .map_err(|_| anyhow::anyhow!("parameter `{name}`: `{raw}` is not a whole number"))
    }

    pub fn f64(&self, specs: &[ParamSpec], name: &str) -> anyhow::Result<f64> {
        let raw = self.raw(specs, name);
        raw.parse()
            .map_err(|_| anyhow::anyhow!("parameter `{name}`: `{raw}` is not a number"))
    }

    pub fn size(&self, specs: &[ParamSpec], name: &str) -> anyhow::Result<u64> {
        units::parse_size(self.raw(specs, name))
            .map_err(|e| anyhow::anyhow!("parameter `{name}`: {e}"))
    }

    /// The `seed` parameter: as given, or for 0 one from the clock (the caller records it).
    pub fn seed(&self, specs: &[ParamSpec]) -> anyhow::Result<u64> {
        let seed = self.u64(specs, "seed")?;
        Ok(if seed == 0 {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_secs())
        } else {
            seed
        })
    }

    /// A switch: on/off, true/false, 1/0, yes/no.
    pub fn on_off(&self, specs: &[ParamSpec], name: &str) -> anyhow::Result<bool> {
        match self.raw(specs, name) {
            "on" | "true" | "1" | "yes" => Ok(true),
            "off" | "false" | "0" | "no" => Ok(false),
            other => anyhow::bail!("parameter `{name}`: expected on or off, got `{other}`"),
        }
    }

    pub fn duration(&self, specs: &[ParamSpec], name: &str) -> anyhow::Result<Duration> {
        units::parse_duration(self.raw(specs, name))
            .map_err(|e| anyhow::anyhow!("parameter `{name}`: {e}"))
    }

    /// Every spec with the value in force.
    pub fn resolved(&self, specs: &[ParamSpec]) -> BTreeMap<String, String> {
        specs
            .iter()
            .map(|s| (s.name.to_string(), self.raw(specs, s.name).to_string()))
            .collect()
    }
}

/// A seed for one client thread of one step, derived from the run's seed.
pub fn thread_seed(seed: u64, step: usize, thread: usize) -> u64 {
    seed.wrapping_mul(1_000_003)
        .wrapping_add((step * 1000 + thread) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[ParamSpec {
        name: "num_keys",
        default: "1000",
        help: "",
    }];

    #[test]
    fn unknown_and_malformed() {
        let p = Params::parse(&["num_kyes=5".into()]).unwrap();
        let e = p.check("dbbench", SPECS).unwrap_err().to_string();
        assert!(
            e.contains("no parameter `num_kyes`") && e.contains("takes: num_keys"),
            "{e}"
        );
        assert!(Params::parse(&["oops".into()])
            .unwrap_err()
            .to_string()
            .contains("not key=value"));
        let p = Params::parse(&["num_keys=lots".into()]).unwrap();
        assert!(p
            .u64(SPECS, "num_keys")
            .unwrap_err()
            .to_string()
            .contains("not a whole number"));
    }

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(Params::default().u64(SPECS, "num_keys").unwrap(), 1000);
        let p = Params::parse(&["num_keys=2_000".into()]).unwrap();
        assert_eq!(p.u64(SPECS, "num_keys").unwrap(), 2000);
    }
}
