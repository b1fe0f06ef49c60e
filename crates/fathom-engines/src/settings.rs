//! fathom's typed engine settings (cache size, compaction style, O_DIRECT, WAL, sync): each
//! engine declares them as one struct of knobs (`fathom_core::knobs`), so `fathom engines`
//! lists them from it and a typo is an error naming what is accepted.

use fathom_core::knobs::{self, Knobs};
use std::collections::BTreeMap;

pub use fathom_core::knobs::{specs, Size, Spec as SettingSpec, Switch};

pub type Settings = BTreeMap<String, String>;

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
