//! What PostgreSQL did in the background during a step, from the log of a server fathom
//! started: checkpoints ("checkpoint starting: wal" … "checkpoint complete: wrote N buffers"),
//! autovacuum's and autoanalyze's runs (logged when they end, with their elapsed time), and
//! sessions' lock waits longer than `deadlock_timeout` ("process N still waiting for ShareLock
//! on transaction T after 1000.1 ms", then "process N acquired ... after 1523.4 ms"). fathom's
//! config has the server log them, in UTC, with the default line prefix (`%m [%p] `).

use crate::logtime::{num, utc_us};
use fathom_api::events::{EngineEvent, CHECKPOINT, LOCK_WAIT, VACUUM};

/// The postgresql.conf lines that make the log tell what `parse` reads.
pub(super) const CONF: &[&str] = &[
    "log_checkpoints = on",
    "log_autovacuum_min_duration = 0",
    "log_lock_waits = on",
    "log_timezone = 'UTC'",
    "log_line_prefix = '%m [%p] '",
];

/// The events of the log `text` that overlap `[from_us, to_us]`, oldest first.
pub(super) fn parse(text: &str, from_us: u64, to_us: u64) -> Vec<EngineEvent> {
    let mut out = Vec::new();
    let mut checkpoint: Option<(u64, String)> = None;
    // An autovacuum's message: when it was logged, and of what, until its `elapsed:` line.
    let mut vacuum: Option<(u64, String)> = None;
    let mut waits = LockWaits::default();
    let mut at = 0;
    for line in text.lines() {
        if let Some(t) = stamp_us(line) {
            at = t;
            vacuum = None;
            out.extend(waits.line(at, line));
        }
        if let Some(why) = after(line, "LOG:  checkpoint starting: ") {
            checkpoint = Some((at, why.trim().to_string()));
        } else if let Some(done) = after(line, "LOG:  checkpoint complete: ") {
            if let Some((start_us, why)) = checkpoint.take() {
                let wrote = done.split(';').next().unwrap_or("").trim();
                out.push(EngineEvent {
                    what: CHECKPOINT.into(),
                    start_us,
                    end_us: at.max(start_us),
                    detail: format!("{why}, {wrote}"),
                    seen_us: None,
                });
            }
        } else if let Some(of) = after(line, "LOG:  automatic vacuum of table ")
            .or_else(|| after(line, "LOG:  automatic analyze of table "))
        {
            let table = of.split(':').next().unwrap_or(of).trim_matches('"');
            let what = if line.contains("analyze") {
                "analyze"
            } else {
                "vacuum"
            };
            vacuum = Some((at, format!("{what} {table}")));
        }
        if let (Some((end_us, detail)), Some(secs)) = (&vacuum, elapsed_s(line)) {
            out.push(EngineEvent {
                what: VACUUM.into(),
                start_us: end_us.saturating_sub((secs * 1e6) as u64),
                end_us: *end_us,
                detail: detail.clone(),
                seen_us: None,
            });
            vacuum = None;
        }
    }
    out.extend(waits.unfinished(to_us));
    if let Some((start_us, why)) = checkpoint {
        out.push(EngineEvent {
            what: CHECKPOINT.into(),
            start_us,
            end_us: to_us.max(start_us),
            detail: why,
            seen_us: None,
        });
    }
    out.retain(|e| e.overlaps(from_us, to_us));
    out.sort_by_key(|e| (e.start_us, e.end_us));
    out
}

/// The sessions waiting for a lock, by the waiting process's pid: since when, for what, and
/// who held it.
#[derive(Default)]
struct LockWaits {
    waiting: Vec<Wait>,
}

struct Wait {
    pid: String,
    start_us: u64,
    lock: String,
    holder: String,
}

impl Wait {
    fn event(&self, end_us: u64) -> EngineEvent {
        let held = match self.holder.as_str() {
            "" => String::new(),
            h => format!(", held by process {h}"),
        };
        EngineEvent {
            what: LOCK_WAIT.into(),
            start_us: self.start_us,
            end_us: end_us.max(self.start_us),
            detail: format!("process {} waited for {}{held}", self.pid, self.lock),
            seen_us: None,
        }
    }
}

impl LockWaits {
    /// A stamped line at `at`: a wait begun (its start `after` ms before), or ended (the event,
    /// also when the waiting process reports an error instead: a deadlock, a cancel); a
    /// `DETAIL` or `CONTEXT` line of a wait says who held the lock and on what.
    fn line(&mut self, at: u64, line: &str) -> Option<EngineEvent> {
        let pid = line.get(29..)?.split(']').next()?.to_string();
        if let Some(said) = after(line, "LOG:  process ") {
            return self.said(pid, at, said);
        }
        let i = self.waiting.iter().position(|w| w.pid == pid)?;
        if let Some(h) = after(line, "DETAIL:  Process holding the lock: ") {
            self.waiting[i].holder = h.split('.').next().unwrap_or(h).to_string();
        } else if let Some(c) = after(line, "CONTEXT:  ") {
            self.waiting[i].lock.push_str(&format!(" ({})", c.trim()));
        } else if line.contains("ERROR:  ") {
            return Some(self.waiting.remove(i).event(at));
        }
        None
    }

    /// `said`, after "process ": "N still waiting for LOCK after MS ms" or "N acquired LOCK
    /// after MS ms".
    fn said(&mut self, pid: String, at: u64, said: &str) -> Option<EngineEvent> {
        let (lock, waited_ms) = said.rsplit_once(" after ")?;
        let ms: f64 = waited_ms.trim_end_matches(" ms").trim().parse().ok()?;
        let start_us = at.saturating_sub((ms * 1e3) as u64);
        let new = |lock: &str| Wait {
            pid: pid.clone(),
            start_us,
            lock: lock.to_string(),
            holder: String::new(),
        };
        if let Some((_, lock)) = lock.split_once(" still waiting for ") {
            self.waiting.retain(|w| w.pid != pid);
            self.waiting.push(new(lock));
            return None;
        }
        let (_, lock) = lock.split_once(" acquired ")?;
        let wait = match self.waiting.iter().position(|w| w.pid == pid) {
            Some(i) => self.waiting.remove(i),
            None => new(lock),
        };
        Some(wait.event(at))
    }

    /// The waits still going at `to_us`, ending there.
    fn unfinished(self, to_us: u64) -> impl Iterator<Item = EngineEvent> {
        self.waiting.into_iter().map(move |w| w.event(to_us))
    }
}

pub(super) fn after<'l>(line: &'l str, said: &str) -> Option<&'l str> {
    line.find(said).map(|i| &line[i + said.len()..])
}

/// `elapsed: 0.05 s` in a line of an autovacuum's message.
fn elapsed_s(line: &str) -> Option<f64> {
    let rest = after(line, "elapsed: ")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// A line's time (`2026-11-30 18:28:04.602 UTC …`), Unix microseconds.
pub(super) fn stamp_us(line: &str) -> Option<u64> {
    if line.get(23..27) != Some(" UTC") {
        return None;
    }
    let n = |r| num(line, r);
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    utc_us(
        y,
        m,
        d,
        (n(11..13)?, n(14..16)?, n(17..19)?),
        n(20..23)? * 1000,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
2026-11-30 18:28:04.000 UTC [100] LOG:  checkpoint starting: wal
2026-11-30 18:28:05.500 UTC [101] LOG:  automatic vacuum of table \"fathom.public.sbtest1\": index scans: 1
\tpages: 0 removed, 1000 remain, 1000 scanned (100.00% of total)
\tsystem usage: CPU: user: 0.10 s, system: 0.01 s, elapsed: 0.50 s
2026-11-30 18:28:06.250 UTC [100] LOG:  checkpoint complete: wrote 1234 buffers (7.5%); 0 WAL file(s) added, 0 removed, 1 recycled; write=2.1 s, sync=0.1 s, total=2.250 s
2026-11-30 18:28:07.000 UTC [100] LOG:  checkpoint starting: time
";

    /// A wait that ended with the lock, and one still going at the window's end: each from its
    /// start (its first line's time less the milliseconds it says it had waited) to its end,
    /// with the lock, the tuple and the holder.
    #[test]
    fn lock_waits_from_their_start_to_the_lock_acquired() {
        let log = "\
2026-11-30 18:28:05.000 UTC [200] LOG:  process 200 still waiting for ShareLock on transaction 77 after 1000.000 ms
2026-11-30 18:28:05.000 UTC [200] DETAIL:  Process holding the lock: 201. Wait queue: 200.
2026-11-30 18:28:05.000 UTC [200] CONTEXT:  while updating tuple (0,1) in relation \"sbtest1\"
2026-11-30 18:28:05.000 UTC [200] STATEMENT:  UPDATE sbtest1 SET c=$1 WHERE id=$2
2026-11-30 18:28:05.500 UTC [200] LOG:  process 200 acquired ShareLock on transaction 77 after 1500.250 ms
2026-11-30 18:28:06.000 UTC [202] LOG:  process 202 still waiting for ShareLock on transaction 78 after 100.000 ms
";
        let base = 1_796_063_284_000_000;
        let ev = parse(log, base, base + 10_000_000);
        let got: Vec<(u64, u64, &str)> = (ev.iter())
            .map(|e| (e.start_us - base, e.end_us - base, e.detail.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    0,
                    1_500_000,
                    "process 200 waited for ShareLock on transaction 77 (while updating tuple \
                     (0,1) in relation \"sbtest1\"), held by process 201"
                ),
                (
                    1_900_000,
                    10_000_000,
                    "process 202 waited for ShareLock on transaction 78"
                ),
            ]
        );
        assert!(ev.iter().all(|e| e.what == LOCK_WAIT));
    }

    #[test]
    fn checkpoints_and_autovacuum_on_the_unix_clock() {
        let base = 1_796_063_284_000_000;
        let ev = parse(LOG, base, base + 10_000_000);
        let got: Vec<(&str, u64, u64, &str)> = (ev.iter())
            .map(|e| {
                (
                    e.what.as_str(),
                    e.start_us - base,
                    e.end_us - base,
                    e.detail.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (CHECKPOINT, 0, 2_250_000, "wal, wrote 1234 buffers (7.5%)"),
                (VACUUM, 1_000_000, 1_500_000, "vacuum fathom.public.sbtest1"),
                // Still going at the window's end.
                (CHECKPOINT, 3_000_000, 10_000_000, "time"),
            ]
        );
    }
}
