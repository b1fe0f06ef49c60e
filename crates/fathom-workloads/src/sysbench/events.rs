//! What each sysbench test does per event (docs/workloads.md §3.4, sysbench's
//! `oltp_common.lua`), decided apart from any engine: an event is a list of queries with their
//! tables, ids and values, which the SQL and kv executors then perform.

use super::rand::SbRand;
use super::SysbenchKind;
use fathom_api::kind::Done;
use fathom_schema::result::QueryMix;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// sysbench's `c` and `pad` templates (§3.2).
pub const C_TEMPLATE: &str =
    "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// The tests, named as sysbench names their scripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Test {
    #[serde(rename = "oltp_point_select")]
    PointSelect,
    #[serde(rename = "select_random_points")]
    RandomPoints,
    #[serde(rename = "oltp_read_only")]
    ReadOnly,
    #[serde(rename = "oltp_update_index")]
    UpdateIndex,
    #[serde(rename = "oltp_update_non_index")]
    UpdateNonIndex,
    #[serde(rename = "oltp_write_only")]
    WriteOnly,
    #[serde(rename = "oltp_read_write")]
    ReadWrite,
}

/// The options that shape events (sysbench's defaults in `oltp_common.lua`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    pub tables: u32,
    pub table_size: i64,
    pub range_size: i64,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub range_selects: bool,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub random_points: u32,
    pub skip_trx: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeKind {
    /// `SELECT c ... WHERE id BETWEEN ? AND ?`
    Simple,
    /// `SELECT SUM(k) ...`
    Sum,
    /// `... ORDER BY c`
    Order,
    /// `SELECT DISTINCT c ... ORDER BY c`
    Distinct,
}

/// A range query: ids `start..=end` of one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub table: u32,
    pub kind: RangeKind,
    pub start: i64,
    pub end: i64,
}

/// One statement of an event; `table` counts from 1 as sysbench's `sbtest<N>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    Point {
        table: u32,
        id: i64,
    },
    Range(Range),
    /// `WHERE k IN (...)` over the event's `points`.
    Points {
        table: u32,
    },
    IndexUpdate {
        table: u32,
        id: i64,
    },
    /// `SET c = ?` with the event's `c`.
    NonIndexUpdate {
        table: u32,
        id: i64,
    },
    /// `DELETE` then `INSERT` of the same id with `k` and the event's `c` and `pad`.
    DeleteInsert {
        table: u32,
        id: i64,
        k: i64,
    },
}

impl Query {
    /// True for the statements that change rows.
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Query::IndexUpdate { .. } | Query::NonIndexUpdate { .. } | Query::DeleteInsert { .. }
        )
    }
}

/// One event, reused from one to the next.
#[derive(Clone, Debug, Default)]
pub struct Event {
    /// Wrapped in BEGIN and COMMIT.
    pub trx: bool,
    pub queries: Vec<Query>,
    pub points: Vec<i64>,
    pub c: String,
    pub pad: String,
}

impl Test {
    /// Its name: its step's.
    pub fn name(self) -> String {
        fathom_api::knobs::text(&self)
    }

    fn reads(self) -> bool {
        matches!(self, Test::ReadOnly | Test::ReadWrite)
    }

    fn writes(self) -> bool {
        matches!(self, Test::WriteOnly | Test::ReadWrite)
    }

    /// The kind of its events: a write when any of its statements writes.
    pub fn kind(self, s: &Shape) -> SysbenchKind {
        if self.mix(s).write > 0.0 {
            SysbenchKind::WriteEvent
        } else {
            SysbenchKind::ReadEvent
        }
    }

    /// Statements per event by sysbench's read/write/other classes.
    pub fn mix(self, s: &Shape) -> QueryMix {
        let trx = if s.skip_trx { 0.0 } else { 2.0 };
        let ranges = if s.range_selects {
            s.simple_ranges + s.sum_ranges + s.order_ranges + s.distinct_ranges
        } else {
            0
        };
        let reads = f64::from(s.point_selects + ranges);
        let writes = f64::from(s.index_updates + s.non_index_updates + 2 * s.delete_inserts);
        let (read, write, other) = match self {
            Test::PointSelect | Test::RandomPoints => (1.0, 0.0, 0.0),
            Test::UpdateIndex => (0.0, f64::from(s.index_updates), 0.0),
            Test::UpdateNonIndex => (0.0, f64::from(s.non_index_updates), 0.0),
            Test::ReadOnly => (reads, 0.0, trx),
            Test::WriteOnly => (0.0, writes, trx),
            Test::ReadWrite => (reads, writes, trx),
        };
        QueryMix { read, write, other }
    }
}

/// A client thread's source of events.
pub struct Events {
    test: Test,
    shape: Shape,
    rand: SbRand,
    /// select_random_points: this thread's slice of k values.
    slice: (i64, i64),
    event: Event,
    kind: SysbenchKind,
}

impl Events {
    pub fn test(&self) -> Test {
        self.test
    }

    /// An event that moved `bytes` after `retries` retries.
    pub fn done(&self, bytes: u64, retries: u32) -> Done {
        Done {
            bytes,
            retries,
            ..Done::of(self.kind)
        }
    }

    pub fn new(test: Test, shape: Shape, rand: SbRand, thread: usize, threads: usize) -> Events {
        // Lua's floating-point division, then truncation to uint32 by the FFI call.
        let rlen = shape.table_size as f64 / threads.max(1) as f64;
        let rmin = rlen * thread as f64;
        Events {
            test,
            kind: test.kind(&shape),
            slice: (rmin as i64, (rmin + rlen) as i64),
            shape,
            rand,
            event: Event::default(),
        }
    }

    fn table(&mut self) -> u32 {
        self.rand.uniform(1, i64::from(self.shape.tables)) as u32
    }

    fn id(&mut self) -> i64 {
        self.rand.default(1, self.shape.table_size)
    }

    /// `count` ranges of one kind on one table, drawn once for the kind (execute_range()).
    fn ranges(&mut self, kind: RangeKind, count: u32) {
        let table = self.table();
        for _ in 0..count {
            let start = self.id();
            let end = start + self.shape.range_size - 1;
            self.event.queries.push(Query::Range(Range {
                table,
                kind,
                start,
                end,
            }));
        }
    }

    /// The next event.
    pub fn next_event(&mut self) -> &Event {
        let s = self.shape;
        self.event.queries.clear();
        self.event.points.clear();
        self.event.trx = !s.skip_trx && (self.test.reads() || self.test.writes());
        match self.test {
            Test::PointSelect => {
                let (table, id) = (self.table(), self.id());
                self.event.queries.push(Query::Point { table, id });
            }
            Test::RandomPoints => {
                for _ in 0..s.random_points {
                    let v = self.rand.default(self.slice.0, self.slice.1);
                    self.event.points.push(v);
                }
                self.event.queries.push(Query::Points { table: 1 });
            }
            Test::UpdateIndex => self.index_updates(s.index_updates),
            Test::UpdateNonIndex => self.non_index_updates(s.non_index_updates),
            _ => {}
        }
        if self.test.reads() {
            // One table per kind of statement, as execute_point_selects() and friends.
            let table = self.table();
            for _ in 0..s.point_selects {
                let id = self.id();
                self.event.queries.push(Query::Point { table, id });
            }
            if s.range_selects {
                self.ranges(RangeKind::Simple, s.simple_ranges);
                self.ranges(RangeKind::Sum, s.sum_ranges);
                self.ranges(RangeKind::Order, s.order_ranges);
                self.ranges(RangeKind::Distinct, s.distinct_ranges);
            }
        }
        if self.test.writes() {
            self.index_updates(s.index_updates);
            self.non_index_updates(s.non_index_updates);
            let table = self.table();
            for _ in 0..s.delete_inserts {
                let id = self.id();
                let k = self.id();
                self.event
                    .queries
                    .push(Query::DeleteInsert { table, id, k });
            }
            self.rand.fill_digits(C_TEMPLATE, &mut self.event.c);
            self.rand.fill_digits(PAD_TEMPLATE, &mut self.event.pad);
        }
        &self.event
    }

    fn index_updates(&mut self, n: u32) {
        let table = self.table();
        for _ in 0..n {
            let id = self.id();
            self.event.queries.push(Query::IndexUpdate { table, id });
        }
    }

    fn non_index_updates(&mut self, n: u32) {
        let table = self.table();
        for _ in 0..n {
            let id = self.id();
            self.event.queries.push(Query::NonIndexUpdate { table, id });
        }
        self.rand.fill_digits(C_TEMPLATE, &mut self.event.c);
    }
}

/// The rows of the prepare step: ids 1..=table_size in order, `k = rand.default(1,
/// table_size)`, `c` and `pad` from the templates.
pub struct Rows {
    pub rand: SbRand,
    pub table_size: i64,
    pub c: String,
    pub pad: String,
}

impl Rows {
    /// The next row's k, with `c` and `pad` refilled.
    pub fn next_row(&mut self) -> i64 {
        let k = self.rand.default(1, self.table_size);
        self.rand.fill_digits(C_TEMPLATE, &mut self.c);
        self.rand.fill_digits(PAD_TEMPLATE, &mut self.pad);
        k
    }
}

#[cfg(test)]
mod tests {
    use super::super::rand::RandType;
    use super::*;

    /// sysbench's default event on 4 tables of 1000 rows.
    pub fn shape() -> Shape {
        let defaults = super::super::shape(&super::super::SysbenchParams::default()).unwrap();
        Shape {
            tables: 4,
            table_size: 1000,
            ..defaults
        }
    }

    fn events(test: Test, thread: usize, threads: usize) -> Events {
        Events::new(
            test,
            shape(),
            SbRand::new(RandType::Uniform, 3),
            thread,
            threads,
        )
    }

    #[test]
    fn templates_have_sysbench_lengths() {
        assert_eq!((C_TEMPLATE.len(), PAD_TEMPLATE.len()), (119, 59));
    }

    #[test]
    fn read_write_event_has_sysbench_statements() {
        let mut e = events(Test::ReadWrite, 0, 1);
        let ev = e.next_event().clone();
        assert!(ev.trx);
        let points = ev
            .queries
            .iter()
            .filter(|q| matches!(q, Query::Point { .. }))
            .count();
        let ranges = ev
            .queries
            .iter()
            .filter(|q| matches!(q, Query::Range(_)))
            .count();
        assert_eq!((points, ranges, ev.queries.len()), (10, 4, 17));
        assert_eq!(Test::ReadWrite.mix(&shape()).total(), 20.0);
        assert_eq!(Test::ReadOnly.mix(&shape()).total(), 16.0);
        assert_eq!(Test::PointSelect.mix(&shape()).total(), 1.0);
        for q in &ev.queries {
            if let Query::Range(r) = q {
                assert_eq!(r.end - r.start, 99);
            }
        }
        assert!(ev.c.len() == 119 && ev.c.chars().all(|c| c == '-' || c.is_ascii_digit()));
    }

    /// execute_range() draws the table once for all ranges of its kind.
    #[test]
    fn ranges_of_one_kind_share_a_table() {
        let mut e = Events::new(
            Test::ReadOnly,
            Shape {
                simple_ranges: 8,
                ..shape()
            },
            SbRand::new(RandType::Uniform, 5),
            0,
            1,
        );
        for _ in 0..50 {
            let tables: Vec<u32> = e
                .next_event()
                .queries
                .iter()
                .filter_map(|q| match q {
                    Query::Range(r) if r.kind == RangeKind::Simple => Some(r.table),
                    _ => None,
                })
                .collect();
            assert_eq!(tables.len(), 8);
            assert!(tables.iter().all(|t| *t == tables[0]), "{tables:?}");
        }
    }

    #[test]
    fn point_select_is_one_query_without_a_transaction() {
        let mut e = events(Test::PointSelect, 0, 1);
        for _ in 0..100 {
            let ev = e.next_event();
            assert!(!ev.trx);
            match ev.queries[..] {
                [Query::Point { table, id }] => {
                    assert!((1..=4).contains(&table) && (1..=1000).contains(&id))
                }
                ref q => panic!("{q:?}"),
            }
        }
    }

    #[test]
    fn random_points_stay_in_the_threads_slice() {
        let mut e = events(Test::RandomPoints, 2, 4);
        let ev = e.next_event();
        assert_eq!(ev.points.len(), 10);
        assert!(
            ev.points.iter().all(|&k| (500..=750).contains(&k)),
            "{:?}",
            ev.points
        );
    }
}
