//! RocksDB's perf context as fathom's per-operation work counters: counting (`kEnableCount`,
//! no timers) is turned on in each client thread, and the few counters that say what a read
//! touched — tombstones skipped, keys stepped over, blocks read from files and their bytes,
//! block cache hits — are read after each operation, from the build compiled in or a release's
//! C API.

use fathom_api::work::{Counts, ThreadWork, WorkMeter, MAX_COUNTERS};
use std::ffi::c_int;

/// The counters, by their number in the C API's `rocksdb_perfcontext_metric` (its enum has
/// only grown at the end since it was added), in the order reports list them.
const METRICS: [c_int; MAX_COUNTERS] = [
    11, // internal_delete_skipped_count
    // internal_key_skipped_count: each Next() steps over the key it stood on, and any older
    // versions of a key (overwritten, or hidden by a tombstone) are stepped over too.
    10, 2, // block_read_count
    3, // block_read_byte
    1, // block_cache_hit_count
];

/// What each counter counts, as reports name it.
const NAMES: [&str; MAX_COUNTERS] = [
    "tombstones skipped",
    "keys stepped over",
    "blocks read",
    "bytes read",
    "cache hits",
];

/// `PerfLevel::kEnableCount`: counters without timers.
const ENABLE_COUNT: c_int = 2;

type Obj = *mut std::ffi::c_void;

/// The perf context through a release's C API: its four functions, where it has them.
#[derive(Clone, Copy)]
pub(super) struct LibraryPerf {
    set_level: unsafe extern "C" fn(c_int),
    create: unsafe extern "C" fn() -> Obj,
    metric: unsafe extern "C" fn(Obj, c_int) -> u64,
    destroy: unsafe extern "C" fn(Obj),
}

impl LibraryPerf {
    /// The perf context of the library whose functions these are; `None` if one is missing.
    pub(super) fn of(
        set_level: Option<unsafe extern "C" fn(c_int)>,
        create: Option<unsafe extern "C" fn() -> Obj>,
        metric: Option<unsafe extern "C" fn(Obj, c_int) -> u64>,
        destroy: Option<unsafe extern "C" fn(Obj)>,
    ) -> Option<LibraryPerf> {
        Some(LibraryPerf {
            set_level: set_level?,
            create: create?,
            metric: metric?,
            destroy: destroy?,
        })
    }
}

impl WorkMeter for LibraryPerf {
    fn names(&self) -> &'static [&'static str] {
        &NAMES
    }

    fn on_this_thread(&self) -> Box<dyn ThreadWork> {
        // SAFETY: both act on the calling thread's perf context, which lives as long as it.
        let ctx = unsafe {
            (self.set_level)(ENABLE_COUNT);
            (self.create)()
        };
        Box::new(LibraryThread { perf: *self, ctx })
    }
}

/// One thread's perf context in the library.
struct LibraryThread {
    perf: LibraryPerf,
    ctx: Obj,
}

impl ThreadWork for LibraryThread {
    fn read(&mut self, out: &mut Counts) {
        for (o, m) in out.iter_mut().zip(METRICS) {
            // SAFETY: a live context of this thread; `m` is a metric every release has.
            *o = unsafe { (self.perf.metric)(self.ctx, m) };
        }
    }
}

impl Drop for LibraryThread {
    fn drop(&mut self) {
        // SAFETY: made by this library, released once.
        unsafe { (self.perf.destroy)(self.ctx) };
    }
}

/// The perf context of the build compiled into fathom.
#[cfg(feature = "bundled-rocksdb")]
pub(super) struct BundledPerf;

#[cfg(feature = "bundled-rocksdb")]
impl WorkMeter for BundledPerf {
    fn names(&self) -> &'static [&'static str] {
        &NAMES
    }

    fn on_this_thread(&self) -> Box<dyn ThreadWork> {
        use rocksdb::perf::{set_perf_stats, PerfContext, PerfStatsLevel};
        set_perf_stats(PerfStatsLevel::EnableCount);
        Box::new(BundledThread(PerfContext::default()))
    }
}

#[cfg(feature = "bundled-rocksdb")]
struct BundledThread(rocksdb::perf::PerfContext);

#[cfg(feature = "bundled-rocksdb")]
impl ThreadWork for BundledThread {
    fn read(&mut self, out: &mut Counts) {
        use rocksdb::perf::PerfMetric as M;
        let metrics = [
            M::InternalDeleteSkippedCount,
            M::InternalKeySkippedCount,
            M::BlockReadCount,
            M::BlockReadByte,
            M::BlockCacheHitCount,
        ];
        debug_assert_eq!(metrics.map(|m| m as i32), METRICS);
        for (o, m) in out.iter_mut().zip(metrics) {
            *o = self.0.metric(m);
        }
    }
}
