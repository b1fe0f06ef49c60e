//! The insert benchmark (docs/workloads.md §2): `l.i0` loads tables with their primary key
//! only, `l.x` creates the three secondary indexes, `l.i1` and `l.i2` insert with matching
//! deletes so the tables stay the same size, `cleanup` brings the engine to a steady state, and
//! the `qr<N>`/`qp<N>` steps run range or point queries flat out while each client's
//! background inserter writes N rows/s and its deleter follows, until the inserters have
//! written `query_secs` × N rows each. Each client that deletes has an inserter and a deleter
//! on connections of their own, kept in step as iibench.py's queues keep them. Natively on sql
//! engines, through the row/index mapping on kv engines, as iibench.py's mongo mode on
//! document servers.

mod clients;
mod doc;
pub mod gen;
mod kv;
mod lockstep;
mod sizes;
mod sql;

use crate::params::{record, seed_or_clock, Params, Span, Switch};
use crate::report::ReportHooks;
use crate::statements::Statements;
use crate::steps::Steps;
use crate::{
    alike, NewBackground, NewClient, NewClients, NewStep, PreparedStep, Workload, WorkloadEntry,
};
use clients::{Cleanup, Deleter, IbenchKind, Indexer, Querier, Store, Tidy, Writer};
use fathom_api::family::Db;
use fathom_api::kind::StepKinds;
use fathom_api::step::{BackgroundClient, Client, StepPlan};
use fathom_api::stop::Stop;
use fathom_api::target::Maintenance;
use gen::{RowGen, Shape, Table, CLASSIC, CURRENT};
use lockstep::Lockstep;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sizes::Sizes;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The insert benchmark's options, as `--param` takes them.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct IbenchParams {
    /// steps in order: l.i0, l.x, l.i1, l.i2, cleanup, qr<N> (range queries) and qp<N> (point
    /// queries) with N inserts/s per client in the background
    steps: String,
    /// rows l.i0 loads, over all clients (ra.sh's nr1)
    rows: u64,
    /// rows l.i1 (4/5) and l.i2 (1/5) insert and delete, over all clients (nr2)
    write_rows: u64,
    /// rows l.x inserts before it creates the indexes, over all clients
    lx_rows: u64,
    /// nominal length of each query step (querysecs): it ends when each client's background
    /// inserter has written query_secs × N rows, as iq.sh
    query_secs: Span,
    /// wait at the end of cleanup; auto: 60 s + 1 s per million l.i0 rows, at most 1200 s, as
    /// iibench
    settle: String,
    /// secondary indexes, 0-3 (--num_secondary_indexes)
    secondary_indexes: u64,
    /// current (iibench since 2023-12) or classic (v0/v1, iibench-mongodb) index columns
    index_style: IndexStyle,
    /// rows per INSERT in l.i0
    commit_i0: u64,
    /// rows per INSERT (and DELETE) in l.i1
    commit_i1: u64,
    /// rows per INSERT (and DELETE) in l.i2
    commit_i2: u64,
    /// rows per background INSERT in the query steps (at most the rate)
    commit_q: u64,
    /// delete as many rows as l.i1, l.i2 and the query steps insert (--delete_per_insert)
    deletes: Switch,
    /// all clients use table pi1 instead of one table each (only1t)
    shared_table: Switch,
    /// LIMIT of a range query, ids of a point query
    rows_per_query: u64,
    /// shortest data column
    data_length_min: u64,
    /// longest data column
    data_length_max: u64,
    /// percent of 3/4 of data that is random (the rest is 'a')
    data_random_pct: u64,
    /// cashregisterid is uniform below this
    cashregisters: u64,
    /// productid is uniform below this
    products: u64,
    /// customerid is uniform below this
    customers: u64,
    /// price is uniform below this
    max_price: u64,
    /// random seed; 0 picks one from the clock (recorded)
    seed: u64,
    /// how SQL statements are sent: original (SQL text to MariaDB, as iibench.py's MySQLdb;
    /// prepared to PostgreSQL, as iibench.py there), text (MariaDB only) or prepared
    statements: Statements,
}

impl Default for IbenchParams {
    fn default() -> Self {
        IbenchParams {
            steps: "l.i0,l.x,l.i1,l.i2,cleanup,qr100,qp100,qr500,qp500,qr1000,qp1000".into(),
            rows: 1_000_000,
            write_rows: 500_000,
            lx_rows: 100,
            query_secs: Span::new("60s"),
            settle: "auto".into(),
            secondary_indexes: 3,
            index_style: IndexStyle::Current,
            commit_i0: 100,
            commit_i1: 50,
            commit_i2: 5,
            commit_q: 50,
            deletes: Switch::new("on"),
            shared_table: Switch::new("off"),
            rows_per_query: 10,
            data_length_min: 10,
            data_length_max: 20,
            data_random_pct: 50,
            cashregisters: 1000,
            products: 10_000,
            customers: 100_000,
            max_price: 500,
            seed: 0,
            statements: Statements::Original,
        }
    }
}

/// What a step does.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Work {
    Load {
        rows: u64,
        batch: usize,
        deletes: bool,
        create: bool,
    },
    Index {
        rows: u64,
    },
    Cleanup {
        settle: Duration,
    },
    Query {
        point: bool,
        batch: usize,
        /// Rows each client's background inserter writes.
        rows: u64,
    },
}

pub struct Ibench {
    shape: Arc<Shape>,
    pool: Arc<Vec<u8>>,
    seed: u64,
    statements: Statements,
    shared: bool,
    deletes: bool,
    tables: u32,
    steps: Steps<Work>,
    resolved: BTreeMap<String, String>,
}

fn positive(name: &str, v: u64) -> anyhow::Result<u64> {
    if v == 0 {
        anyhow::bail!("parameter `{name}`: must be at least 1");
    }
    Ok(v)
}

/// Which columns the secondary indexes hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum IndexStyle {
    /// iibench.py since December 2023.
    Current,
    /// iibench v0/v1 and iibench-mongodb.
    Classic,
}

fn shape(p: &IbenchParams) -> anyhow::Result<Shape> {
    let count = p.secondary_indexes;
    if count > 3 {
        anyhow::bail!("parameter `secondary_indexes`: expected 0 to 3, got {count}");
    }
    let style = match p.index_style {
        IndexStyle::Current => CURRENT,
        IndexStyle::Classic => CLASSIC,
    };
    let (data_min, data_max) = (p.data_length_min as usize, p.data_length_max as usize);
    if data_min > data_max || data_max > 4000 {
        anyhow::bail!(
            "parameters `data_length_min` and `data_length_max`: expected min <= max <= 4000, got {data_min} and {data_max}"
        );
    }
    let pct = p.data_random_pct;
    if pct > 100 {
        anyhow::bail!("parameter `data_random_pct`: expected 0 to 100, got {pct}");
    }
    Ok(Shape {
        cashregisters: positive("cashregisters", p.cashregisters)? as i64,
        products: positive("products", p.products)? as i64,
        customers: positive("customers", p.customers)? as i64,
        max_price: positive("max_price", p.max_price)? as i64,
        data_min,
        data_max,
        data_random_pct: pct as u32,
        indexes: style[..count as usize].to_vec(),
        rows_per_query: positive("rows_per_query", p.rows_per_query)? as usize,
    })
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    let mut p: IbenchParams = params.read("ibench")?;
    p.seed = seed_or_clock(p.seed);
    let dop = clients.max(1) as u64;
    let shape = shape(&p)?;
    let rows = positive("rows", p.rows)?;
    let settle = match p.settle.as_str() {
        "auto" => Duration::from_secs((60 + rows / 1_000_000).min(1200)),
        text => {
            Span::try_from(text.to_string())
                .map_err(|e| anyhow::anyhow!("parameter `settle`: {e}"))?
                .value
        }
    };
    let commit = |name: &str| {
        let v = match name {
            "commit_i0" => p.commit_i0,
            "commit_i1" => p.commit_i1,
            "commit_i2" => p.commit_i2,
            _ => p.commit_q,
        };
        positive(name, v).map(|v| v as usize)
    };
    let shared = p.shared_table.value;
    let mut w = Ibench {
        pool: gen::random_pool(p.seed, 1 << 20),
        shape: Arc::new(shape),
        seed: p.seed,
        shared,
        deletes: p.deletes.value,
        tables: if shared { 1 } else { dop as u32 },
        steps: Steps::default(),
        resolved: record(&p),
        statements: p.statements,
    };
    let sizes = Sizes {
        per_client: |total: u64| total.div_ceil(dop),
        rows,
        write_rows: p.write_rows,
        lx_rows: p.lx_rows,
        deletes: p.deletes.value,
        settle,
        query_secs: p.query_secs.value,
        dop,
        ranges: !w.shape.indexes.is_empty(),
    };
    for name in p.steps.split(',').map(str::trim) {
        if name.is_empty() {
            continue;
        }
        let (work, plan) = sizes.step(name, &commit)?;
        let plan = StepPlan {
            name: name.to_string(),
            clients: if plan.clients == 0 {
                dop as usize
            } else {
                plan.clients
            },
            kinds: StepKinds::every::<IbenchKind>(),
            ..plan
        };
        w.steps.push(plan, work);
    }
    if w.steps.is_empty() {
        anyhow::bail!("parameter `steps`: no steps given");
    }
    Ok(Box::new(w))
}

crate::params::timed!(IbenchParams, query_secs);

pub const ENTRY: WorkloadEntry = WorkloadEntry::new::<IbenchParams, IbenchKind>(
    "ibench",
    "the insert benchmark: load, create indexes, insert+delete, cleanup, then range and point queries beside rate-limited inserts",
    build,
    ReportHooks::NONE,
);

impl Ibench {
    /// The tables client `n` writes or queries.
    fn mine(&self, all: &[Arc<Table>], n: usize) -> Vec<Arc<Table>> {
        let t = if self.shared { 0 } else { n % all.len() };
        vec![Arc::clone(&all[t])]
    }

    fn store<'e>(&self, db: Db<'e>) -> anyhow::Result<Box<dyn Store + 'e>> {
        Ok(match db {
            Db::Sql(e) => Box::new(sql::SqlStore::new(
                e,
                Arc::clone(&self.shape),
                self.statements,
            )?),
            Db::Kv(e) => Box::new(kv::KvStore::new(e, Arc::clone(&self.shape))?),
            Db::Doc(e) => Box::new(doc::DocStore::new(e, Arc::clone(&self.shape))?),
            other => return Err(other.refused(ENTRY.name)),
        })
    }

    fn gen(&self, step: usize, thread: usize) -> RowGen {
        RowGen::new(
            Arc::clone(&self.shape),
            Arc::clone(&self.pool),
            crate::params::thread_seed(self.seed, step, thread),
        )
    }
}

/// A step of the insert benchmark on one engine, with what its threads share: the tables
/// (their ids read from the database) and, per client, the gate between its inserter and its
/// deleter.
struct IbenchStep<'a> {
    w: &'a Ibench,
    engine: Db<'a>,
    index: usize,
    tables: Vec<Arc<Table>>,
    gates: Vec<Arc<Lockstep>>,
    stop: Stop,
}

impl<'a> IbenchStep<'a> {
    fn client_count(&self) -> usize {
        self.w.steps.plan(self.index).clients
    }

    /// Client `n`: its table's inserter (with its deleter's gate when the step deletes), the
    /// index builder, the cleanup, or a querier.
    fn client(&self, n: usize) -> NewClient<'a> {
        let w = self.w;
        let mine = w.mine(&self.tables, n);
        let gen = w.gen(self.index, n);
        Ok(match *w.steps.work(self.index) {
            Work::Load {
                rows,
                batch,
                deletes,
                ..
            } => Box::new(Writer {
                batch_rows: batch,
                rows_left: Some(rows),
                gate: deletes.then(|| Arc::clone(&self.gates[n])),
                ..Writer::new(w.store(self.engine)?, mine, gen)
            }),
            Work::Index { rows } => return self.indexer(n, rows),
            Work::Cleanup { settle } => {
                let mut actions: Vec<Tidy> =
                    self.tables.iter().map(|t| Tidy::Analyze(t.n)).collect();
                actions.push(Tidy::Engine(Maintenance::Flush));
                actions.push(Tidy::Engine(Maintenance::WaitForCompaction));
                actions.push(Tidy::Settle(settle));
                Box::new(Cleanup {
                    store: w.store(self.engine)?,
                    actions,
                    stop: self.stop.clone(),
                })
            }
            Work::Query { point, .. } => Box::new(Querier {
                store: w.store(self.engine)?,
                table: Arc::clone(&mine[0]),
                shape: Arc::clone(&w.shape),
                gen,
                point,
                queries: 0,
                max_id: 0,
                ids: Vec::new(),
            }),
        })
    }

    /// Client `n`'s deleter, on its own connection, following its inserter through their gate.
    fn deleter(&self, n: usize, batch: usize, rows: u64) -> anyhow::Result<Deleter<'a>> {
        let mine = self.w.mine(&self.tables, n);
        Ok(Deleter::new(
            self.w.store(self.engine)?,
            Arc::clone(&mine[0]),
            Arc::clone(&self.gates[n]),
            batch,
            Some(rows),
        ))
    }

    /// `l.x`'s client `n`: with one shared table, the first client inserts and indexes and the
    /// others rest.
    fn indexer(&self, n: usize, rows: u64) -> NewClient<'a> {
        let w = self.w;
        let mine = w.mine(&self.tables, n);
        let store = w.store(self.engine)?;
        let active = !w.shared || n == 0;
        let groups = if active {
            let t = mine[0].n;
            store
                .index_groups(w.shape.indexes.len())
                .into_iter()
                .map(|g| (t, g))
                .collect()
        } else {
            Vec::new()
        };
        let rows = match (active, w.shared) {
            (false, _) => 0,
            (true, true) => rows * self.client_count() as u64,
            (true, false) => rows,
        };
        Ok(Box::new(Indexer {
            writer: Writer {
                batch_rows: rows.max(1) as usize,
                rows_left: Some(rows),
                ..Writer::new(store, mine, w.gen(self.index, n))
            },
            groups,
        }))
    }
}

impl<'a> PreparedStep<'a> for IbenchStep<'a> {
    fn clients(&self) -> NewClients<'a> {
        alike(self.client_count(), |n| self.client(n))
    }

    /// A load step that deletes: a deleter per client beside its inserter.
    fn helpers(&self) -> NewClients<'a> {
        let Work::Load {
            rows,
            batch,
            deletes: true,
            ..
        } = *self.w.steps.work(self.index)
        else {
            return Ok(Vec::new());
        };
        (0..self.client_count())
            .map(|n| Ok(Box::new(self.deleter(n, batch, rows)?) as Box<dyn Client + 'a>))
            .collect()
    }

    /// Per client, an inserter held to the client's rate and, with deletes on, the deleter
    /// that follows it, each on a connection of its own (iibench.py's processes); the step
    /// ends when they are done.
    fn background(&self) -> NewBackground<'a> {
        let w = self.w;
        let Work::Query { batch, rows, .. } = *w.steps.work(self.index) else {
            return Ok(Vec::new());
        };
        let clients = self.client_count();
        let ending = |client: Box<dyn Client + 'a>, paced| BackgroundClient {
            client,
            paced,
            ends_step: true,
        };
        let mut writers = Vec::new();
        for n in 0..clients {
            // Built before its inserter runs, so the inserter waits for it.
            let deleter = w
                .deletes
                .then(|| self.deleter(n, batch, rows))
                .transpose()?;
            let inserter = Writer {
                batch_rows: batch,
                rows_left: Some(rows),
                gate: w.deletes.then(|| Arc::clone(&self.gates[n])),
                ..Writer::new(
                    w.store(self.engine)?,
                    w.mine(&self.tables, n),
                    w.gen(self.index, clients + 1 + n),
                )
            };
            writers.push(ending(Box::new(inserter), true));
            if let Some(deleter) = deleter {
                writers.push(ending(Box::new(deleter), false));
            }
        }
        Ok(writers)
    }
}

impl Workload for Ibench {
    fn steps(&self) -> &[StepPlan] {
        self.steps.plans()
    }

    /// Fresh tables for each step (so it reads the ids from the database) and fresh gates,
    /// shared by its clients, helpers and background writers; `l.i0` creates the tables first.
    fn step<'a>(&'a self, engine: Db<'a>, index: usize, stop: &Stop) -> NewStep<'a> {
        let tables: Vec<Arc<Table>> = (1..=self.tables).map(|n| Arc::new(Table::new(n))).collect();
        if let Work::Load { create: true, .. } = *self.steps.work(index) {
            let mut store = self.store(engine)?;
            for t in &tables {
                store.create_table(t.n)?;
            }
        }
        let gates = (0..self.steps.plan(index).clients)
            .map(|_| Arc::new(Lockstep::new(stop)))
            .collect();
        Ok(Box::new(IbenchStep {
            w: self,
            engine,
            index,
            tables,
            gates,
            stop: stop.clone(),
        }))
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }
}

#[cfg(test)]
mod tests;
