//! WiredTiger's statistics cursor, read into the counters fathom keeps and the per-step
//! figures reports show (bytes through the cache and the block manager, eviction, checkpoints,
//! and where a client's time goes).

use super::api::Cur;
use super::WiredTiger;
use fathom_api::stats::EngineStats;
use fathom_api::target::{delta, Counters};
use fathom_api::units::GIB as GB;
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};
use std::ptr;

/// WiredTiger statistics kept as counters: (our name, WiredTiger's descriptions, the first a
/// release has winning: releases renamed some, e.g. 2.x's lookaside table became 3.x's cache
/// overflow table and 10.x's history store).
#[rustfmt::skip]
const STATS: &[(&str, &[&str])] = &[
    ("cache_read_bytes", &["cache: bytes read into cache"]),
    ("cache_written_bytes", &["cache: bytes written from cache"]),
    ("cache_bytes", &["cache: bytes currently in the cache"]),
    ("cache_dirty_bytes", &["cache: tracked dirty bytes in the cache"]),
    ("cache_max_bytes", &["cache: maximum bytes configured"]),
    // Updates and other structures beside the pages' images (3.x on).
    ("cache_not_pages_bytes", &["cache: bytes not belonging to page images in the cache"]),
    ("pages_evicted", &["cache: unmodified pages evicted"]),
    ("modified_pages_evicted", &["cache: modified pages evicted"]),
    ("block_read_bytes", &["block-manager: bytes read"]),
    ("block_written_bytes", &["block-manager: bytes written"]),
    ("checkpoint_msecs", &["transaction: transaction checkpoint total time (msecs)"]),
    ("checkpoints", &["transaction: transaction checkpoints"]),
    ("log_bytes", &["log: log bytes written"]),
    ("pages_read", &["cache: pages read into cache"]),
    ("pages_requested", &["cache: pages requested from the cache"]),
    // Who evicts: the eviction server, its worker threads, or the clients' own threads when
    // the cache is past its trigger (10.x counts attempts).
    ("evict_by_server", &["cache: eviction server evicting pages", "cache: evict page attempts by eviction server"]),
    ("evict_by_workers", &["cache: eviction worker thread evicting pages", "cache: evict page attempts by eviction worker threads"]),
    ("app_evicted", &["cache: pages evicted by application threads", "cache: page evict attempts by application threads"]),
    ("app_evict_usecs", &["thread-yield: application thread time evicting (usecs)", "cache: application thread time evicting (usecs)"]),
    ("app_cache_wait_usecs", &["thread-yield: application thread time waiting for cache (usecs)"]),
    // Old versions of updates written out of the cache to make room.
    ("overflow_inserts", &["cache: history store table insert calls", "cache: cache overflow table insert calls", "cache: lookaside table insert calls"]),
    ("pinned_txn_range", &["transaction: transaction range of IDs currently pinned"]),
    ("sessions_open", &["session: open session count"]),
    ("cursors_open", &["cursor: open cursor count", "session: open cursor count"]),
    ("txn_begins", &["transaction: transaction begins"]),
    ("txn_rollbacks", &["transaction: transactions rolled back"]),
    ("cursor_next", &["cursor: cursor next calls"]),
    ("cursor_prev", &["cursor: cursor prev calls"]),
    ("cursor_search", &["cursor: cursor search calls"]),
    ("cursor_search_near", &["cursor: cursor search near calls"]),
];

/// Counters reported per step as they are (WiredTiger's own names in `STATS`): where its time
/// goes (pages read into the cache, eviction by its own threads and by the clients' threads
/// and their waits for cache room, old versions written out of the cache, transactions rolled
/// back on conflicts, cursor calls).
const PLAIN_COUNTERS: &[&str] = &[
    "pages_read",
    "pages_requested",
    "evict_by_server",
    "evict_by_workers",
    "app_evicted",
    "app_evict_usecs",
    "app_cache_wait_usecs",
    "overflow_inserts",
    "txn_begins",
    "txn_rollbacks",
    "cursor_next",
    "cursor_prev",
    "cursor_search",
    "cursor_search_near",
];

/// Gauges reported as they stood at the step's end: the oldest transaction's distance from
/// the newest (a snapshot held open pins every version since), and the sessions and cursors
/// open.
const GAUGES: &[&str] = &["pinned_txn_range", "sessions_open", "cursors_open"];

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
    picked(&engine.statistics().unwrap_or_default())
}

/// The counters `STATS` names, each under the first of its descriptions the release has.
fn picked(stats: &BTreeMap<String, i64>) -> Counters {
    STATS
        .iter()
        .filter_map(|(name, descs)| {
            let value = descs.iter().find_map(|d| stats.get(*d))?;
            Some((name.to_string(), *value as f64))
        })
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
    let gauge = |k: &str| after.get(k).copied();
    for k in GAUGES {
        if let Some(v) = gauge(k) {
            s.insert(k.to_string(), v);
        }
    }
    if let Some(v) = gauge("cache_not_pages_bytes") {
        s.insert("cache_not_pages_gb".into(), v / GB);
    }
    EngineStats {
        cache_gb: gauge("cache_bytes").map(|b| b / GB),
        cache_dirty_gb: gauge("cache_dirty_bytes").map(|b| b / GB),
        cache_max_gb: gauge("cache_max_bytes").map(|b| b / GB),
        ..EngineStats::other(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Releases name some statistics differently: 2.x's lookaside table, 3.x's cache overflow
    /// table and 10.x's history store are one counter here; a statistic the release lacks is
    /// absent, not 0.
    #[test]
    fn each_release_names_its_statistics() {
        let of = |pairs: &[(&str, i64)]| {
            picked(
                &pairs
                    .iter()
                    .map(|(d, v)| (d.to_string(), *v))
                    .collect::<BTreeMap<_, _>>(),
            )
        };
        let old = of(&[
            ("cache: lookaside table insert calls", 7),
            ("session: open cursor count", 3),
            ("cache: eviction worker thread evicting pages", 11),
        ]);
        let new = of(&[
            ("cache: history store table insert calls", 9),
            ("cursor: open cursor count", 4),
            ("cache: evict page attempts by eviction worker threads", 12),
            ("cache: tracked dirty bytes in the cache", 1 << 20),
        ]);
        assert_eq!(old["overflow_inserts"], 7.0);
        assert_eq!(new["overflow_inserts"], 9.0);
        assert_eq!((old["cursors_open"], new["cursors_open"]), (3.0, 4.0));
        assert_eq!(
            (old["evict_by_workers"], new["evict_by_workers"]),
            (11.0, 12.0)
        );
        assert!(!old.contains_key("cache_dirty_bytes"));
        let stats = step_stats(&Counters::new(), &new);
        assert_eq!(stats.cache_dirty_gb, Some(1.0 / 1024.0));
        assert_eq!(stats.cache_gb, None);
    }
}
