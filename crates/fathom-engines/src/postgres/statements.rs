//! Every statement's work from the log of a PostgreSQL fathom started with `statement_log`:
//! `auto_explain` logs each statement's plan when it ends, run with `ANALYZE` and `BUFFERS`
//! (timing per node off), and the plan's top node counts the buffers of the whole statement —
//! the `EXPLAIN (ANALYZE, BUFFERS)` of each statement as it ran. Its line is stamped to the
//! millisecond when the statement ended, with the backend's pid (the session).

use super::events::{after, stamp_us};
use crate::server::statements::shape;
use fathom_api::work::{Counts, Statement, StatementLog};

/// The postgresql.conf lines that have every statement's plan logged with its buffers.
pub(super) const CONF: &[&str] = &[
    "shared_preload_libraries = 'auto_explain'",
    "auto_explain.log_min_duration = 0",
    "auto_explain.log_analyze = on",
    "auto_explain.log_buffers = on",
    "auto_explain.log_timing = off",
    "track_io_timing = on",
];

/// What each statement counts, in `Counts`' order: its plan's shared buffers found in the
/// cache, read in (from the OS), the time those reads took, and buffers it dirtied and wrote
/// out itself (to make room).
pub(super) const NAMES: &[&str] = &[
    "buffers hit",
    "buffers read",
    "µs reading buffers",
    "buffers dirtied",
    "buffers written",
];

/// The statements of the log `text` logged within `[from_us, to_us]` (and the millisecond after,
/// its stamps' resolution).
pub(super) fn parse(text: &str, from_us: u64, to_us: u64) -> StatementLog {
    let mut statements = Vec::new();
    let mut open: Option<Entry> = None;
    for line in text.lines() {
        if let Some(at) = stamp_us(line) {
            statements.extend(open.take().and_then(Entry::statement));
            if (from_us..=to_us + 1_000).contains(&at) {
                open = Entry::begin(at, line);
            }
            continue;
        }
        if let Some(e) = &mut open {
            e.line(line);
        }
    }
    statements.extend(open.and_then(Entry::statement));
    StatementLog {
        names: NAMES,
        statements,
        // Stamped to the millisecond: the true end lies within half a millisecond of the
        // middle it is taken at.
        slack_us: 500,
    }
}

/// One `duration: … plan:` message being read.
struct Entry {
    pid: u64,
    end_us: u64,
    duration_us: u64,
    text: String,
    /// Whether the plan's first node was seen (the query text is complete).
    planned: bool,
    counts: Counts,
    buffers_seen: bool,
}

impl Entry {
    fn begin(at: u64, line: &str) -> Option<Entry> {
        let said = after(line, "LOG:  duration: ")?;
        let (ms, rest) = said.split_once(" ms")?;
        if !rest.trim_start().starts_with("plan:") {
            return None;
        }
        let pid = line.get(29..)?.split(']').next()?.parse().ok()?;
        Some(Entry {
            pid,
            end_us: at + 500,
            duration_us: (ms.trim().parse::<f64>().ok()? * 1e3) as u64,
            text: String::new(),
            planned: false,
            counts: Counts::default(),
            buffers_seen: false,
        })
    }

    fn line(&mut self, line: &str) {
        let body = line.trim_start();
        if let Some(q) = body.strip_prefix("Query Text: ") {
            self.text = q.to_string();
        } else if !self.planned && !is_first_node(line, body) {
            // The query's further lines, until the plan's first node.
            self.text.push(' ');
            self.text.push_str(body);
        } else {
            self.planned = true;
            self.plan_line(body);
        }
    }

    /// The first `Buffers:` and `I/O Timings:` lines are the top node's: the whole statement's.
    fn plan_line(&mut self, body: &str) {
        if let Some(b) = body.strip_prefix("Buffers: ") {
            if !self.buffers_seen {
                self.buffers_seen = true;
                let shared = b.split(',').find(|p| p.trim().starts_with("shared"));
                for (name, slot) in [("hit=", 0), ("read=", 1), ("dirtied=", 3), ("written=", 4)] {
                    self.counts[slot] = shared.and_then(|p| value(p, name)).unwrap_or(0.0) as u64;
                }
            }
        } else if let Some(t) = body.strip_prefix("I/O Timings: ") {
            if self.counts[2] == 0 {
                let shared = t.split(',').next().unwrap_or(t);
                self.counts[2] = (value(shared, "read=").unwrap_or(0.0) * 1e3) as u64;
            }
        }
    }

    fn statement(self) -> Option<Statement> {
        if !self.planned {
            return None;
        }
        Some(Statement {
            session: self.pid,
            start_us: self.end_us.saturating_sub(self.duration_us),
            end_us: self.end_us,
            shape: shape(&self.text),
            counts: self.counts,
        })
    }
}

/// Whether `line` is a plan's first node: at the query text's indent, with its costs.
fn is_first_node(line: &str, body: &str) -> bool {
    line.starts_with('\t') && body.contains("(cost=")
}

/// The number after `name` in `text` (`read=0.027` → 0.027).
fn value(text: &str, name: &str) -> Option<f64> {
    let rest = after(text, name)?;
    rest.split(|c: char| c.is_whitespace() || c == ',')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
2026-11-30 18:28:04.000 UTC [300] LOG:  duration: 0.011 ms  plan:
\tQuery Text: SELECT c FROM sbtest1
\t  WHERE id=$1
\tIndex Scan using sbtest1_pkey on sbtest1  (cost=0.28..8.30 rows=1 width=8) (actual rows=1 loops=1)
\t  Index Cond: (id = 5)
\t  Buffers: shared hit=3
2026-11-30 18:28:04.010 UTC [301] LOG:  duration: 8.500 ms  plan:
\tQuery Text: UPDATE sbtest1 SET k=k+1 WHERE id=42
\tUpdate on sbtest1  (cost=0.28..8.30 rows=0 width=0) (actual rows=0 loops=1)
\t  Buffers: shared hit=9 read=2 dirtied=1 written=1, temp read=7
\t  I/O Timings: shared read=7.250
\t  ->  Index Scan using sbtest1_pkey on sbtest1  (cost=0.28..8.30 rows=1 width=10) (actual rows=1 loops=1)
\t        Buffers: shared hit=3 read=2
2026-11-30 18:28:04.020 UTC [301] LOG:  checkpoint starting: time
";

    #[test]
    fn each_plan_is_a_statement_with_its_top_nodes_buffers() {
        let base = 1_796_063_284_000_000;
        let log = parse(LOG, base, base + 1_000_000);
        let got: Vec<(u64, u64, u64, &str, Counts)> = (log.statements.iter())
            .map(|s| {
                (
                    s.session,
                    s.start_us - base,
                    s.end_us - base,
                    s.shape.as_str(),
                    s.counts,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    300,
                    489,
                    500,
                    "SELECT c FROM sbtest1 WHERE id=?",
                    [3, 0, 0, 0, 0]
                ),
                (
                    301,
                    2_000,
                    10_500,
                    "UPDATE sbtest1 SET k=k+? WHERE id=?",
                    [9, 2, 7_250, 1, 1]
                ),
            ]
        );
        assert_eq!(log.slack_us, 500);
        // Outside the window: nothing.
        assert!(parse(LOG, base + 2_000_000, base + 3_000_000)
            .statements
            .is_empty());
    }
}
