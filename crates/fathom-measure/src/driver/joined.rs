//! A server's kept operations' work, from the statements it logged (`Target::statements`):
//! an operation's statements are those of its session that ran within it, and it is set
//! against up to `NEARBY` operations made of the same shapes of statement that ran just before
//! it on any session — the rank an embedded engine's per-thread counters give, read from the
//! server's side after the step instead of on the client's thread during it.

use crate::work::NEARBY;
use fathom_api::work::{Statement, StatementLog};
use fathom_schema::result::tail::{SlowOp, WorkCount};
use std::collections::HashMap;

/// Fills each of `ops`' `work` and `nearby` from `log`; an operation whose session is not known,
/// or of which the log holds no statement, is left without.
pub(super) fn join(log: &StatementLog, ops: &mut [SlowOp]) {
    let mut by_session: HashMap<u64, Vec<&Statement>> = HashMap::new();
    let mut by_shape: HashMap<&str, Vec<&Statement>> = HashMap::new();
    for s in &log.statements {
        by_session.entry(s.session).or_default().push(s);
        by_shape.entry(s.shape.as_str()).or_default().push(s);
    }
    for list in by_session.values_mut() {
        list.sort_by_key(|s| s.start_us);
    }
    for list in by_shape.values_mut() {
        list.sort_by_key(|s| s.end_us);
    }
    let counters = log.names.len();
    for op in ops.iter_mut().filter(|o| o.session != 0) {
        let Some(session) = by_session.get(&op.session) else {
            continue;
        };
        let (from, to) = (op.start_us, op.end_us() + log.slack_us);
        let first = session.partition_point(|s| s.start_us + log.slack_us < from);
        let own: Vec<&Statement> = session[first..]
            .iter()
            .take_while(|s| s.start_us <= to)
            .filter(|s| s.end_us <= to)
            .copied()
            .collect();
        let Some(began) = own.first().map(|s| s.start_us) else {
            continue;
        };
        let nearby = alike_before(&own, &by_shape, began, counters);
        let sums: Vec<u64> = (0..counters)
            .map(|c| own.iter().map(|s| s.counts[c]).sum())
            .collect();
        op.work = (0..counters)
            .map(|c| {
                let mut column: Vec<u64> = nearby.iter().map(|n| n[c]).collect();
                column.sort_unstable();
                WorkCount {
                    n: sums[c],
                    median: column.get(column.len() / 2).copied().unwrap_or(0),
                    at_least: column.iter().filter(|&&v| v >= sums[c]).count() as u32,
                }
            })
            .collect();
        op.nearby = nearby.len() as u32;
    }
}

/// Up to `NEARBY` operations like one made of `own`'s statements, each summed from statements
/// of the same shapes (as many of each) that ended before `began` on any session, the most
/// recent first.
fn alike_before(
    own: &[&Statement],
    by_shape: &HashMap<&str, Vec<&Statement>>,
    began: u64,
    counters: usize,
) -> Vec<Vec<u64>> {
    let mut shapes: Vec<(&str, usize)> = Vec::new();
    for s in own {
        match shapes.iter_mut().find(|(shape, _)| *shape == s.shape) {
            Some((_, n)) => *n += 1,
            None => shapes.push((s.shape.as_str(), 1)),
        }
    }
    // Each shape's statements that ended before the operation began, most recent first.
    let before: Vec<(Vec<&Statement>, usize)> = shapes
        .iter()
        .map(|(shape, times)| {
            let all = by_shape.get(shape).map_or(&[][..], Vec::as_slice);
            let end = all.partition_point(|s| s.end_us < began);
            let from = end.saturating_sub(times * NEARBY);
            (all[from..end].iter().rev().copied().collect(), *times)
        })
        .collect();
    let ops = (before.iter())
        .map(|(list, times)| list.len() / times)
        .min()
        .unwrap_or(0)
        .min(NEARBY);
    (0..ops)
        .map(|j| {
            (0..counters)
                .map(|c| {
                    (before.iter())
                        .flat_map(|(list, times)| &list[j * times..(j + 1) * times])
                        .map(|s| s.counts[c])
                        .sum()
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_api::work::Counts;

    fn statement(session: u64, start_us: u64, end_us: u64, shape: &str, n: u64) -> Statement {
        let mut counts = Counts::default();
        counts[0] = n;
        Statement {
            session,
            start_us,
            end_us,
            shape: shape.into(),
            counts,
        }
    }

    fn op(session: u64, start_us: u64, latency_us: f64) -> SlowOp {
        SlowOp {
            kind: "r".into(),
            client: 0,
            start_us,
            latency_us,
            tid: 0,
            session,
            asleep: Vec::new(),
            work: Vec::new(),
            nearby: 0,
        }
    }

    /// An operation's statements are its session's within it; it is set against operations of
    /// the same shapes before it, on any session, never after it.
    #[test]
    fn an_operation_takes_its_sessions_statements_and_is_set_against_earlier_alike_ones() {
        let mut statements = Vec::new();
        // 100 earlier operations on session 2: a select of 10 rows and an update of 1, each.
        for i in 0..100u64 {
            let at = i * 100;
            statements.push(statement(2, at, at + 10, "select ?", 10 + i % 3));
            statements.push(statement(2, at + 20, at + 30, "update ?", 1));
        }
        // The slow one on session 7, from 20,000 to 21,000 µs: 500 rows selected, 1 updated;
        // the statement just before it and the one just after are not its own.
        statements.push(statement(7, 19_900, 19_990, "select ?", 3));
        statements.push(statement(7, 20_010, 20_800, "select ?", 500));
        statements.push(statement(7, 20_850, 20_900, "update ?", 1));
        statements.push(statement(7, 21_050, 21_100, "select ?", 4));
        // Later alike statements do not count as nearby.
        statements.push(statement(3, 30_000, 30_010, "select ?", 9_999));
        statements.sort_by_key(|s| s.start_us);
        let log = StatementLog {
            names: &["rows examined"],
            statements,
            slack_us: 0,
        };
        let mut ops = [
            op(7, 20_000, 1_000.0),
            op(0, 20_000, 1_000.0),
            op(9, 1, 5.0),
        ];
        join(&log, &mut ops);
        let w = &ops[0].work;
        assert_eq!(ops[0].nearby, NEARBY as u32);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].n, 501);
        // Nearby: 11..=13 rows an operation.
        assert!((11..=13).contains(&w[0].median), "{w:?}");
        assert_eq!(w[0].at_least, 0);
        // No session, or a session the log does not know: nothing joined.
        assert!(ops[1].work.is_empty() && ops[2].work.is_empty());
    }

    /// An operation with a shape no earlier statement had is set against nothing.
    #[test]
    fn an_operation_of_a_new_shape_has_no_nearby_ones() {
        let log = StatementLog {
            names: &["rows examined"],
            statements: vec![statement(4, 100, 200, "delete ?", 7)],
            slack_us: 500,
        };
        let mut ops = [op(4, 150, 100.0)];
        join(&log, &mut ops);
        assert_eq!(ops[0].nearby, 0);
        assert_eq!(ops[0].work[0].n, 7);
    }
}
