//! WiredTiger's statistics cursor, read into the counters fathom keeps and the per-step
//! figures reports show (bytes through the cache and the block manager, eviction, checkpoints,
//! and where a client's time goes).

use super::api::Cur;
use super::WiredTiger;
use fathom_core::result::EngineStats;
use fathom_core::target::{delta, Counters};
use fathom_core::units::GIB as GB;
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};
use std::ptr;

/// WiredTiger statistics kept as counters: (our name, WiredTiger's description).
const STATS: &[(&str, &str)] = &[
    ("cache_read_bytes", "cache: bytes read into cache"),
    ("cache_written_bytes", "cache: bytes written from cache"),
    ("cache_bytes", "cache: bytes currently in the cache"),
    ("pages_evicted", "cache: unmodified pages evicted"),
    ("modified_pages_evicted", "cache: modified pages evicted"),
    ("block_read_bytes", "block-manager: bytes read"),
    ("block_written_bytes", "block-manager: bytes written"),
    (
        "checkpoint_msecs",
        "transaction: transaction checkpoint total time (msecs)",
    ),
    ("checkpoints", "transaction: transaction checkpoints"),
    ("log_bytes", "log: log bytes written"),
    ("pages_read", "cache: pages read into cache"),
    ("pages_requested", "cache: pages requested from the cache"),
    ("app_evicted", "cache: pages evicted by application threads"),
    (
        "app_evict_usecs",
        "thread-yield: application thread time evicting (usecs)",
    ),
    (
        "app_cache_wait_usecs",
        "thread-yield: application thread time waiting for cache (usecs)",
    ),
    ("txn_begins", "transaction: transaction begins"),
    ("txn_rollbacks", "transaction: transactions rolled back"),
    ("cursor_next", "cursor: cursor next calls"),
    ("cursor_prev", "cursor: cursor prev calls"),
    ("cursor_search", "cursor: cursor search calls"),
    ("cursor_search_near", "cursor: cursor search near calls"),
];

/// Counters reported per step as they are (WiredTiger's own names in `STATS`): where its time
/// goes (pages read into the cache, eviction by the clients' own threads and their waits for
/// cache room, transactions rolled back on conflicts, cursor calls).
const PLAIN_COUNTERS: &[&str] = &[
    "pages_read",
    "pages_requested",
    "app_evicted",
    "app_evict_usecs",
    "app_cache_wait_usecs",
    "txn_begins",
    "txn_rollbacks",
    "cursor_next",
    "cursor_prev",
    "cursor_search",
    "cursor_search_near",
];

impl WiredTiger {
    /// Reads WiredTiger's statistics cursor: description -> value.
    fn statistics(&self) -> anyhow::Result<BTreeMap<String, i64>> {
        let admin = self.admin.lock().unwrap_or_else(|e| e.into_inner());
        let (lib, api) = (self.lib, self.lib.api);
        let mut cursor: Cur = ptr::null_mut();
        let mut out = BTreeMap::new();
        // SAFETY: the admin session is live and used under the mutex; the cursor is closed
        // before returning; its entries are (description, printable value, int64).
        unsafe {
            let rc = (api.fwt_open_cursor)(admin.0, c"statistics:".as_ptr(), &mut cursor);
            lib.check(rc, "statistics cursor")?;
            let read = (|| {
                while lib.found((api.fwt_next)(cursor), "statistics next")? {
                    let mut desc: *const c_char = ptr::null();
                    let mut value: i64 = 0;
                    lib.check(
                        (api.fwt_stat)(cursor, &mut desc, &mut value),
                        "statistics value",
                    )?;
                    out.insert(CStr::from_ptr(desc).to_string_lossy().into_owned(), value);
                }
                anyhow::Ok(())
            })();
            (api.fwt_cursor_close)(cursor);
            read?;
        }
        Ok(out)
    }
}

/// The counters `STATS` names, from the statistics cursor.
pub(super) fn counters(engine: &WiredTiger) -> Counters {
    let stats = engine.statistics().unwrap_or_default();
    STATS
        .iter()
        .filter_map(|(name, desc)| stats.get(*desc).map(|v| (name.to_string(), *v as f64)))
        .collect()
}

/// A step's figures from the counters before and after it.
pub(super) fn step_stats(before: &Counters, after: &Counters) -> EngineStats {
    let d = |k: &str| delta(before, after, k);
    let mut s = BTreeMap::new();
    for (k, scale) in [
        ("cache_read_bytes", GB),
        ("cache_written_bytes", GB),
        ("block_read_bytes", GB),
        ("block_written_bytes", GB),
        ("log_bytes", GB),
    ] {
        s.insert(k.replace("_bytes", "_gb"), d(k) / scale);
    }
    s.insert(
        "pages_evicted".into(),
        d("pages_evicted") + d("modified_pages_evicted"),
    );
    for k in PLAIN_COUNTERS {
        s.insert(k.to_string(), d(k));
    }
    s.insert("checkpoint_secs".into(), d("checkpoint_msecs") / 1000.0);
    s.insert("checkpoints".into(), d("checkpoints"));
    s.insert(
        "cache_gb".into(),
        after.get("cache_bytes").copied().unwrap_or(0.0) / GB,
    );
    EngineStats::other(s)
}
