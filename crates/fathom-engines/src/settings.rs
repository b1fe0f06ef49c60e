//! fathom's typed engine settings (cache size, compaction style, O_DIRECT, WAL, sync): each
//! engine declares them as one struct of knobs (`fathom_api::knobs`), so `fathom engines`
//! lists them from it and a typo is an error naming what is accepted.

use fathom_api::knobs::{self, Knobs};
use std::collections::BTreeMap;

pub use fathom_api::knobs::{specs, Size, Spec as SettingSpec, Switch};

pub type Settings = BTreeMap<String, String>;

/// An engine's settings as its entry knows them, from its settings struct (`of::<T>()`): listed
/// with their defaults and help (`fathom engines`), and checked, names and values, where a
/// setup is resolved, so a wrong value is an error before anything runs rather than when the
/// engine opens.
#[derive(Clone, Copy)]
pub struct SettingsOf {
    pub specs: fn() -> Vec<SettingSpec>,
    /// Fails on a setting the engine (named) does not list, or a value it cannot read.
    pub check: fn(&str, &Settings) -> anyhow::Result<()>,
}

impl SettingsOf {
    /// An engine with no settings.
    pub const NONE: SettingsOf = SettingsOf {
        specs: Vec::new,
        check: |engine, given| validate(engine, &[], given),
    };
}

/// The settings of an engine whose settings struct is `T`.
pub const fn of<T: Knobs>() -> SettingsOf {
    SettingsOf {
        specs: specs::<T>,
        check: check::<T>,
    }
}

/// Every setting given is one `T` lists, and its value reads as `T` reads it.
fn check<T: Knobs>(engine: &str, given: &Settings) -> anyhow::Result<()> {
    validate(engine, &specs::<T>(), given)?;
    read::<T>(given).map(drop)
}

/// Fails on a setting the engine does not list.
pub fn validate(engine: &str, specs: &[SettingSpec], given: &Settings) -> anyhow::Result<()> {
    for key in given.keys() {
        if !specs.iter().any(|s| &s.name == key) {
            let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
            anyhow::bail!(
                "engine `{engine}` has no setting `{key}`; it accepts: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    Ok(())
}

/// Fails when a memory setting asks for more than the host has: RocksDB's HyperClockCache
/// maps its table up front and aborts the process when the mapping fails.
pub fn within_memory(setting: &str, bytes: u64) -> anyhow::Result<()> {
    // SAFETY: sysconf has no memory-safety preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let host = (pages.max(0) as u64).saturating_mul(page.max(0) as u64);
    if host > 0 && bytes > host {
        anyhow::bail!(
            "setting `{setting}`: {bytes} bytes is more than this host's memory ({host} bytes)"
        );
    }
    Ok(())
}

/// The engine's typed settings: the given ones over the defaults.
pub fn read<T: Knobs>(given: &Settings) -> anyhow::Result<T> {
    knobs::read("setting", given)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// An engine's settings, for the tests.
    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, default)]
    struct Demo {
        /// write-ahead log on writes
        wal: Switch,
    }

    impl Default for Demo {
        fn default() -> Self {
            Demo {
                wal: Switch::new("true"),
            }
        }
    }

    #[test]
    fn unknown_settings_name_the_accepted_ones() {
        let given = Settings::from([("wall".to_string(), "on".to_string())]);
        let err = validate("rocksdb", &specs::<Demo>(), &given)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no setting `wall`") && err.contains("accepts: wal"),
            "{err}"
        );
    }

    /// A setup's values are read where it is checked, before the engine opens.
    #[test]
    fn a_wrong_value_is_refused_where_the_setup_is_checked() {
        let demo = of::<Demo>();
        let bad = Settings::from([("wal".to_string(), "maybe".to_string())]);
        let err = (demo.check)("demo", &bad).unwrap_err().to_string();
        assert!(err.contains("`wal`: expected on or off"), "{err}");
        let good = Settings::from([("wal".to_string(), "off".to_string())]);
        (demo.check)("demo", &good).unwrap();
        assert_eq!((demo.specs)().len(), 1);
        assert!((SettingsOf::NONE.check)("null", &good).is_err());
    }

    #[test]
    fn defaults_and_booleans() {
        assert!(read::<Demo>(&Settings::new()).unwrap().wal.value);
        let bad = Settings::from([("wal".to_string(), "maybe".to_string())]);
        let err = read::<Demo>(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with("setting `wal`: expected on or off"),
            "{err}"
        );
    }
}
