//! The bundled build (the `rocksdb` crate, RocksDB compiled into fathom; the `bundled-rocksdb`
//! feature): the database opened through the crate, its statistics, maintenance and sessions.
//! Settings, figures and the OPTIONS file are the engine's own (`super`), shared with a
//! library loaded through the C API.

use super::compact::{self, Lsm};
use super::figures;
use super::stall::Stall;
use super::{
    read_options_file, target_file_size, what_it_runs, CacheType, Compaction, RocksDbSettings,
    Transactions, ENTRY,
};
use crate::EngineConfig;
use fathom_api::kv::{KvEngine, KvSession, SessionOptions};
use fathom_api::stats::EngineStats;
use fathom_api::target::{Counters, Identity, Maintenance, Target};
use rocksdb::{
    AsRawPtr, BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompactionStyle,
    OptimisticTransactionDB, Options, WaitForCompactOptions, WriteOptions, DB,
    DEFAULT_COLUMN_FAMILY_NAME,
};
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};
use std::sync::Arc;

/// RocksDB's version, from the OPTIONS file a throwaway database writes (the C API has no
/// version call).
pub fn version() -> anyhow::Result<String> {
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

mod session;
use session::Session;

pub struct RocksDb {
    db: Arc<Handle>,
    options: Options,
    id: Identity,
    wal: bool,
    sync: bool,
    /// Whether RocksDB keeps statistics (the figures `step_stats` derives from them).
    statistics: bool,
    /// Whether each operation's perf-context counters are read.
    perf: bool,
    effective: BTreeMap<String, String>,
    stall: Stall,
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

/// Opens the bundled build with `s` (read and checked by the caller).
pub fn open(config: &EngineConfig, s: &RocksDbSettings) -> anyhow::Result<Box<dyn KvEngine>> {
    let mut base = base_options(s);
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
        perf: s.perf_context.value,
        effective,
        stall: Stall::default(),
    }))
}

impl Target for RocksDb {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        // By name from the statistics string, as a loaded library's are: one rule for both.
        let mut c = match self
            .statistics
            .then(|| self.options.get_statistics())
            .flatten()
        {
            Some(text) => figures::from_statistics_string(&text),
            None => Counters::new(),
        };
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

    fn events(&self, from_us: u64, to_us: u64) -> Vec<fathom_api::events::EngineEvent> {
        super::events::read(&self.id.data_dirs[0], from_us, to_us)
    }

    fn keeps_events(&self) -> bool {
        true
    }

    fn work_meter(&self) -> Option<&dyn fathom_api::work::WorkMeter> {
        self.perf.then_some(&super::perf::BundledPerf as _)
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
                unsafe { librocksdb_sys::rocksdb_cancel_all_background_work(d.as_raw_ptr(), 0) };
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

impl Lsm for DB {
    fn files(&self) -> anyhow::Result<Vec<(i32, String)>> {
        Ok(self
            .live_files()?
            .into_iter()
            .map(|f| (f.level, f.name))
            .collect())
    }

    /// One CompactFiles call with db_bench's options: the level's own compression, output
    /// files of target_file_size_base.
    fn compact_files(
        &self,
        files: &[String],
        to: i32,
        target_file_size: u64,
    ) -> Result<(), String> {
        use librocksdb_sys as ffi;
        let names = compact::c_names(files)?;
        let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut error: *mut c_char = std::ptr::null_mut();
        // SAFETY: `self` outlives the call; the options are created and destroyed here; the
        // name pointers live in `names` until after the call; no output names or job info
        // are asked for.
        unsafe {
            let options = ffi::rocksdb_compaction_options_create();
            ffi::rocksdb_compaction_options_set_output_file_size_limit(options, target_file_size);
            ffi::rocksdb_compact_files(
                self.as_raw_ptr(),
                options,
                pointers.as_ptr(),
                pointers.len(),
                to,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut error,
            );
            ffi::rocksdb_compaction_options_destroy(options);
            if error.is_null() {
                return Ok(());
            }
            let message = CStr::from_ptr(error).to_string_lossy().into_owned();
            ffi::rocksdb_free(error.cast());
            Err(message)
        }
    }

    fn wait(&self) -> anyhow::Result<()> {
        let mut wait = WaitForCompactOptions::default();
        wait.set_flush(true);
        Ok(self.wait_for_compact(&wait)?)
    }
}
