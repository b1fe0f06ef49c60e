//! RocksDB from a shared library through its C API (`--set library=PATH` or `--set
//! version=X`): the same settings, options string, figures and maintenance as the bundled
//! build, so two releases compare as two setups. Statistics are read by name from the
//! statistics string; what a release lacks (HyperClockCache, WaitForCompact, CompactFiles) is
//! found by name and either replaced the way that release's db_bench did it or refused with a
//! message naming the function.

mod api;
mod cursor;
mod session;
mod txn;

use super::compact::{self, Lsm};
use super::figures;
use super::RocksDbSettings;
use super::{target_file_size, what_it_runs, CacheType, Compaction, Transactions};
use crate::EngineConfig;
use api::{Api, Obj};
use fathom_api::kv::{KvEngine, KvSession, SessionOptions};
use fathom_api::stats::EngineStats;
use fathom_api::stop::Stop;
use fathom_api::target::{Counters, Identity, Maintenance, Target};
use std::collections::BTreeMap;
use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The library a setup names: `library` as given, or the release `version` fetched under
/// fathom's engines directory; naming neither, `None` for the bundled build (`bundled`), else
/// the default release.
pub fn library(library: &str, version: &str, bundled: bool) -> anyhow::Result<Option<PathBuf>> {
    let fetched = |v: &str| -> anyhow::Result<Option<PathBuf>> {
        Ok(Some(
            crate::fetched::release("rocksdb", v, "librocksdb.so")?.join("librocksdb.so"),
        ))
    };
    match (library.trim(), version.trim()) {
        ("", "") if bundled => Ok(None),
        ("", "") => fetched(super::DEFAULT_RELEASE),
        (path, "") => Ok(Some(PathBuf::from(path))),
        ("", v) => fetched(v),
        _ => anyhow::bail!("settings `library` and `version` both name a library; give one"),
    }
}

/// An open database in a loaded library, and the objects it was opened with.
pub struct LibraryDb {
    api: &'static Api,
    /// The database plain reads and writes go to: the base of `otxn` when there is one.
    db: Obj,
    /// The OptimisticTransactionDB (`transactions=optimistic`); NULL for a plain database.
    otxn: Obj,
    id: Identity,
    wal: bool,
    sync: bool,
    statistics: bool,
    /// Each operation's perf-context counters, when asked and the release has them.
    perf: Option<super::perf::LibraryPerf>,
    effective: BTreeMap<String, String>,
    /// Ends a wait for compaction early (the run was asked to stop).
    stop: Stop,
    /// What it was opened with, released after it closes (fields drop after `drop`).
    made: Made,
}

/// The objects a database is opened with, released when dropped: the options (its statistics
/// live there; NULL until made), the table options and the block cache.
struct Made {
    api: &'static Api,
    options: Obj,
    table: Obj,
    cache: Obj,
}

impl Drop for Made {
    fn drop(&mut self) {
        let a = self.api;
        // SAFETY: each made by this library, released once, after any database using them.
        unsafe {
            if !self.options.is_null() {
                (a.rocksdb_options_destroy)(self.options);
            }
            (a.rocksdb_block_based_options_destroy)(self.table);
            (a.rocksdb_cache_destroy)(self.cache);
        }
    }
}

// SAFETY: RocksDB's DB and its options are safe to use from several threads at once.
unsafe impl Send for LibraryDb {}
unsafe impl Sync for LibraryDb {}

impl Drop for LibraryDb {
    fn drop(&mut self) {
        let a = self.api;
        // SAFETY: opened by this library, closed once; `made` is released after this.
        unsafe {
            if self.otxn.is_null() {
                (a.rocksdb_close)(self.db);
            } else {
                (a.rocksdb_optimistictransactiondb_close_base_db)(self.db);
                (a.rocksdb_optimistictransactiondb_close)(self.otxn);
            }
        }
    }
}

/// Opens the database in `config.data_dir` with the library at `path`.
pub fn open(
    config: &EngineConfig,
    s: &RocksDbSettings,
    path: &Path,
) -> anyhow::Result<Box<dyn KvEngine>> {
    let api = api::load(path)?;
    let mut effective = BTreeMap::new();
    let mut made = table_options(api, config, s, &mut effective)?;
    // SAFETY: the table options just made are live.
    made.options = unsafe { options(api, s, made.table, &config.options)? };
    let dir = CString::new(config.data_dir.as_os_str().as_encoded_bytes())?;
    let mut err: *mut c_char = std::ptr::null_mut();
    let optimistic = s.transactions == Transactions::Optimistic;
    // SAFETY: live options, a NUL-terminated path.
    let opened = unsafe {
        if optimistic {
            (api.rocksdb_optimistictransactiondb_open)(made.options, dir.as_ptr(), &mut err)
        } else {
            (api.rocksdb_open)(made.options, dir.as_ptr(), &mut err)
        }
    };
    api.check(err, &format!("open {}", config.data_dir.display()))?;
    let (db, otxn) = if optimistic {
        // SAFETY: an open OptimisticTransactionDB.
        let base = unsafe { (api.rocksdb_optimistictransactiondb_get_base_db)(opened) };
        (base, opened)
    } else {
        (opened, std::ptr::null_mut())
    };
    let db = LibraryDb {
        api,
        db,
        otxn,
        id: Identity::new(
            super::ENTRY.name,
            String::new(),
            vec![config.data_dir.clone()],
        ),
        wal: s.wal.value,
        sync: s.sync.value,
        statistics: s.statistics.value,
        perf: s.perf_context.value.then(|| library_perf(api)).flatten(),
        effective,
        stop: config.stop.clone(),
        made,
    };
    Ok(Box::new(recorded(db, config, path)))
}

/// The database with what it really runs: the OPTIONS file it wrote, its version from there,
/// and where the library came from.
fn recorded(mut db: LibraryDb, config: &EngineConfig, path: &Path) -> LibraryDb {
    let (mut effective, version) = what_it_runs(&config.data_dir);
    effective.append(&mut db.effective);
    effective.insert("fathom.library".into(), path.display().to_string());
    // Where fetch-engine.sh got it (the registry coordinate and checksum), when it did.
    if let Some(text) = path.parent().and_then(crate::fetched::source) {
        effective.insert("fathom.library_source".into(), text);
    }
    db.id.version = version;
    db.effective = effective;
    db
}

/// The block cache and table options the settings ask for. A release without HyperClockCache
/// in its C API gets an LRU cache when the setting was left at its default (recorded), and an
/// error when it was asked for.
fn table_options(
    api: &'static Api,
    config: &EngineConfig,
    s: &RocksDbSettings,
    effective: &mut BTreeMap<String, String>,
) -> anyhow::Result<Made> {
    let capacity = s.cache_size.value as usize;
    let cache = match (s.cache_type, api.rocksdb_cache_create_hyper_clock) {
        // SAFETY: the library's constructor; an estimated charge of 0 sizes as entries come.
        (CacheType::HyperClock, Some(create)) => unsafe { create(capacity, 0) },
        (CacheType::HyperClock, None) if config.settings.contains_key("cache_type") => {
            anyhow::bail!(
                "setting `cache_type=hyper_clock`: {} has no rocksdb_cache_create_hyper_clock; \
                 use cache_type=lru",
                api.path.display()
            )
        }
        _ => {
            if s.cache_type == CacheType::HyperClock {
                effective.insert(
                    "fathom.cache_type".into(),
                    "lru (this library's C API has no HyperClockCache)".into(),
                );
            }
            // SAFETY: the library's constructor.
            unsafe { (api.rocksdb_cache_create_lru)(capacity) }
        }
    };
    // SAFETY: the library's constructors and setters on objects it made.
    let table = unsafe {
        let table = (api.rocksdb_block_based_options_create)();
        (api.rocksdb_block_based_options_set_block_cache)(table, cache);
        table
    };
    Ok(Made {
        api,
        options: std::ptr::null_mut(),
        table,
        cache,
    })
}

/// Options from the settings, then the setup's options string parsed by the library itself
/// (so it wins), with statistics on when asked.
///
/// # Safety
/// `table` is a live table-options object of `api`'s library.
unsafe fn options(api: &Api, s: &RocksDbSettings, table: Obj, given: &str) -> anyhow::Result<Obj> {
    let flag = |b: bool| b as u8;
    let (reads, flush) = s.o_direct.reads_and_flush();
    let text = CString::new(given.trim())?;
    // SAFETY: the library's own constructor and setters; `table` is live (caller).
    unsafe {
        let base = (api.rocksdb_options_create)();
        (api.rocksdb_options_set_block_based_table_factory)(base, table);
        let style = match s.compaction {
            Compaction::Leveled => 0,
            Compaction::Universal => 1,
        };
        (api.rocksdb_options_set_compaction_style)(base, style);
        (api.rocksdb_options_set_use_direct_reads)(base, flag(reads));
        (api.rocksdb_options_set_use_direct_io_for_flush_and_compaction)(base, flag(flush));
        let options = (api.rocksdb_options_create)();
        let mut err: *mut c_char = std::ptr::null_mut();
        (api.rocksdb_get_options_from_string)(base, text.as_ptr(), options, &mut err);
        (api.rocksdb_options_destroy)(base);
        if let Err(e) = api.check(
            err,
            &format!("rejected the options string `{}`", given.trim()),
        ) {
            (api.rocksdb_options_destroy)(options);
            return Err(e);
        }
        (api.rocksdb_options_set_create_if_missing)(options, 1);
        if s.statistics.value {
            (api.rocksdb_options_enable_statistics)(options);
        }
        Ok(options)
    }
}

impl LibraryDb {
    /// An integer property, 0 when absent.
    /// An integer property; `None` when this release does not have it.
    fn property(&self, name: &str) -> Option<f64> {
        let c = CString::new(name).ok()?;
        // SAFETY: a live database and a NUL-terminated name; the result is freed by take_string.
        let value = unsafe { (self.api.rocksdb_property_value)(self.db, c.as_ptr()) };
        self.api.take_string(value).trim().parse().ok()
    }

    fn flush(&self) -> anyhow::Result<()> {
        let a = self.api;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: options made and released here, a live database.
        unsafe {
            let options = (a.rocksdb_flushoptions_create)();
            (a.rocksdb_flushoptions_set_wait)(options, 1);
            (a.rocksdb_flush)(self.db, options, &mut err);
            (a.rocksdb_flushoptions_destroy)(options);
        }
        a.check(err, "flush")
    }
}

/// How often a release without WaitForCompact is asked whether work is left.
const POLL: Duration = Duration::from_millis(100);

impl Lsm for LibraryDb {
    fn files(&self) -> anyhow::Result<Vec<(i32, String)>> {
        let a = self.api;
        // SAFETY: a live database; the list is read, then released once.
        unsafe {
            let list = (a.rocksdb_livefiles)(self.db);
            let n = (a.rocksdb_livefiles_count)(list);
            let files = (0..n)
                .map(|i| {
                    let name = std::ffi::CStr::from_ptr((a.rocksdb_livefiles_name)(list, i));
                    let level = (a.rocksdb_livefiles_level)(list, i);
                    (level, name.to_string_lossy().into_owned())
                })
                .collect();
            (a.rocksdb_livefiles_destroy)(list);
            Ok(files)
        }
    }

    fn compact_files(&self, files: &[String], to: i32, size: u64) -> Result<(), String> {
        let a = self.api;
        let (Some(create), Some(destroy), Some(limit), Some(compact)) = (
            a.rocksdb_compaction_options_create,
            a.rocksdb_compaction_options_destroy,
            a.rocksdb_compaction_options_set_output_file_size_limit,
            a.rocksdb_compact_files,
        ) else {
            return Err("this library's C API has no rocksdb_compact_files".into());
        };
        let names = compact::c_names(files)?;
        let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: as the bundled build's call: names live past it, options made and released.
        unsafe {
            let options = create();
            limit(options, size);
            let (n, db) = (pointers.len(), self.db);
            let (names_out, count_out, info) = (
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            compact(
                db,
                options,
                pointers.as_ptr(),
                n,
                to,
                0,
                names_out,
                count_out,
                info,
                &mut err,
            );
            destroy(options);
        }
        a.check(err, "CompactFiles").map_err(|e| e.to_string())
    }

    /// WaitForCompact where the release has it; before that, a flush and then polling until no
    /// flush or compaction is pending or running, as older db_bench's waitforcompaction did.
    fn wait(&self) -> anyhow::Result<()> {
        let a = self.api;
        if let (Some(create), Some(flush), Some(wait), Some(destroy)) = (
            a.rocksdb_wait_for_compact_options_create,
            a.rocksdb_wait_for_compact_options_set_flush,
            a.rocksdb_wait_for_compact,
            a.rocksdb_wait_for_compact_options_destroy,
        ) {
            let mut err: *mut c_char = std::ptr::null_mut();
            // SAFETY: options made and released here, a live database.
            unsafe {
                let options = create();
                flush(options, 1);
                wait(self.db, options, &mut err);
                destroy(options);
            }
            return a.check(err, "WaitForCompact");
        }
        self.flush()?;
        let busy = [
            "rocksdb.mem-table-flush-pending",
            "rocksdb.compaction-pending",
            "rocksdb.num-running-flushes",
            "rocksdb.num-running-compactions",
        ];
        while busy.iter().any(|p| self.property(p).unwrap_or(0.0) > 0.0) {
            if self.stop.requested() {
                break;
            }
            std::thread::sleep(POLL);
        }
        Ok(())
    }
}

impl Target for LibraryDb {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        let mut c = Counters::new();
        if self.statistics {
            // SAFETY: the options the database was opened with; the string is freed once.
            let text =
                unsafe { (self.api.rocksdb_options_statistics_get_string)(self.made.options) };
            // A statistic this release does not print stays absent, and so do its figures.
            c = figures::from_statistics_string(&self.api.take_string(text));
        }
        figures::add_gauges(&mut c, |p| self.property(p));
        c
    }

    fn step_stats(&self, before: &Counters, after: &Counters, seconds: f64) -> EngineStats {
        figures::step_figures(before, after, seconds)
    }

    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        match action {
            Maintenance::Flush => self.flush(),
            Maintenance::WaitForCompaction => self.wait(),
            Maintenance::CompactLevel0 => {
                if self.api.rocksdb_compact_files.is_none() {
                    eprintln!(
                        "rocksdb {}: compact0 not run: {} has no rocksdb_compact_files",
                        self.id.version,
                        self.api.path.display()
                    );
                    return Ok(());
                }
                compact::level0(self, target_file_size(&self.effective))
            }
        }
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
        self.perf.as_ref().map(|p| p as _)
    }
}

/// The library's perf context, if it has the functions.
fn library_perf(a: &Api) -> Option<super::perf::LibraryPerf> {
    super::perf::LibraryPerf::of(
        a.rocksdb_set_perf_level,
        a.rocksdb_perfcontext_create,
        a.rocksdb_perfcontext_metric,
        a.rocksdb_perfcontext_destroy,
    )
}

impl KvEngine for LibraryDb {
    fn session(&self, options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        let disable_wal = options.disable_wal || !self.wal;
        let sync = self.sync && !options.disable_wal;
        Ok(Box::new(session::Session::new(
            self.api,
            (self.db, self.otxn),
            disable_wal,
            sync,
        )))
    }
}
