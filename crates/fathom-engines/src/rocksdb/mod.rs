//! Embedded RocksDB (the `rocksdb` crate's bundled build). A setup is RocksDB's own options
//! string, parsed by RocksDB itself, on top of fathom's typed settings; statistics come from
//! RocksDB's tickers, and the options it really used from the OPTIONS file it writes. With
//! `transactions=optimistic` the database is opened as an OptimisticTransactionDB (plain reads
//! and writes still go straight to the base database; transactions detect conflicts at commit).

use crate::settings::{self, Size, Switch};
use crate::{EngineConfig, EngineEntry};
use fathom_api::capability::{Need, Offer};
use fathom_api::kv::{KvEngine, KvSession, SessionOptions};
use fathom_api::options::Syntax;
use fathom_api::stats::EngineStats;
use fathom_api::target::{Counters, Identity, Maintenance, Target};
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompactionStyle, OptimisticTransactionDB,
    Options, WaitForCompactOptions, WriteOptions, DB, DEFAULT_COLUMN_FAMILY_NAME,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

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
    /// a RocksDB shared library to run instead of the bundled build, through its C API (any
    /// release from 6.x: Debian's librocksdb, a user's build, one fetch-engine.sh placed)
    library: String,
    /// a RocksDB release fetched with `scripts/fetch-engine.sh rocksdb VERSION`, run through
    /// its C API instead of the bundled build
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
    about: "embedded RocksDB, the rocksdb crate's bundled build",
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

/// RocksDB's version, from the OPTIONS file a throwaway database writes (the C API has no
/// version call).
fn version() -> anyhow::Result<String> {
    let dir = std::env::temp_dir().join(format!("fathom-rocksdb-version-{}", std::process::id()));
    let result = (|| {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        drop(DB::open(&opts, &dir)?);
        read_options_file(&dir)
            .and_then(|m| m.get("Version.rocksdb_version").cloned())
            .ok_or_else(|| anyhow::anyhow!("RocksDB wrote no version in its OPTIONS file"))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The open database: plain, or an OptimisticTransactionDB when transactions are asked for
/// (it holds more memtables in memory, so it is not the default: it is a different engine).
enum Handle {
    Plain(DB),
    Optimistic(OptimisticTransactionDB),
}

/// Evaluates `$e` with `$d` bound to whichever database is open.
macro_rules! on_db {
    ($h:expr, $d:ident => $e:expr) => {
        match &*$h {
            Handle::Plain($d) => $e,
            Handle::Optimistic($d) => $e,
        }
    };
}

mod capi;
mod compact;
mod figures;
mod scan;
mod session;
mod stall;
use figures::{Source, CUMULATIVE};
use session::Session;

pub struct RocksDb {
    db: Arc<Handle>,
    options: Options,
    id: Identity,
    wal: bool,
    sync: bool,
    /// Whether RocksDB keeps statistics (the figures `step_stats` derives from them).
    statistics: bool,
    effective: BTreeMap<String, String>,
    stall: stall::Stall,
}

/// The options fathom's settings give, before the setup's options string.
fn base_options(s: &RocksDbSettings) -> Options {
    let mut opts = Options::default();
    let mut table = BlockBasedOptions::default();
    let capacity = s.cache_size.value as usize;
    let cache = match s.cache_type {
        // An estimated entry charge of 0 sizes the table as entries arrive, as db_bench's
        // `hyper_clock_cache` does.
        CacheType::HyperClock => Cache::new_hyper_clock_cache(capacity, 0),
        CacheType::Lru => Cache::new_lru_cache(capacity),
    };
    table.set_block_cache(&cache);
    opts.set_block_based_table_factory(&table);
    opts.set_compaction_style(match s.compaction {
        Compaction::Leveled => DBCompactionStyle::Level,
        Compaction::Universal => DBCompactionStyle::Universal,
    });
    let (reads, flush) = s.o_direct.reads_and_flush();
    opts.set_use_direct_reads(reads);
    opts.set_use_direct_io_for_flush_and_compaction(flush);
    opts
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let s: RocksDbSettings = settings::read(&config.settings)?;
    settings::within_memory("cache_size", s.cache_size.value)?;
    if let Some(library) = capi::library(&s.library, &s.version)? {
        return capi::open(config, &s, &library);
    }
    let mut base = base_options(&s);
    let (wal, sync) = (s.wal.value, s.sync.value);
    let mut opts = if config.options.trim().is_empty() {
        base
    } else {
        base.get_options_from_string(config.options.trim())
            .map_err(|e| {
                anyhow::anyhow!(
                    "RocksDB rejected the options string `{}`: {e}",
                    config.options.trim()
                )
            })?
    };
    opts.create_if_missing(true);
    if s.statistics.value {
        opts.enable_statistics();
    }
    // The default column family named, with the same options `open` gives it, so that its
    // handle is there for the batched MultiGet.
    let default_cf = || {
        [ColumnFamilyDescriptor::new(
            DEFAULT_COLUMN_FAMILY_NAME,
            opts.clone(),
        )]
    };
    let dir = &config.data_dir;
    let opened = match s.transactions {
        Transactions::None => DB::open_cf_descriptors(&opts, dir, default_cf()).map(Handle::Plain),
        Transactions::Optimistic => {
            OptimisticTransactionDB::open_cf_descriptors(&opts, dir, default_cf())
                .map(Handle::Optimistic)
        }
    };
    let db = opened
        .map_err(|e| anyhow::anyhow!("opening RocksDB in {}: {e}", config.data_dir.display()))?;
    let (effective, version) = what_it_runs(&config.data_dir);
    Ok(Box::new(RocksDb {
        db: Arc::new(db),
        options: opts,
        id: Identity::new(ENTRY.name, version, vec![config.data_dir.clone()]),
        wal,
        sync,
        statistics: s.statistics.value,
        effective,
        stall: stall::Stall::default(),
    }))
}

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

impl Target for RocksDb {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        let mut c = Counters::new();
        let kept = if self.statistics { CUMULATIVE } else { &[] };
        for s in kept {
            let value = match s.source {
                Source::Ticker(t) => self.options.get_ticker_count(t),
                Source::Sum(h) => self.options.get_histogram_data(h).sum(),
            };
            c.insert(s.name.into(), value as f64);
        }
        figures::add_gauges(&mut c, |p| {
            on_db!(self.db, d => d.property_int_value(p))
                .ok()
                .flatten()
                .map(|v| v as f64)
        });
        c
    }

    fn step_stats(&self, before: &Counters, after: &Counters, seconds: f64) -> EngineStats {
        figures::step_figures(before, after, seconds)
    }

    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        match action {
            Maintenance::Flush => on_db!(self.db, d => d.flush())?,
            Maintenance::WaitForCompaction => {
                let mut w = WaitForCompactOptions::default();
                w.set_flush(true);
                on_db!(self.db, d => d.wait_for_compact(&w))?
            }
            Maintenance::CompactLevel0 => match &*self.db {
                Handle::Plain(d) => compact::level0(d, target_file_size(&self.effective))?,
                // The rocksdb crate gives no handle to an OptimisticTransactionDB's base
                // database, which CompactFiles needs.
                Handle::Optimistic(_) => eprintln!(
                    "rocksdb: compact0 not run: CompactFiles is not reachable on an \
                     OptimisticTransactionDB (transactions=optimistic)"
                ),
            },
        }
        Ok(())
    }

    fn effective_options(&self) -> BTreeMap<String, String> {
        self.effective.clone()
    }

    fn check(&self) -> anyhow::Result<()> {
        let int = |p: &str| {
            on_db!(self.db, d => d.property_int_value(p))
                .ok()
                .flatten()
                .unwrap_or(0)
        };
        let stopped = int("rocksdb.is-write-stopped");
        let errors = if stopped == 0 {
            0
        } else {
            int("rocksdb.background-errors")
        };
        let stuck = self.stall.check(stopped, errors, &self.id.data_dirs[0]);
        if stuck.is_err() {
            // The writers wait for a flush that cannot succeed; shutting the background work
            // down wakes them with an error, so the step can end.
            if let Handle::Plain(d) = &*self.db {
                // SAFETY: the handle is open for as long as `self`; the call only sets the
                // database's shutdown flag and signals its waiters (it does not wait).
                unsafe {
                    librocksdb_sys::rocksdb_cancel_all_background_work(
                        rocksdb::AsRawPtr::as_raw_ptr(d),
                        0,
                    )
                };
            }
        }
        stuck
    }
}

impl KvEngine for RocksDb {
    fn session(&self, options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        let mut write = WriteOptions::default();
        write.disable_wal(options.disable_wal || !self.wal);
        write.set_sync(self.sync && !options.disable_wal);
        Ok(Box::new(Session::new(Arc::clone(&self.db), write)))
    }
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
