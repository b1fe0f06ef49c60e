//! The insert benchmark's clients, written once against `Store` (what each family does to a
//! table): the inserter and the deleter that follows it, the index builder of `l.x`, the query
//! client, and the cleanup that brings the engine to a steady state.

use super::gen::{Batch, RowGen, Shape, Table};
use super::lockstep::{Lockstep, Turn};
use fathom_api::kind::Done;
use fathom_api::retry::retrying;
use fathom_api::step::Client;
use fathom_api::stop::Stop;
use fathom_api::target::Maintenance;
use rand::Rng;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

fathom_api::kinds! {
    /// The insert benchmark's operations, as its reports name them; every step lists them all.
    pub enum IbenchKind {
        Insert = ("insert", Insert, "one multi-row INSERT of a batch"),
        Delete = ("delete", Delete, "one DELETE of a batch of the oldest rows"),
        CreateIndex = ("create_index", Maintenance, "one statement creating secondary indexes"),
        /// Range queries on the secondary indexes, in the index order.
        Market = ("market", Scan, "a range query on the market index"),
        Register = ("register", Scan, "a range query on the register index"),
        Pdc = ("pdc", Scan, "a range query on the pdc index"),
        Point = ("point", Read, "a point query of rows_per_query ids"),
        Analyze = ("analyze", Maintenance, "the optimizer statistics of one table"),
        Flush = ("flush", Maintenance, "the engine's flush"),
        Compact = ("compact", Maintenance, "a wait for the engine's compaction"),
        Settle = ("settle", Maintenance, "the settle wait at cleanup's end"),
    }
}

/// The range queries' kinds, in the index order.
const RANGES: [IbenchKind; 3] = [IbenchKind::Market, IbenchKind::Register, IbenchKind::Pdc];

/// Deletes between re-reads of the smallest id (iibench's `resync_get_min`).
const RESYNC_EVERY: u64 = 1000;
/// Point queries between re-reads of the largest id.
const MAX_EVERY: u64 = 100;

/// What the insert benchmark does to a table, once per engine family.
pub trait Store: Send {
    /// Drops and creates table `t` with its primary key only.
    fn create_table(&mut self, t: u32) -> anyhow::Result<()>;
    /// Inserts `batch` into `t`, ids assigned in order after the table's largest.
    fn insert(&mut self, t: &Table, batch: &Batch) -> anyhow::Result<()>;
    /// Deletes up to `n` rows of `t` with the smallest ids at or after `from`; returns how
    /// many it deleted.
    fn delete(&mut self, t: u32, from: i64, n: usize) -> anyhow::Result<u64>;
    /// The table's smallest id, or with `last` its largest (`None` when it is empty).
    fn end_id(&mut self, t: u32, last: bool) -> anyhow::Result<Option<i64>>;
    fn min_id(&mut self, t: u32) -> anyhow::Result<Option<i64>> {
        self.end_id(t, false)
    }
    fn max_id(&mut self, t: u32) -> anyhow::Result<Option<i64>> {
        self.end_id(t, true)
    }
    /// How secondary indexes are created: the positions each statement creates (InnoDB adds
    /// all three in one ALTER; MyRocks, PostgreSQL, documents and the kv mapping one at a
    /// time, the default).
    fn index_groups(&self, count: usize) -> Vec<Vec<usize>> {
        (0..count).map(|i| vec![i]).collect()
    }
    /// Creates the secondary indexes at `positions` on `t`.
    fn create_indexes(&mut self, t: u32, positions: &[usize]) -> anyhow::Result<()>;
    /// The range query on index `index` from `from`; returns the bytes fetched.
    fn range_query(&mut self, t: u32, index: usize, from: i64) -> anyhow::Result<u64>;
    /// The point query on `ids`; returns the bytes fetched.
    fn point_query(&mut self, t: u32, ids: &[i64]) -> anyhow::Result<u64>;
    /// Refreshes the optimizer's statistics of `t` (ANALYZE TABLE, VACUUM ANALYZE).
    fn analyze(&mut self, t: u32) -> anyhow::Result<()>;
    /// An engine-wide maintenance action.
    fn maintain(&mut self, action: Maintenance) -> anyhow::Result<()>;
}

fn ids_of<'t>(store: &mut dyn Store, t: &'t Table) -> anyhow::Result<&'t super::gen::Ids> {
    t.ids(|| Ok((store.min_id(t.n)?, store.max_id(t.n)?)))
}

/// Inserts batches into its tables in turn. With deletes on, a `Deleter` on its own connection
/// follows it through their shared `Lockstep`, deleting as many of the oldest rows, so the
/// tables stay the same size ("the table is a queue"). A load step's inserter stops after its
/// rows, a query step's (in the background) after the rows its rate gives the step.
pub struct Writer<'e> {
    pub store: Box<dyn Store + 'e>,
    pub tables: Vec<Arc<Table>>,
    pub gen: RowGen,
    pub batch_rows: usize,
    /// Rows left to insert; `None` for no limit.
    pub rows_left: Option<u64>,
    /// Shared with this client's deleter, if it has one.
    pub gate: Option<Arc<Lockstep>>,
    pub batch: Batch,
    pub next_table: usize,
}

impl<'e> Writer<'e> {
    pub fn new(store: Box<dyn Store + 'e>, tables: Vec<Arc<Table>>, gen: RowGen) -> Self {
        Writer {
            store,
            tables,
            gen,
            batch_rows: 1,
            rows_left: None,
            gate: None,
            batch: Batch::default(),
            next_table: 0,
        }
    }
}

/// The rows of the next batch of `batch_rows` with `rows_left` to go; `None` when done.
fn next_batch(rows_left: Option<u64>, batch_rows: usize) -> Option<usize> {
    match rows_left {
        Some(0) => None,
        Some(left) => Some(left.min(batch_rows as u64) as usize),
        None => Some(batch_rows),
    }
}

/// Waits for the other side of `gate`, if there is one: how long, or `None` to stop.
fn take_turn(gate: Option<&Lockstep>, turn: fn(&Lockstep) -> Turn) -> Option<Duration> {
    match gate.map_or(Turn::Go(Duration::ZERO), turn) {
        Turn::Go(waited) => Some(waited),
        Turn::Stop => None,
    }
}

impl Client for Writer<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let Some(n) = next_batch(self.rows_left, self.batch_rows) else {
            return Ok(None);
        };
        let Some(waited) = take_turn(self.gate.as_deref(), Lockstep::before_insert) else {
            return Ok(None);
        };
        let at = self.next_table;
        self.next_table = (at + 1) % self.tables.len();
        let table = Arc::clone(&self.tables[at]);
        ids_of(self.store.as_mut(), &table)?;
        self.gen.fill(&mut self.batch, n);
        let (store, batch) = (&mut self.store, &self.batch);
        let (_, retries) = retrying(|| store.insert(&table, batch))?;
        if let Some(left) = self.rows_left.as_mut() {
            *left -= n as u64;
        }
        if let Some(gate) = &self.gate {
            gate.inserted();
        }
        Ok(Some(Done {
            bytes: self.batch.bytes(),
            retries,
            rows: n as u64,
            waited,
            ..Done::of(IbenchKind::Insert)
        }))
    }

    fn stopped(&mut self) {
        if let Some(gate) = &self.gate {
            gate.inserter_gone();
        }
    }
}

/// The other half of a client that deletes: on its own connection, it deletes the oldest
/// rows of its table, a batch for each of its inserter's, and stops after as many rows or
/// once the inserter is gone and every batch it wrote has its delete.
pub struct Deleter<'e> {
    store: Box<dyn Store + 'e>,
    table: Arc<Table>,
    gate: Arc<Lockstep>,
    batch_rows: usize,
    rows_left: Option<u64>,
    batches: u64,
}

impl<'e> Deleter<'e> {
    /// The deleter of the inserter that shares `gate`, which waits for it from now on.
    pub fn new(
        store: Box<dyn Store + 'e>,
        table: Arc<Table>,
        gate: Arc<Lockstep>,
        batch_rows: usize,
        rows_left: Option<u64>,
    ) -> Self {
        gate.join_deleter();
        Deleter {
            store,
            table,
            gate,
            batch_rows,
            rows_left,
            batches: 0,
        }
    }
}

impl Client for Deleter<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let Some(n) = next_batch(self.rows_left, self.batch_rows) else {
            return Ok(None);
        };
        let Some(waited) = take_turn(Some(&self.gate), Lockstep::before_delete) else {
            return Ok(None);
        };
        let t = self.table.n;
        let ids = ids_of(self.store.as_mut(), &self.table)?;
        self.batches += 1;
        if self.batches.is_multiple_of(RESYNC_EVERY) {
            if let Some(min) = self.store.min_id(t)? {
                ids.frontier.fetch_max(min, Ordering::Relaxed);
            }
        }
        let from = ids.claim_delete(n);
        let store = &mut self.store;
        let (_, retries) = retrying(|| store.delete(t, from, n))?;
        if let Some(left) = self.rows_left.as_mut() {
            *left -= n as u64;
        }
        self.gate.deleted();
        Ok(Some(Done {
            retries,
            waited,
            ..Done::of(IbenchKind::Delete)
        }))
    }

    fn stopped(&mut self) {
        self.gate.deleter_gone();
    }
}

/// `l.x`: inserts a few rows, then creates the secondary indexes, each statement an operation.
pub struct Indexer<'e> {
    pub writer: Writer<'e>,
    /// Index groups left to create, with the table.
    pub groups: Vec<(u32, Vec<usize>)>,
}

impl Client for Indexer<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if let Some(done) = self.writer.next()? {
            return Ok(Some(done));
        }
        if self.groups.is_empty() {
            return Ok(None);
        }
        let (t, positions) = self.groups.remove(0);
        self.writer.store.create_indexes(t, &positions)?;
        Ok(Some(Done::of(IbenchKind::CreateIndex)))
    }
}

/// A query step's client: range queries on a secondary index picked at random each time, or
/// point queries on ids between the delete frontier and the largest id.
pub struct Querier<'e> {
    pub store: Box<dyn Store + 'e>,
    pub table: Arc<Table>,
    pub shape: Arc<Shape>,
    pub gen: RowGen,
    pub point: bool,
    pub queries: u64,
    pub max_id: i64,
    pub ids: Vec<i64>,
}

impl Client for Querier<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let t = self.table.n;
        let (kind, bytes) = if self.point {
            if self.queries.is_multiple_of(MAX_EVERY) {
                self.max_id = self.store.max_id(t)?.unwrap_or(0);
            }
            let min = ids_of(self.store.as_mut(), &self.table)?
                .frontier
                .load(Ordering::Relaxed);
            let hi = self.max_id.max(min + 1);
            let rng = self.gen.rng();
            self.ids.clear();
            self.ids
                .extend((0..self.shape.rows_per_query).map(|_| rng.gen_range(min..hi)));
            (IbenchKind::Point, self.store.point_query(t, &self.ids)?)
        } else {
            let index = self.gen.rng().gen_range(0..self.shape.indexes.len());
            let domain = self.shape.domain(self.shape.indexes[index].cols[0]);
            let from = self.gen.rng().gen_range(0..domain);
            (RANGES[index], self.store.range_query(t, index, from)?)
        };
        self.queries += 1;
        Ok(Some(Done {
            bytes,
            ..Done::of(kind)
        }))
    }
}

/// One action of the cleanup step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tidy {
    Analyze(u32),
    Engine(Maintenance),
    Settle(Duration),
}

/// The cleanup between the load and query steps: statistics per table, the engine's flush
/// and compaction, then a wait for it to settle; each action is an operation.
pub struct Cleanup<'e> {
    pub store: Box<dyn Store + 'e>,
    pub actions: Vec<Tidy>,
    /// Ends the settle wait early.
    pub stop: Stop,
}

impl Client for Cleanup<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if self.actions.is_empty() {
            return Ok(None);
        }
        let kind = match self.actions.remove(0) {
            Tidy::Analyze(t) => {
                self.store.analyze(t)?;
                IbenchKind::Analyze
            }
            Tidy::Engine(m) => {
                self.store.maintain(m)?;
                match m {
                    Maintenance::Flush => IbenchKind::Flush,
                    Maintenance::WaitForCompaction | Maintenance::CompactLevel0 => {
                        IbenchKind::Compact
                    }
                }
            }
            Tidy::Settle(d) => {
                // In slices, so a stop ends the wait promptly.
                self.stop.sleep(d);
                IbenchKind::Settle
            }
        };
        Ok(Some(Done::of(kind)))
    }
}
