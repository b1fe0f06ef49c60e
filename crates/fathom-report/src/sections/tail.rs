//! "Why the slowest operations were slow": for each step and kind, its slowest operations (kept
//! by every run) against what the engine did meanwhile, each kind of event with the share of
//! slow operations it overlapped, the share of the window it covered and the chance of that
//! overlap with no link between them (`fathom_stats::tail`), and each counter of work the
//! engine counts per operation (RocksDB's perf context) the slow ones did more of than those
//! beside them. Shown where the engine keeps an account of its background work (RocksDB's LOG,
//! PostgreSQL's log) or the operations' sleeps were timed (`--waits=bpf`).

use crate::section::{Chart, Input, Section, Titled};
use fathom_api::kind::Role;
use fathom_schema::result::tail::Tail;
use fathom_schema::result::StepSummary;
use fathom_schema::table::{Cell, Style, Table};
use fathom_stats::tail::{explain, Cause, KindTail};

const COLUMNS: &[&str] = &[
    "kind",
    "kept",
    "episodes",
    "p99.9",
    "slowest",
    "median",
    "waited in",
    "cause",
    "slow%",
    "time%",
    "window%",
    "chance",
    "confidence",
    "what the engine said",
    "setup",
];

/// Causes listed per kind: the named ones, else the likeliest.
const SHOWN: usize = 3;

const LEGEND: &str = "\
why the slowest operations were slow: each kind's slowest operations of the step (kept: at most 16, over\n\
all clients; episodes: those within 250 ms of each other taken as one moment), p99.9 of all the kind's\n\
operations, the slowest and the median of those kept, ms; waited in: with --waits=bpf, the share of the\n\
kept operations' time their threads slept in each kind of wait or waited for a CPU (the two largest;\n\
waits from 50 µs), and with --waits=bpf-stacks where most of it slept (`at`: the stack's first frame\n\
outside the runtimes < its caller, from sleeps of 500 µs or more); on a cpu: none of those; cause: a kind of event the engine reported during them\n\
(write stop, write stall, lock wait, flush, compaction, checkpoint, eviction, autovacuum, purge), or more of a\n\
kind of work it counted per operation (RocksDB's perf context: tombstones skipped, keys stepped over,\n\
blocks and bytes read, cache hits; WiredTiger's session statistics with session_stats=true: bytes read\n\
into the cache and µs reading them, µs waiting for cache room, bytes written, µs waiting for locks; a\n\
server's log of statements with statement_log=true: PostgreSQL's buffers hit, read, dirtied and written\n\
and µs reading them, MariaDB's rows examined, sent and affected); no event: none of those, nothing\n\
named: none of those on an engine that keeps no account of its events. For an event: slow%: the kept\n\
operations that overlapped one; time%:\n\
the share of their time spent inside one; window%: the share of the step's window such events covered;\n\
chance: how likely as many episodes or more would overlap one if they had nothing to do with it. For\n\
work: each kept operation is set against the 64 of its kind before it on its client (a server's: 64 made\n\
of the same statements before it on any connection); slow%: those that\n\
did more than 90% of theirs; chance: how likely their ranks would be as high with no link between work\n\
and latency; what the engine said: what those that did more did (median) against what the operations\n\
beside them did. confidence: high under 0.001, medium under 0.01 (for writes in a write stop or stall,\n\
and any operation in a lock wait, which hold them back: high from 80% of their time inside, medium from\n\
50%), - not named (docs/tail.md gives the simulation's error rates).\n";

/// One table per step whose engine told what it did.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut section = Section::new("Why the slowest operations were slow");
    section.over = Some("the first repeat that kept its slowest operations");
    for step in &input.steps {
        let mut t = Table::new(COLUMNS);
        for s in &input.series {
            let Some((m, tail)) = s.step(step).into_iter().find_map(told) else {
                continue;
            };
            let writes = |kind: &str| {
                let role = m.by_op.get(kind).and_then(|o| o.role);
                role.is_some_and(|r| {
                    matches!(r, Role::Write | Role::Insert | Role::Delete | Role::Load)
                })
            };
            let label = s.label(&input.series);
            for k in explain(tail, &writes) {
                rows(&mut t, (m, tail.engine_tells), &k, &label);
            }
            let of = if input.series.len() > 1 {
                label.as_str()
            } else {
                ""
            };
            section
                .charts
                .extend(super::tail_chart::of(s, step, of, told).map(Chart::Timeline));
        }
        if !t.rows.is_empty() {
            section.tables.push(Titled {
                title: format!("{step}: the slowest operations, ms"),
                table: t,
            });
        }
    }
    section.legend = Some(LEGEND);
    Ok(section.if_any().into_iter().collect())
}

/// A step's tail, where its engine keeps an account of its events or counted its operations'
/// work, or its operations' sleeps were timed.
fn told(m: &StepSummary) -> Option<(&StepSummary, &Tail)> {
    let tail = m.tail.as_ref()?;
    (tail.engine_tells || tail.sleeps_timed || !tail.work.is_empty()).then_some((m, tail))
}

/// The kept operations' time asleep by kind or waiting for a CPU, the two largest (`io 91%,
/// futex 3%`), each where most of it slept when known (`futex 88% at
/// rocksdb::WriteThread::AwaitState < rocksdb::WriteThread::JoinBatchGroup`); `-` when not
/// timed.
fn asleep(k: &KindTail) -> String {
    let Some(shares) = &k.asleep else {
        return "-".into();
    };
    let parts: Vec<String> = (shares.iter())
        .filter(|a| a.share >= 0.005)
        .take(2)
        .map(|a| {
            let at = a.at.as_ref().map_or(String::new(), |p| format!(" at {p}"));
            format!("{} {:.0}%{at}", a.kind, a.share * 100.0)
        })
        .collect();
    if parts.is_empty() {
        "on a cpu".into()
    } else {
        parts.join(", ")
    }
}

/// The rows of kind `k` of step `m`, whose engine keeps an account of its events or not
/// (`tells`).
fn rows(t: &mut Table, (m, tells): (&StepSummary, bool), k: &KindTail, setup: &str) {
    let ms = |us: f64| Cell::num(us / 1e3);
    let p99_9 = m.by_op.get(&k.kind).map(|o| o.latency_us.p99_9 / 1e3);
    let mut causes: Vec<&Cause> = k.causes.iter().filter(|c| c.confidence.is_some()).collect();
    if causes.is_empty() {
        causes.extend(k.causes.first());
    }
    let head = |first: bool| -> Vec<Cell> {
        if !first {
            return vec![Cell::text(""); 7];
        }
        vec![
            Cell::text(k.kind.as_str()),
            Cell::count(k.kept as f64),
            Cell::count(k.episodes as f64),
            Cell::opt(p99_9),
            ms(k.slowest_us),
            ms(k.median_us),
            Cell::text(asleep(k)),
        ]
    };
    if causes.is_empty() {
        let mut row = head(true);
        // cause, then slow%, time%, window% and chance unknown. An engine without an account
        // of its events (MyRocks, LMDB) did not say there was none.
        row.push(Cell::text(if tells { "no event" } else { "nothing named" }));
        row.extend(std::iter::repeat_n(Cell::Missing, 4));
        row.extend([Cell::text("-"), Cell::text(""), Cell::text(setup)]);
        t.push(row);
        return;
    }
    for (i, c) in causes.iter().take(SHOWN).enumerate() {
        let mut row = head(i == 0);
        row.extend([
            Cell::text(c.what.as_str()),
            Cell::fixed(Some(c.ops as f64 * 100.0 / k.kept.max(1) as f64), 0),
            Cell::fixed(c.held.map(|h| h * 100.0), 0),
            Cell::fixed(c.time_share.map(|t| t * 100.0), 1),
            Cell::styled(Some(c.chance), Style::Auto),
            Cell::text(c.confidence.map_or("-", |x| x.name())),
            Cell::text(c.example.as_str()),
            Cell::text(setup),
        ]);
        t.push(row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_stats::bound::Confidence;
    use fathom_stats::tail::AsleepShare;

    /// A kind with no event, with one named cause and with one that is not: every row as wide
    /// as the header.
    #[test]
    fn every_row_fills_the_header() {
        let m = StepSummary::default();
        let cause = |confidence| Cause {
            what: "write stop".into(),
            ops: 3,
            episodes: 2,
            time_share: Some(0.1),
            held: Some(0.9),
            chance: 0.5,
            confidence,
            example: "we have 4 level-0 files".into(),
            against: None,
        };
        let mut t = Table::new(COLUMNS);
        for causes in [vec![], vec![cause(Some(Confidence::High)), cause(None)]] {
            let k = KindTail {
                kind: "put".into(),
                kept: 4,
                episodes: 2,
                slowest_us: 900.0,
                median_us: 500.0,
                causes,
                asleep: Some(vec![AsleepShare {
                    kind: "io".into(),
                    share: 0.91,
                    at: None,
                }]),
            };
            rows(&mut t, (&m, true), &k, "rocksdb");
        }
        assert_eq!(t.rows.len(), 2);
        assert!(t.rows.iter().all(|r| r.len() == COLUMNS.len()));
        // Nothing named: "no event" where the engine tells its events, else "nothing named".
        let cause_at = COLUMNS.iter().position(|c| *c == "cause").unwrap();
        assert_eq!(t.rows[0][cause_at], Cell::text("no event"));
        let k = KindTail {
            kind: "get".into(),
            kept: 4,
            episodes: 2,
            slowest_us: 900.0,
            median_us: 500.0,
            causes: Vec::new(),
            asleep: None,
        };
        rows(&mut t, (&m, false), &k, "myrocks");
        assert_eq!(t.rows[2][cause_at], Cell::text("nothing named"));
    }
}
