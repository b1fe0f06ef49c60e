//! fathom's typed engine settings (cache size, compaction style, O_DIRECT, WAL, sync): each
//! engine lists the ones it accepts, so a typo is an error naming what is accepted.

use std::collections::BTreeMap;

pub type Settings = BTreeMap<String, String>;

/// One setting an engine accepts.
pub struct SettingSpec {
    pub name: &'static str,
    pub default: &'static str,
    /// What values are accepted, e.g. `size (64m)` or `leveled|universal`.
    pub values: &'static str,
    pub help: &'static str,
}

/// Fails on a setting the engine does not list.
pub fn validate(engine: &str, specs: &[SettingSpec], given: &Settings) -> anyhow::Result<()> {
    for key in given.keys() {
        if !specs.iter().any(|s| s.name == key) {
            let names: Vec<_> = specs.iter().map(|s| s.name).collect();
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

/// The value of a setting, or its default.
pub fn get<'a>(specs: &'a [SettingSpec], given: &'a Settings, name: &str) -> &'a str {
    given
        .get(name)
        .map(String::as_str)
        .or_else(|| specs.iter().find(|s| s.name == name).map(|s| s.default))
        .unwrap_or("")
}

/// A setting read as a boolean (`true/false`, `on/off`, `1/0`, `yes/no`).
pub fn get_bool(specs: &[SettingSpec], given: &Settings, name: &str) -> anyhow::Result<bool> {
    match get(specs, given, name).to_ascii_lowercase().as_str() {
        "true" | "on" | "1" | "yes" => Ok(true),
        "false" | "off" | "0" | "no" => Ok(false),
        other => {
            anyhow::bail!("setting `{name}`: `{other}` is not a boolean (expected true or false)")
        }
    }
}

/// A setting read as a byte size (`64m`, `1g`).
pub fn get_size(specs: &[SettingSpec], given: &Settings, name: &str) -> anyhow::Result<u64> {
    fathom_core::units::parse_size(get(specs, given, name))
        .map_err(|e| anyhow::anyhow!("setting `{name}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[SettingSpec] = &[SettingSpec {
        name: "wal",
        default: "true",
        values: "bool",
        help: "",
    }];

    #[test]
    fn unknown_settings_name_the_accepted_ones() {
        let given = Settings::from([("wall".to_string(), "on".to_string())]);
        let err = validate("rocksdb", SPECS, &given).unwrap_err().to_string();
        assert!(
            err.contains("no setting `wall`") && err.contains("accepts: wal"),
            "{err}"
        );
    }

    #[test]
    fn defaults_and_booleans() {
        let none = Settings::new();
        assert!(get_bool(SPECS, &none, "wal").unwrap());
        let bad = Settings::from([("wal".to_string(), "maybe".to_string())]);
        assert!(get_bool(SPECS, &bad, "wal")
            .unwrap_err()
            .to_string()
            .contains("not a boolean"));
    }
}
