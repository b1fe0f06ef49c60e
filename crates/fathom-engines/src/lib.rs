//! fathom-engines: the kv engines fathom can open, each one module plus one line in
//! `ENGINES`, with the typed settings each accepts and where its options syntax is documented.

#[cfg(feature = "lmdb")]
pub mod lmdb;
pub mod null;
#[cfg(feature = "rocksdb")]
pub mod rocksdb;
pub mod settings;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(feature = "wiredtiger")]
pub mod wiredtiger;

use fathom_core::kv::KvEngine;
use settings::{SettingSpec, Settings};
use std::path::PathBuf;

/// What opening an engine takes.
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    /// Directory the database lives in (created if missing).
    pub data_dir: PathBuf,
    /// The engine's own options string, in its own syntax.
    pub options: String,
    /// fathom's typed settings for the engine, validated against its `settings` list.
    pub settings: Settings,
}

/// One engine fathom can run.
pub struct EngineEntry {
    pub name: &'static str,
    pub family: &'static str,
    pub about: &'static str,
    /// Where the syntax of the engine's options string is documented.
    pub options_doc: &'static str,
    /// What separates items in the options string (`;` for RocksDB, `,` for WiredTiger); a
    /// `--setup @FILE` holds one item per line, joined with it.
    pub separator: &'static str,
    pub settings: &'static [SettingSpec],
    /// The exact version of the engine this build links.
    pub version: fn() -> anyhow::Result<String>,
    pub open: fn(&EngineConfig) -> anyhow::Result<Box<dyn KvEngine>>,
}

/// Every engine this build has.
pub static ENGINES: &[EngineEntry] = &[
    #[cfg(feature = "rocksdb")]
    rocksdb::ENTRY,
    #[cfg(feature = "wiredtiger")]
    wiredtiger::ENTRY,
    #[cfg(feature = "lmdb")]
    lmdb::ENTRY,
    #[cfg(feature = "sqlite")]
    sqlite::ENTRY,
    null::ENTRY,
];

/// Looks an engine up by name.
pub fn find(name: &str) -> anyhow::Result<&'static EngineEntry> {
    ENGINES.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<_> = ENGINES.iter().map(|e| e.name).collect();
        anyhow::anyhow!(
            "unknown engine `{name}`; this build has: {}",
            names.join(", ")
        )
    })
}

/// Validates settings and opens the engine.
pub fn open(entry: &EngineEntry, config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    settings::validate(entry.name, entry.settings, &config.settings)?;
    std::fs::create_dir_all(&config.data_dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot create data directory {}: {e}",
            config.data_dir.display()
        )
    })?;
    (entry.open)(config)
}
