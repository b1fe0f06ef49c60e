//! Embedded RocksDB: the build compiled into fathom (`bundled`, the `bundled-rocksdb` feature)
//! or a release's shared library through its C API (`capi`: `--set version=X`, `--set
//! library=PATH`, and the default of a build without the bundled one). A setup is RocksDB's own
//! options string, parsed by RocksDB itself, on top of fathom's typed settings; statistics come
//! from RocksDB's statistics string, and the options it really used from the OPTIONS file it
//! writes. With
//! `transactions=optimistic` the database is opened as an OptimisticTransactionDB (plain reads
//! and writes still go straight to the base database; transactions detect conflicts at commit).

use crate::settings::{self, Size, Switch};
use crate::{EngineConfig, EngineEntry};
use fathom_api::capability::{Need, Offer};
use fathom_api::kv::KvEngine;
use fathom_api::options::Syntax;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// fathom's RocksDB settings (`--set`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RocksDbSettings {
    /// block cache capacity
    cache_size: Size,
    /// block cache: hyper_clock (HyperClockCache, db_bench's default since it has one) or lru
    cache_type: CacheType,
    /// compaction style
    compaction: Compaction,
    /// O_DIRECT for user reads, for flush and compaction, or both
    o_direct: Direct,
    /// write-ahead log on writes
    wal: Switch,
    /// fsync the WAL on every write
    sync: Switch,
    /// optimistic opens an OptimisticTransactionDB, which keeps flushed memtables in memory for
    /// conflict checks
    transactions: Transactions,
    /// RocksDB's statistics (write amplification, compaction, stalls, cache hits come from
    /// them); off saves their cost per operation, as db_bench's --statistics=0 runs
    statistics: Switch,
    /// count what each operation touched (RocksDB's perf context, counters without timers:
    /// tombstones skipped, keys stepped over, blocks read, cache hits), for the slowest operations'
    /// explanation; off saves its cost per operation
    perf_context: Switch,
    /// a RocksDB shared library to run through its C API instead of the default (any release
    /// from 6.x: Debian's librocksdb, a user's build, one fetch-engine.sh placed)
    library: String,
    /// a RocksDB release fetched with `scripts/fetch-engine.sh rocksdb VERSION`, run through
    /// its C API instead of the default
    version: String,
}

impl Default for RocksDbSettings {
    fn default() -> Self {
        RocksDbSettings {
            cache_size: Size::new("256m"),
            cache_type: CacheType::HyperClock,
            compaction: Compaction::Leveled,
            o_direct: Direct::None,
            wal: Switch::new("true"),
            sync: Switch::new("false"),
            transactions: Transactions::None,
            statistics: Switch::new("true"),
            perf_context: Switch::new("true"),
            library: String::new(),
            version: String::new(),
        }
    }
}

/// The block cache's implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CacheType {
    /// Lock-free, entry size found as it goes (db_bench's `hyper_clock_cache`).
    HyperClock,
    /// Sharded LRU lists under a mutex each.
    Lru,
}

/// RocksDB's compaction style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Compaction {
    Leveled,
    Universal,
}

/// Where RocksDB uses O_DIRECT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Direct {
    None,
    Reads,
    Flush,
    All,
}

impl Direct {
    /// O_DIRECT for user reads, and for flush and compaction.
    fn reads_and_flush(self) -> (bool, bool) {
        match self {
            Direct::None => (false, false),
            Direct::Reads => (true, false),
            Direct::Flush => (false, true),
            Direct::All => (true, true),
        }
    }
}

/// Whether RocksDB opens as an OptimisticTransactionDB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Transactions {
    None,
    Optimistic,
}

/// A plain RocksDB has no transactions; `transactions=optimistic` gives them.
fn offers(need: Need, given: &settings::Settings) -> Offer {
    match (need, given.get("transactions").map(String::as_str)) {
        (Need::Transactions, None) => Offer::With("transactions", "optimistic"),
        (Need::Transactions, Some("none")) => {
            Offer::No("has none with --set transactions=none; use transactions=optimistic".into())
        }
        (Need::Transactions, Some(_)) => Offer::Yes,
    }
}

pub const ENTRY: EngineEntry = EngineEntry {
    syntax: Syntax::RocksDb,
    name: "rocksdb",
    about: if cfg!(feature = "bundled-rocksdb") {
        "embedded RocksDB, the rocksdb crate's bundled build"
    } else {
        "embedded RocksDB, Maven's release library through its C API (this build has no bundled one)"
    },
    options_doc: "RocksDB's options string, e.g. `write_buffer_size=64m;max_bytes_for_level_base=256m;compression=kLZ4Compression` \
                  (RocksDB wiki: Option String and Option Map); applied after fathom's settings, so it wins",
    settings: settings::of::<RocksDbSettings>(),
    version,
    offers,
    code: &["rocksdb::", "rocksdb_", "librocksdb_sys::", "snappy::", "ZSTD_", "LZ4_", "crc32c", "XXH"],
    memory,
    ..EngineEntry::embedded_kv(open)
};

/// The block cache and the active write buffer (write_buffer_size from the options string,
/// RocksDB's default 64 MiB where it does not say): what a run holds at least once its cache
/// fills (more write buffers fill only under write pressure, up to max_write_buffer_number).
fn memory(given: &crate::Settings, options: &str) -> anyhow::Result<crate::MemoryParts> {
    let s: RocksDbSettings = settings::read(given)?;
    let buffer = crate::option_size(options, &[';', '\n'], "write_buffer_size").unwrap_or(64 << 20);
    Ok(vec![
        ("cache_size".into(), s.cache_size.value),
        ("write_buffer_size".into(), buffer),
    ])
}

/// The release a build without the bundled RocksDB runs where a setup names none: the same
/// release the bundled build compiles, from Maven's rocksdbjni (`scripts/fetch-engine.sh
/// rocksdb 11.8.1`, which `scripts/fathom` runs for such a build, reading the release from this
/// line).
pub const DEFAULT_RELEASE: &str = "11.8.1";

/// The engine's version: the bundled build's, else the default release's.
fn version() -> anyhow::Result<String> {
    #[cfg(feature = "bundled-rocksdb")]
    return bundled::version();
    #[cfg(not(feature = "bundled-rocksdb"))]
    Ok(DEFAULT_RELEASE.to_string())
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let s: RocksDbSettings = settings::read(&config.settings)?;
    settings::within_memory("cache_size", s.cache_size.value)?;
    let bundled = cfg!(feature = "bundled-rocksdb");
    if let Some(library) = capi::library(&s.library, &s.version, bundled)? {
        return capi::open(config, &s, &library);
    }
    #[cfg(feature = "bundled-rocksdb")]
    return bundled::open(config, &s);
    #[cfg(not(feature = "bundled-rocksdb"))]
    unreachable!("capi::library names a library where no RocksDB is bundled")
}

#[cfg(feature = "bundled-rocksdb")]
mod bundled;
mod capi;
mod compact;
mod events;
mod figures;
mod perf;
mod scan;
#[cfg(feature = "bundled-rocksdb")]
mod stall;

/// The default column family's target_file_size_base (from the OPTIONS file's record), which
/// db_bench's compact0 gives CompactFiles as its output file size.
fn target_file_size(effective: &BTreeMap<String, String>) -> u64 {
    effective
        .get("CFOptions.target_file_size_base")
        .and_then(|v| v.parse().ok())
        .unwrap_or(64 << 20)
}

/// The options an open database really runs with (its OPTIONS file) and its exact version.
fn what_it_runs(dir: &Path) -> (BTreeMap<String, String>, String) {
    let effective = read_options_file(dir).unwrap_or_default();
    let version = effective
        .get("Version.rocksdb_version")
        .cloned()
        .unwrap_or_else(|| "unknown".into());
    (effective, version)
}

/// Reads the newest `OPTIONS-*` file RocksDB wrote: every `key=value` as `section.key`.
fn read_options_file(dir: &Path) -> Option<BTreeMap<String, String>> {
    let newest = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("OPTIONS-"))
        })
        .filter(|p| p.extension().is_none())
        .max_by_key(|p| {
            p.file_name()
                .and_then(|n| {
                    n.to_string_lossy()
                        .trim_start_matches("OPTIONS-")
                        .parse::<u64>()
                        .ok()
                })
                .unwrap_or(0)
        })?;
    Some(parse_options_file(&std::fs::read_to_string(newest).ok()?))
}

/// Parses the INI-like OPTIONS file: `[CFOptions "default"]` sections, `key=value` lines.
pub fn parse_options_file(text: &str) -> BTreeMap<String, String> {
    let mut section = String::new();
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.split_whitespace().next().unwrap_or("").to_string();
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(format!("{section}.{}", k.trim()), v.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_file_sections() {
        let text = "[Version]\n  rocksdb_version=11.8.1\n[CFOptions \"default\"]\n  write_buffer_size=67108864\n";
        let m = parse_options_file(text);
        assert_eq!(m["Version.rocksdb_version"], "11.8.1");
        assert_eq!(m["CFOptions.write_buffer_size"], "67108864");
    }
}
