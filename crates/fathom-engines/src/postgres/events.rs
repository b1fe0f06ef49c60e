//! What PostgreSQL did in the background during a step, from the log of a server fathom
//! started: checkpoints ("checkpoint starting: wal" … "checkpoint complete: wrote N buffers")
//! and autovacuum's and autoanalyze's runs (logged when they end, with their elapsed time).
//! fathom's config has the server log both, in UTC, with the default line prefix (`%m [%p] `).

use crate::logtime::{num, utc_us};
use fathom_api::events::{EngineEvent, CHECKPOINT, VACUUM};

/// The postgresql.conf lines that make the log tell what `parse` reads.
pub(super) const CONF: &[&str] = &[
    "log_checkpoints = on",
    "log_autovacuum_min_duration = 0",
    "log_timezone = 'UTC'",
    "log_line_prefix = '%m [%p] '",
];

/// The events of the log `text` that overlap `[from_us, to_us]`, oldest first.
pub(super) fn parse(text: &str, from_us: u64, to_us: u64) -> Vec<EngineEvent> {
    let mut out = Vec::new();
    let mut checkpoint: Option<(u64, String)> = None;
    // An autovacuum's message: when it was logged, and of what, until its `elapsed:` line.
    let mut vacuum: Option<(u64, String)> = None;
    let mut at = 0;
    for line in text.lines() {
        if let Some(t) = stamp_us(line) {
            at = t;
            vacuum = None;
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
            });
            vacuum = None;
        }
    }
    if let Some((start_us, why)) = checkpoint {
        out.push(EngineEvent {
            what: CHECKPOINT.into(),
            start_us,
            end_us: to_us.max(start_us),
            detail: why,
        });
    }
    out.retain(|e| e.overlaps(from_us, to_us));
    out.sort_by_key(|e| (e.start_us, e.end_us));
    out
}

fn after<'l>(line: &'l str, said: &str) -> Option<&'l str> {
    line.find(said).map(|i| &line[i + said.len()..])
}

/// `elapsed: 0.05 s` in a line of an autovacuum's message.
fn elapsed_s(line: &str) -> Option<f64> {
    let rest = after(line, "elapsed: ")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// A line's time (`2026-11-30 18:28:04.602 UTC …`), Unix microseconds.
fn stamp_us(line: &str) -> Option<u64> {
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
