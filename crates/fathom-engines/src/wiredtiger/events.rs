//! WiredTiger's account of a step's background work, from its statistics log (fathom opens the
//! connection with `statistics_log=(wait=1,json=true)`: a JSON record of the connection's
//! statistics each second in `WiredTigerStat.DAY.HOUR` beside the data): a checkpoint ended
//! between two records when `transaction checkpoints` grew, and ran for `transaction checkpoint
//! most recent time (msecs)` before it; client threads evicted pages themselves (the cache too
//! full for the eviction threads) between two records when `pages evicted by application
//! threads` grew. Records are a second apart, so an event spans every moment it may have been
//! in: from the earlier record less its length to the later one.

use crate::logtime;
use fathom_api::events::{EngineEvent, CHECKPOINT, EVICTION};
use serde_json::Value;
use std::path::Path;

/// One record of the log: when, and the figures read from it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Record {
    us: u64,
    checkpoints: u64,
    running: bool,
    last_ms: u64,
    evicted_by_clients: u64,
}

/// The events between `from_us` and `to_us` (Unix microseconds) from the statistics log in
/// `dir`.
pub(super) fn read(dir: &Path, from_us: u64, to_us: u64) -> Vec<EngineEvent> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut records: Vec<Record> = entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("WiredTigerStat.")
        })
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .flat_map(|text| text.lines().filter_map(record).collect::<Vec<_>>())
        .collect();
    records.sort_by_key(|r| r.us);
    events(&records, from_us, to_us)
}

/// The log's local time (`2026-11-30T22:40:25.000Z`, written from `localtime` whatever its
/// `Z`) in Unix microseconds.
fn local_us(text: &str) -> Option<u64> {
    let n = |r| logtime::num(text, r);
    let civil = logtime::utc_us(
        n(0..4)?,
        n(5..7)?,
        n(8..10)?,
        (n(11..13)?, n(14..16)?, n(17..19)?),
        n(20..23)? * 1000,
    )?;
    let offset_us = local_offset_s() * 1_000_000;
    u64::try_from(civil as i64 - offset_us).ok()
}

/// This host's offset of local time from UTC now, seconds.
fn local_offset_s() -> i64 {
    // SAFETY: time and localtime_r write only to the locals given.
    unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

/// One line of the log.
fn record(line: &str) -> Option<Record> {
    let v: Value = serde_json::from_str(line).ok()?;
    let stats = v.get("wiredTiger")?;
    let n = |group: &str, name: &str| stats.get(group)?.get(name)?.as_u64();
    Some(Record {
        us: local_us(v.get("localTime")?.as_str()?)?,
        checkpoints: n("transaction", "transaction checkpoints")?,
        running: n("transaction", "transaction checkpoint currently running")? > 0,
        last_ms: n(
            "transaction",
            "transaction checkpoint most recent time (msecs)",
        )
        .unwrap_or(0),
        evicted_by_clients: n("cache", "pages evicted by application threads").unwrap_or(0),
    })
}

/// The checkpoints and client evictions the records show, those overlapping `[from, to]`.
fn events(records: &[Record], from_us: u64, to_us: u64) -> Vec<EngineEvent> {
    let mut out = Vec::new();
    for w in records.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b.checkpoints > a.checkpoints {
            let n = b.checkpoints - a.checkpoints;
            let detail = if n == 1 {
                format!("{} ms", b.last_ms)
            } else {
                format!("{n} checkpoints, the last {} ms", b.last_ms)
            };
            out.push(EngineEvent {
                what: CHECKPOINT.into(),
                start_us: a.us.saturating_sub(b.last_ms * 1000),
                end_us: b.us,
                detail,
                seen_us: None,
            });
        }
        if b.evicted_by_clients > a.evicted_by_clients {
            out.push(EngineEvent {
                what: EVICTION.into(),
                start_us: a.us,
                end_us: b.us,
                detail: format!(
                    "{} pages evicted by client threads",
                    b.evicted_by_clients - a.evicted_by_clients
                ),
                seen_us: None,
            });
        }
    }
    // A checkpoint still running at the last record goes on to the window's end.
    if let Some(last) = records.last().filter(|r| r.running) {
        out.push(EngineEvent {
            what: CHECKPOINT.into(),
            start_us: last.us.saturating_sub(1_000_000),
            end_us: to_us.max(last.us),
            detail: "running at the end".into(),
            seen_us: None,
        });
    }
    out.retain(|e| e.overlaps(from_us, to_us));
    for e in &mut out {
        e.end_us = e.end_us.min(to_us);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(time: &str, checkpoints: u64, running: u8, last_ms: u64, evicted: u64) -> String {
        format!(
            r#"{{"version":"WiredTiger 3.2.1","localTime":"{time}","wiredTiger":{{"transaction":{{"transaction checkpoints":{checkpoints},"transaction checkpoint currently running":{running},"transaction checkpoint most recent time (msecs)":{last_ms}}},"cache":{{"pages evicted by application threads":{evicted}}}}}}}"#
        )
    }

    /// A checkpoint of 400 ms ended between the second and third records; client threads
    /// evicted pages between the third and the fourth; one still runs at the last.
    #[test]
    fn checkpoints_and_client_evictions_from_the_log() {
        let lines = [
            line("2026-11-30T22:40:25.000Z", 3, 0, 100, 10),
            line("2026-11-30T22:40:26.000Z", 3, 1, 100, 10),
            line("2026-11-30T22:40:27.000Z", 4, 0, 400, 10),
            line("2026-11-30T22:40:28.000Z", 4, 1, 400, 25),
        ];
        let records: Vec<Record> = lines.iter().filter_map(|l| record(l)).collect();
        assert_eq!(records.len(), 4);
        let t0 = records[0].us;
        let ev = events(&records, 0, u64::MAX);
        let got: Vec<(&str, u64, u64, &str)> = (ev.iter())
            .map(|e| {
                let (s, e2) = (e.start_us - t0, e.end_us.min(t0 + 9_000_000) - t0);
                (e.what.as_str(), s, e2, e.detail.as_str())
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("checkpoint", 600_000, 2_000_000, "400 ms"),
                (
                    "eviction",
                    2_000_000,
                    3_000_000,
                    "15 pages evicted by client threads"
                ),
                ("checkpoint", 2_000_000, 9_000_000, "running at the end"),
            ]
        );
        assert!(record("not json").is_none());
    }
}
