//! What RocksDB did in the background during a step, from its LOG: flushes and compactions
//! from its event log (`EVENT_LOG_v1` lines, a job's start and finish in Unix microseconds) and
//! writes stalled or stopped from its warnings ("Stalling writes because …", "Stopping writes
//! because …"). RocksDB logs no end of a stall: one for too many memtables lasts until a flush
//! finishes after it, one for level-0 files or pending compaction bytes until a compaction
//! does (when RocksDB weighs its conditions again), or until the window ends. A warning
//! carries only the LOG's local time: its offset from Unix time is read off the event lines,
//! which carry both.

use crate::logtime::{num, utc_us};
use fathom_api::events::{EngineEvent, COMPACTION, FLUSH, STALL, STOP};
use std::collections::HashMap;
use std::path::Path;

/// The events of the LOG in `dir` that overlap `[from_us, to_us]`, oldest first.
pub(super) fn read(dir: &Path, from_us: u64, to_us: u64) -> Vec<EngineEvent> {
    match std::fs::read_to_string(dir.join("LOG")) {
        Ok(text) => parse(&text, from_us, to_us),
        Err(_) => Vec::new(),
    }
}

/// A job begun and not yet seen to finish.
struct Open {
    what: &'static str,
    start_us: u64,
    detail: String,
}

fn parse(text: &str, from_us: u64, to_us: u64) -> Vec<EngineEvent> {
    let offset = text.lines().find_map(local_offset_us);
    let mut log = Log::default();
    for line in text.lines() {
        if let Some(e) = event_line(line) {
            log.event(&e);
        } else if let Some((what, why)) = stall_line(line) {
            let at = offset.and_then(|o| local_us(line).map(|l| l.saturating_add_signed(o)));
            if let Some(at) = at {
                log.warned(what, why, at);
            }
        }
    }
    log.ended(from_us, to_us)
}

/// The LOG read so far: jobs begun and not yet finished, writes held back, events complete.
#[derive(Default)]
struct Log {
    open: HashMap<u64, Open>,
    /// Writes held back for want of a flush, and for want of a compaction: two conditions,
    /// each ended by its own kind of work.
    stalled: [Option<Stalled>; 2],
    out: Vec<EngineEvent>,
}

impl Log {
    /// An event-log line: a job begun or finished.
    fn event(&mut self, e: &serde_json::Value) {
        let (Some(t), Some(job)) = (e["time_micros"].as_u64(), e["job"].as_u64()) else {
            return;
        };
        let (what, detail) = match e["event"].as_str().unwrap_or("") {
            "flush_started" => (FLUSH, mib("", e["total_data_size"].as_u64())),
            "compaction_started" => (COMPACTION, compaction_inputs(e)),
            "trivial_move" => return relieve(&mut self.out, &mut self.stalled[COMPACTED], t),
            finish @ ("flush_finished" | "compaction_finished") => {
                let track = usize::from(finish == "compaction_finished");
                relieve(&mut self.out, &mut self.stalled[track], t);
                return self.finished(job, t, e);
            }
            _ => return,
        };
        let start_us = t;
        self.open.insert(
            job,
            Open {
                what,
                start_us,
                detail,
            },
        );
    }

    /// Job `job` finished at `t`.
    fn finished(&mut self, job: u64, t: u64, e: &serde_json::Value) {
        let Some(o) = self.open.remove(&job) else {
            return;
        };
        let mut detail = o.detail;
        if let Some(level) = e["output_level"].as_u64() {
            detail = format!("{detail} -> L{level}");
            detail.push_str(&mib(",", e["total_output_size"].as_u64()));
        }
        self.out.push(EngineEvent {
            what: o.what.into(),
            start_us: o.start_us,
            end_us: t,
            detail: detail.trim().to_string(),
            seen_us: None,
        });
    }

    /// A stall or stop warning at `at`.
    fn warned(&mut self, what: &'static str, why: String, at: u64) {
        let track = &mut self.stalled[if why.contains("memtable") {
            FLUSHED
        } else {
            COMPACTED
        }];
        // A repeated warning continues the stall it repeats; a stop after a stall ends it.
        if track.as_ref().is_some_and(|s| s.what != what) {
            end_stall(&mut self.out, track, at);
        }
        let start_us = at;
        track.get_or_insert(Stalled {
            what,
            start_us,
            why,
        });
    }

    /// The events overlapping `[from_us, to_us]`, oldest first, what still went on ending at
    /// `to_us`.
    fn ended(mut self, from_us: u64, to_us: u64) -> Vec<EngineEvent> {
        for track in &mut self.stalled {
            end_stall(&mut self.out, track, to_us);
        }
        for o in self.open.into_values() {
            self.out.push(EngineEvent {
                what: o.what.into(),
                start_us: o.start_us,
                end_us: to_us,
                detail: o.detail,
                seen_us: None,
            });
        }
        let mut out = self.out;
        out.retain(|e| e.overlaps(from_us, to_us));
        out.sort_by_key(|e| (e.start_us, e.end_us));
        out
    }
}

/// The stall conditions a flush ends, and those a compaction (or a trivial move) ends.
const FLUSHED: usize = 0;
const COMPACTED: usize = 1;

/// Writes stalled or stopped since `start_us`.
struct Stalled {
    what: &'static str,
    start_us: u64,
    why: String,
}

/// Work of the kind a stall waits for finished at `t`: a stall that began before ends.
fn relieve(out: &mut Vec<EngineEvent>, stalled: &mut Option<Stalled>, t: u64) {
    if stalled.as_ref().is_some_and(|s| t >= s.start_us) {
        end_stall(out, stalled, t);
    }
}

/// A stall going on ends at `at`.
fn end_stall(out: &mut Vec<EngineEvent>, stalled: &mut Option<Stalled>, at: u64) {
    if let Some(s) = stalled.take() {
        out.push(EngineEvent {
            what: s.what.to_string(),
            start_us: s.start_us,
            end_us: at.max(s.start_us),
            detail: s.why,
            seen_us: None,
        });
    }
}

/// The JSON of an `EVENT_LOG_v1` line.
fn event_line(line: &str) -> Option<serde_json::Value> {
    let json = &line[line.find("EVENT_LOG_v1 ")? + "EVENT_LOG_v1 ".len()..];
    serde_json::from_str(json).ok()
}

/// A stall or stop warning: which, and why (`we have 4 level-0 files`).
fn stall_line(line: &str) -> Option<(&'static str, String)> {
    for (what, said) in [
        (STOP, "Stopping writes because "),
        (STALL, "Stalling writes because "),
    ] {
        if let Some(i) = line.find(said) {
            return Some((what, line[i + said.len()..].trim().to_string()));
        }
    }
    None
}

/// An event line's Unix time less its LOG time, microseconds.
fn local_offset_us(line: &str) -> Option<i64> {
    let unix = event_line(line)?["time_micros"].as_u64()?;
    Some(unix as i64 - local_us(line)? as i64)
}

/// A line's LOG time (`2026/11/30-18:28:04.633749`, local time) as if it were UTC, microseconds.
fn local_us(line: &str) -> Option<u64> {
    let stamp = line.get(..26)?;
    let n = |r| num(stamp, r);
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    utc_us(y, m, d, (n(11..13)?, n(14..16)?, n(17..19)?), n(20..26)?)
}

/// A compaction's input levels (`L0+L1`), from its `files_L<n>` lists.
fn compaction_inputs(e: &serde_json::Value) -> String {
    let mut levels: Vec<u64> = (e.as_object().into_iter().flatten())
        .filter_map(|(k, _)| k.strip_prefix("files_L")?.parse().ok())
        .collect();
    levels.sort_unstable();
    let names: Vec<String> = levels.iter().map(|l| format!("L{l}")).collect();
    let mut s = names.join("+");
    s.push_str(&mib(",", e["input_data_size"].as_u64()));
    s
}

fn mib(sep: &str, bytes: Option<u64>) -> String {
    bytes.map_or_else(String::new, |b| {
        format!("{sep} {:.1} MiB", b as f64 / f64::from(1 << 20))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
2026/11/30-18:28:04.602575 1398 EVENT_LOG_v1 {\"time_micros\": 1796063284602568, \"job\": 3, \"event\": \"flush_started\", \"total_data_size\": 980094}
2026/11/30-18:28:04.607373 1398 (Original Log Time 2026/11/30-18:28:04.607250) EVENT_LOG_v1 {\"time_micros\": 1796063284607246, \"job\": 3, \"event\": \"flush_finished\", \"lsm_state\": [4, 0]}
2026/11/30-18:28:04.633749 1398 [WARN] [/column_family.cc:1086] [default] Stopping writes because we have 4 level-0 files
2026/11/30-18:28:04.640000 1398 [WARN] [/column_family.cc:1086] [default] Stopping writes because we have 4 level-0 files
2026/11/30-18:28:04.644685 1399 EVENT_LOG_v1 {\"time_micros\": 1796063284644676, \"job\": 8, \"event\": \"compaction_started\", \"files_L0\": [195, 193], \"files_L1\": [7], \"input_data_size\": 2072186}
2026/11/30-18:28:04.661247 1399 (Original Log Time 2026/11/30-18:28:04.661206) EVENT_LOG_v1 {\"time_micros\": 1796063284661199, \"job\": 8, \"event\": \"compaction_finished\", \"output_level\": 1, \"total_output_size\": 2044890}
2026/11/30-18:28:05.000000 1398 [WARN] [/column_family.cc:1000] [default] Stalling writes because we have 3 level-0 files rate 16777216
";

    #[test]
    fn flushes_compactions_and_stalls_on_the_unix_clock() {
        let from = 1_796_063_284_000_000;
        let to = 1_796_063_285_500_000;
        let ev = parse(LOG, from, to);
        let got: Vec<(&str, u64, u64)> = ev
            .iter()
            .map(|e| (e.what.as_str(), e.start_us, e.end_us))
            .collect();
        // The LOG's clock is 7 µs ahead of the event's own in the first line.
        assert_eq!(
            got,
            vec![
                (FLUSH, 1_796_063_284_602_568, 1_796_063_284_607_246),
                // The stop begins at its first warning and ends with the compaction.
                (STOP, 1_796_063_284_633_742, 1_796_063_284_661_199),
                (COMPACTION, 1_796_063_284_644_676, 1_796_063_284_661_199),
                (STALL, 1_796_063_284_999_993, to),
            ]
        );
        assert_eq!(ev[2].detail, "L0+L1, 2.0 MiB -> L1, 2.0 MiB");
        assert_eq!(ev[1].detail, "we have 4 level-0 files");
        // Before the first event: nothing.
        assert!(parse(LOG, from - 10, from - 1).is_empty());
    }

    /// The flush whose result stopped writes is logged after the warning, stamped before it:
    /// the stop lasts until the next flush finishes.
    #[test]
    fn a_memtable_stop_ends_with_a_flush_finished_after_it() {
        let log = "\
2026/11/30-18:28:04.000000 1 EVENT_LOG_v1 {\"time_micros\": 1796063284000000, \"job\": 1, \"event\": \"flush_started\"}
2026/11/30-18:28:04.100000 1 [WARN] [default] Stopping writes because we have 2 immutable memtables (waiting for flush)
2026/11/30-18:28:04.100100 1 EVENT_LOG_v1 {\"time_micros\": 1796063284099000, \"job\": 1, \"event\": \"flush_finished\"}
2026/11/30-18:28:04.102000 1 EVENT_LOG_v1 {\"time_micros\": 1796063284102000, \"job\": 2, \"event\": \"compaction_started\"}
2026/11/30-18:28:04.103000 1 EVENT_LOG_v1 {\"time_micros\": 1796063284103000, \"job\": 2, \"event\": \"compaction_finished\"}
2026/11/30-18:28:04.104000 1 EVENT_LOG_v1 {\"time_micros\": 1796063284104000, \"job\": 3, \"event\": \"flush_started\"}
2026/11/30-18:28:04.105000 1 EVENT_LOG_v1 {\"time_micros\": 1796063284105000, \"job\": 3, \"event\": \"flush_finished\"}
";
        let ev = parse(log, 1_796_063_284_000_000, 1_796_063_285_000_000);
        let stop = ev.iter().find(|e| e.what == STOP).unwrap();
        assert_eq!(
            (stop.start_us, stop.end_us),
            (1_796_063_284_100_000, 1_796_063_284_105_000)
        );
    }

    #[test]
    fn a_log_time_is_read_as_utc() {
        assert_eq!(
            local_us("2026/11/30-18:28:04.602575 x"),
            Some(1_796_063_284_602_575)
        );
    }
}
