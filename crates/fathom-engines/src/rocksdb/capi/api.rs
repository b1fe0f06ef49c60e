//! RocksDB's C API (`include/rocksdb/c.h`) from a shared library loaded at run time, so any
//! release's `librocksdb.so` (Debian's, a user's build, the one inside a rocksdbjni jar) can be
//! measured. Functions every release since 6.x exports are required; newer ones are optional
//! and looked up by name.

use crate::dynlib::Loaded;
use std::ffi::{c_char, c_int, c_uchar, c_void, CStr};
use std::path::Path;

/// Every C API object is an opaque pointer here.
pub type Obj = *mut c_void;
/// RocksDB's error out-parameter: NULL, or a message to free with `rocksdb_free`.
pub type Err = *mut *mut c_char;

crate::c_api! {
    /// The library's functions, by their C names.
    pub struct Api;
    required {
        rocksdb_free: fn(*mut c_void);
        rocksdb_options_create: fn() -> Obj;
        rocksdb_options_destroy: fn(Obj);
        rocksdb_options_set_create_if_missing: fn(Obj, c_uchar);
        rocksdb_options_set_compaction_style: fn(Obj, c_int);
        rocksdb_options_set_use_direct_reads: fn(Obj, c_uchar);
        rocksdb_options_set_use_direct_io_for_flush_and_compaction: fn(Obj, c_uchar);
        rocksdb_options_set_block_based_table_factory: fn(Obj, Obj);
        rocksdb_options_enable_statistics: fn(Obj);
        rocksdb_options_statistics_get_string: fn(Obj) -> *mut c_char;
        rocksdb_get_options_from_string: fn(Obj, *const c_char, Obj, Err);
        rocksdb_block_based_options_create: fn() -> Obj;
        rocksdb_block_based_options_destroy: fn(Obj);
        rocksdb_block_based_options_set_block_cache: fn(Obj, Obj);
        rocksdb_cache_create_lru: fn(usize) -> Obj;
        rocksdb_cache_destroy: fn(Obj);
        rocksdb_open: fn(Obj, *const c_char, Err) -> Obj;
        rocksdb_close: fn(Obj);
        rocksdb_put: fn(Obj, Obj, *const c_char, usize, *const c_char, usize, Err);
        rocksdb_delete: fn(Obj, Obj, *const c_char, usize, Err);
        rocksdb_get_pinned: fn(Obj, Obj, *const c_char, usize, Err) -> Obj;
        rocksdb_pinnableslice_value: fn(Obj, *mut usize) -> *const c_char;
        rocksdb_pinnableslice_destroy: fn(Obj);
        rocksdb_write: fn(Obj, Obj, Obj, Err);
        rocksdb_writebatch_create: fn() -> Obj;
        rocksdb_writebatch_destroy: fn(Obj);
        rocksdb_writebatch_put: fn(Obj, *const c_char, usize, *const c_char, usize);
        rocksdb_writebatch_delete: fn(Obj, *const c_char, usize);
        rocksdb_writeoptions_create: fn() -> Obj;
        rocksdb_writeoptions_destroy: fn(Obj);
        rocksdb_writeoptions_disable_WAL: fn(Obj, c_int);
        rocksdb_writeoptions_set_sync: fn(Obj, c_uchar);
        rocksdb_readoptions_create: fn() -> Obj;
        rocksdb_readoptions_destroy: fn(Obj);
        rocksdb_create_iterator: fn(Obj, Obj) -> Obj;
        rocksdb_iter_destroy: fn(Obj);
        rocksdb_iter_seek: fn(Obj, *const c_char, usize);
        rocksdb_iter_seek_for_prev: fn(Obj, *const c_char, usize);
        rocksdb_iter_valid: fn(Obj) -> c_uchar;
        rocksdb_iter_next: fn(Obj);
        rocksdb_iter_prev: fn(Obj);
        rocksdb_iter_key: fn(Obj, *mut usize) -> *const c_char;
        rocksdb_iter_value: fn(Obj, *mut usize) -> *const c_char;
        rocksdb_iter_get_error: fn(Obj, Err);
        rocksdb_flushoptions_create: fn() -> Obj;
        rocksdb_flushoptions_destroy: fn(Obj);
        rocksdb_flushoptions_set_wait: fn(Obj, c_uchar);
        rocksdb_flush: fn(Obj, Obj, Err);
        rocksdb_property_value: fn(Obj, *const c_char) -> *mut c_char;
        rocksdb_livefiles: fn(Obj) -> Obj;
        rocksdb_livefiles_count: fn(Obj) -> c_int;
        rocksdb_livefiles_name: fn(Obj, c_int) -> *const c_char;
        rocksdb_livefiles_level: fn(Obj, c_int) -> c_int;
        rocksdb_livefiles_destroy: fn(Obj);
        rocksdb_create_snapshot: fn(Obj) -> Obj;
        rocksdb_release_snapshot: fn(Obj, Obj);
        rocksdb_readoptions_set_snapshot: fn(Obj, Obj);
        rocksdb_optimistictransactiondb_open: fn(Obj, *const c_char, Err) -> Obj;
        rocksdb_optimistictransactiondb_get_base_db: fn(Obj) -> Obj;
        rocksdb_optimistictransactiondb_close_base_db: fn(Obj);
        rocksdb_optimistictransactiondb_close: fn(Obj);
        rocksdb_optimistictransaction_options_create: fn() -> Obj;
        rocksdb_optimistictransaction_options_destroy: fn(Obj);
        rocksdb_optimistictransaction_begin: fn(Obj, Obj, Obj, Obj) -> Obj;
        rocksdb_transaction_put: fn(Obj, *const c_char, usize, *const c_char, usize, Err);
        rocksdb_transaction_delete: fn(Obj, *const c_char, usize, Err);
        rocksdb_transaction_get: fn(Obj, Obj, *const c_char, usize, *mut usize, Err)
            -> *mut c_char;
        rocksdb_transaction_get_for_update: fn(Obj, Obj, *const c_char, usize, *mut usize,
            c_uchar, Err) -> *mut c_char;
        rocksdb_transaction_create_iterator: fn(Obj, Obj) -> Obj;
        rocksdb_transaction_commit: fn(Obj, Err);
        rocksdb_transaction_rollback: fn(Obj, Err);
        rocksdb_transaction_destroy: fn(Obj);
    }
    optional {
        rocksdb_cache_create_hyper_clock: fn(usize, usize) -> Obj;
        rocksdb_wait_for_compact: fn(Obj, Obj, Err);
        rocksdb_wait_for_compact_options_create: fn() -> Obj;
        rocksdb_wait_for_compact_options_destroy: fn(Obj);
        rocksdb_wait_for_compact_options_set_flush: fn(Obj, c_uchar);
        rocksdb_compaction_options_create: fn() -> Obj;
        rocksdb_compaction_options_destroy: fn(Obj);
        rocksdb_compaction_options_set_output_file_size_limit: fn(Obj, u64);
        rocksdb_compact_files: fn(Obj, Obj, *const *const c_char, usize, c_int, c_int,
            *mut *mut *mut c_char, *mut usize, Obj, Err);
        rocksdb_set_perf_level: fn(c_int);
        rocksdb_perfcontext_create: fn() -> Obj;
        rocksdb_perfcontext_metric: fn(Obj, c_int) -> u64;
        rocksdb_perfcontext_destroy: fn(Obj);
    }
}

/// Libraries loaded so far, by path.
static LOADED: Loaded<Api> = Loaded::new();

/// The C API of the library at `path`, loaded on first use.
pub fn load(path: &Path) -> anyhow::Result<&'static Api> {
    const WHAT: &str = "RocksDB's C API; is it a RocksDB library?";
    // SAFETY: the handle is live and never closed; the signatures are c.h's.
    LOADED.get(path, "RocksDB library", |lib| unsafe {
        Api::resolve(lib, path, WHAT)
    })
}

impl Api {
    /// Takes an error RocksDB left in `err`, freeing it.
    pub fn check(&self, err: *mut c_char, what: &str) -> anyhow::Result<()> {
        if err.is_null() {
            return Ok(());
        }
        let message = self.take_string(err);
        anyhow::bail!("RocksDB {what}: {message}")
    }

    /// Copies a string RocksDB allocated, then frees it.
    pub fn take_string(&self, s: *mut c_char) -> String {
        if s.is_null() {
            return String::new();
        }
        // SAFETY: a NUL-terminated string RocksDB allocated with malloc.
        let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
        // SAFETY: allocated by the library, freed once.
        unsafe { (self.rocksdb_free)(s.cast()) };
        text
    }
}
