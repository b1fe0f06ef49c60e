//! The insert benchmark (specs/workloads.md §2): `l.i0` loads tables with their primary key
//! only, `l.x` creates the three secondary indexes, `l.i1` and `l.i2` insert with matching
//! deletes so the tables stay the same size, `cleanup` brings the engine to a steady state, and
//! the `qr<N>`/`qp<N>` steps run range or point queries flat out while a background inserter
//! and deleter write N rows/s per client. Natively on sql engines, through the row/index
//! mapping on kv engines.

mod clients;
pub mod gen;
mod kv;
mod sql;

use crate::params::{ParamSpec, Params};
use crate::shared::PerStep;
use crate::{NewBackground, NewClient, Workload, WorkloadEntry};
use clients::{Cleanup, Indexer, Querier, Store, Tidy, Writer, KINDS};
use fathom_core::driver::{Pace, StepPlan};
use fathom_core::family::Db;
use fathom_core::target::Maintenance;
use gen::{RowGen, Shape, Table, CLASSIC, CURRENT};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "steps", default: "l.i0,l.x,l.i1,l.i2,cleanup,qr100,qp100,qr500,qp500,qr1000,qp1000", help: "steps in order: l.i0, l.x, l.i1, l.i2, cleanup, qr<N> (range queries) and qp<N> (point queries) with N inserts/s per client in the background" },
    ParamSpec { name: "rows", default: "1000000", help: "rows l.i0 loads, over all clients (ra.sh's nr1)" },
    ParamSpec { name: "write_rows", default: "500000", help: "rows l.i1 (4/5) and l.i2 (1/5) insert and delete, over all clients (nr2)" },
    ParamSpec { name: "lx_rows", default: "100", help: "rows l.x inserts before it creates the indexes, over all clients" },
    ParamSpec { name: "query_secs", default: "60s", help: "length of each query step (querysecs)" },
    ParamSpec { name: "settle", default: "auto", help: "wait at the end of cleanup; auto: 60 s + 1 s per million l.i0 rows, at most 1200 s, as iibench" },
    ParamSpec { name: "secondary_indexes", default: "3", help: "secondary indexes, 0-3 (--num_secondary_indexes)" },
    ParamSpec { name: "index_style", default: "current", help: "current (iibench since 2023-12) or classic (v0/v1, iibench-mongodb) index columns" },
    ParamSpec { name: "commit_i0", default: "100", help: "rows per INSERT in l.i0" },
    ParamSpec { name: "commit_i1", default: "50", help: "rows per INSERT (and DELETE) in l.i1" },
    ParamSpec { name: "commit_i2", default: "5", help: "rows per INSERT (and DELETE) in l.i2" },
    ParamSpec { name: "commit_q", default: "50", help: "rows per background INSERT in the query steps (at most the rate)" },
    ParamSpec { name: "deletes", default: "on", help: "delete as many rows as l.i1, l.i2 and the query steps insert (--delete_per_insert)" },
    ParamSpec { name: "shared_table", default: "off", help: "all clients use table pi1 instead of one table each (only1t)" },
    ParamSpec { name: "rows_per_query", default: "10", help: "LIMIT of a range query, ids of a point query" },
    ParamSpec { name: "data_length_min", default: "10", help: "shortest data column" },
    ParamSpec { name: "data_length_max", default: "20", help: "longest data column" },
    ParamSpec { name: "data_random_pct", default: "50", help: "percent of 3/4 of data that is random (the rest is 'a')" },
    ParamSpec { name: "cashregisters", default: "1000", help: "cashregisterid is uniform below this" },
    ParamSpec { name: "products", default: "10000", help: "productid is uniform below this" },
    ParamSpec { name: "customers", default: "100000", help: "customerid is uniform below this" },
    ParamSpec { name: "max_price", default: "500", help: "price is uniform below this" },
    ParamSpec { name: "seed", default: "0", help: "random seed; 0 picks one from the clock (recorded)" },
];

pub const ENTRY: WorkloadEntry = WorkloadEntry {
    name: "ibench",
    about: "the insert benchmark: load, create indexes, insert+delete, cleanup, then range and point queries beside rate-limited inserts",
    params: PARAMS,
    build,
    families: &["kv", "sql"],
    duration_param: "query_secs",
};

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
    },
}

pub struct Ibench {
    shape: Arc<Shape>,
    pool: Arc<Vec<u8>>,
    seed: u64,
    shared: bool,
    deletes: bool,
    tables: u32,
    plans: Vec<StepPlan>,
    work: Vec<Work>,
    resolved: BTreeMap<String, String>,
    /// The tables of the step whose clients are being built (fresh ids per step).
    current: PerStep<Vec<Arc<Table>>>,
}

fn positive(params: &Params, name: &str) -> anyhow::Result<u64> {
    let v = params.u64(PARAMS, name)?;
    if v == 0 {
        anyhow::bail!("parameter `{name}`: must be at least 1");
    }
    Ok(v)
}

fn shape(params: &Params) -> anyhow::Result<Shape> {
    let int = |name| positive(params, name).map(|v| v as i64);
    let count = params.u64(PARAMS, "secondary_indexes")?;
    if count > 3 {
        anyhow::bail!("parameter `secondary_indexes`: expected 0 to 3, got {count}");
    }
    let style = match params.raw(PARAMS, "index_style") {
        "current" => CURRENT,
        "classic" => CLASSIC,
        other => {
            anyhow::bail!("parameter `index_style`: expected current or classic, got `{other}`")
        }
    };
    let data_min = params.u64(PARAMS, "data_length_min")? as usize;
    let data_max = params.u64(PARAMS, "data_length_max")? as usize;
    if data_min > data_max || data_max > 4000 {
        anyhow::bail!(
            "parameters `data_length_min` and `data_length_max`: expected min <= max <= 4000, got {data_min} and {data_max}"
        );
    }
    let pct = params.u64(PARAMS, "data_random_pct")?;
    if pct > 100 {
        anyhow::bail!("parameter `data_random_pct`: expected 0 to 100, got {pct}");
    }
    Ok(Shape {
        cashregisters: int("cashregisters")?,
        products: int("products")?,
        customers: int("customers")?,
        max_price: int("max_price")?,
        data_min,
        data_max,
        data_random_pct: pct as u32,
        indexes: style[..count as usize].to_vec(),
        rows_per_query: positive(params, "rows_per_query")? as usize,
    })
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    params.check("ibench", PARAMS)?;
    let dop = clients.max(1) as u64;
    let shape = shape(params)?;
    let rows = positive(params, "rows")?;
    let write_rows = params.u64(PARAMS, "write_rows")?;
    let deletes = params.on_off(PARAMS, "deletes")?;
    let shared = params.on_off(PARAMS, "shared_table")?;
    let query_secs = params.duration(PARAMS, "query_secs")?;
    let settle = match params.raw(PARAMS, "settle") {
        "auto" => Duration::from_secs((60 + rows / 1_000_000).min(1200)),
        _ => params.duration(PARAMS, "settle")?,
    };
    let commit = |name: &str| positive(params, name).map(|v| v as usize);
    let seed = params.seed(PARAMS)?;
    let mut resolved = params.resolved(PARAMS);
    resolved.insert("seed".into(), seed.to_string());
    let mut w = Ibench {
        pool: gen::random_pool(seed, 1 << 20),
        shape: Arc::new(shape),
        seed,
        shared,
        deletes,
        tables: if shared { 1 } else { dop as u32 },
        plans: Vec::new(),
        work: Vec::new(),
        resolved,
        current: PerStep::default(),
    };
    let sizes = Sizes {
        per_client: |total: u64| total.div_ceil(dop),
        rows,
        write_rows,
        lx_rows: params.u64(PARAMS, "lx_rows")?,
        deletes,
        settle,
        query_secs,
        dop,
        ranges: !w.shape.indexes.is_empty(),
    };
    for name in params.raw(PARAMS, "steps").split(',').map(str::trim) {
        if name.is_empty() {
            continue;
        }
        let (work, plan) = sizes.step(name, &commit)?;
        w.plans.push(StepPlan {
            name: name.to_string(),
            clients: if plan.clients == 0 {
                dop as usize
            } else {
                plan.clients
            },
            op_kinds: KINDS.to_vec(),
            ..plan
        });
        w.work.push(work);
    }
    if w.plans.is_empty() {
        anyhow::bail!("parameter `steps`: no steps given");
    }
    Ok(Box::new(w))
}

/// How much each step does.
struct Sizes<F> {
    /// A total over all clients, per client.
    per_client: F,
    rows: u64,
    write_rows: u64,
    lx_rows: u64,
    deletes: bool,
    settle: Duration,
    query_secs: Duration,
    dop: u64,
    /// Whether there are secondary indexes for range queries.
    ranges: bool,
}

impl<F: Fn(u64) -> u64> Sizes<F> {
    /// What step `name` does and how it runs; `commit` reads a rows-per-statement parameter.
    fn step(
        &self,
        name: &str,
        commit: &dyn Fn(&str) -> anyhow::Result<usize>,
    ) -> anyhow::Result<(Work, StepPlan)> {
        let load = |rows, batch, deletes| Work::Load {
            rows: (self.per_client)(rows),
            batch,
            deletes,
            create: name == "l.i0",
        };
        Ok(match name {
            "l.i0" => (load(self.rows, commit("commit_i0")?, false), StepPlan::default()),
            "l.x" => (
                Work::Index {
                    rows: (self.per_client)(self.lx_rows),
                },
                StepPlan::default(),
            ),
            "l.i1" => (
                load((self.write_rows * 4).div_ceil(5), commit("commit_i1")?, self.deletes),
                StepPlan::default(),
            ),
            "l.i2" => (
                load(self.write_rows / 5, commit("commit_i2")?, self.deletes),
                StepPlan::default(),
            ),
            "cleanup" => (
                Work::Cleanup {
                    settle: self.settle,
                },
                StepPlan {
                    clients: 1,
                    ..StepPlan::default()
                },
            ),
            q if q.starts_with("qr") || q.starts_with("qp") => {
                let rate: u64 = q[2..].parse().ok().filter(|r| *r > 0).ok_or_else(|| {
                    anyhow::anyhow!("parameter `steps`: `{q}` needs a rate, as qr100 or qp500")
                })?;
                let point = q.starts_with("qp");
                if !point && !self.ranges {
                    anyhow::bail!(
                        "parameter `steps`: `{q}` runs range queries on the secondary indexes; secondary_indexes is 0"
                    );
                }
                (
                    Work::Query {
                        point,
                        batch: commit("commit_q")?.min(rate as usize),
                    },
                    StepPlan {
                        duration: Some(self.query_secs),
                        background: Some(Pace::RowsPerSec((rate * self.dop) as f64)),
                        ..StepPlan::default()
                    },
                )
            }
            other => anyhow::bail!(
                "parameter `steps`: unknown step `{other}`; steps are l.i0, l.x, l.i1, l.i2, cleanup, qr<N>, qp<N>"
            ),
        })
    }
}

impl Ibench {
    /// The tables client `thread` writes or queries.
    fn mine(&self, all: &[Arc<Table>], thread: usize) -> Vec<Arc<Table>> {
        let t = if self.shared { 0 } else { thread % all.len() };
        vec![Arc::clone(&all[t])]
    }

    fn store<'e>(&self, db: Db<'e>) -> anyhow::Result<Box<dyn Store + 'e>> {
        Ok(match db {
            Db::Sql(e) => Box::new(sql::SqlStore::new(e, Arc::clone(&self.shape))?),
            Db::Kv(e) => Box::new(kv::KvStore::new(e, Arc::clone(&self.shape))?),
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

impl Workload for Ibench {
    fn steps(&self) -> &[StepPlan] {
        &self.plans
    }

    /// Fresh tables for each step (so it reads the ids from the database), shared by its
    /// clients and background writer; `l.i0` creates them first.
    fn prepare_step(&self, engine: Db<'_>, step: usize) -> anyhow::Result<()> {
        let tables: Vec<Arc<Table>> = (1..=self.tables).map(|n| Arc::new(Table::new(n))).collect();
        if let Work::Load { create: true, .. } = self.work[step] {
            let mut store = self.store(engine)?;
            for t in &tables {
                store.create_table(t.n)?;
            }
        }
        self.current.set(step, tables);
        Ok(())
    }

    fn client<'e>(&self, engine: Db<'e>, step: usize, thread: usize) -> NewClient<'e> {
        let all = self.current.get(step)?;
        let mine = self.mine(&all, thread);
        let store = self.store(engine)?;
        let gen = self.gen(step, thread);
        Ok(match self.work[step] {
            Work::Load {
                rows,
                batch,
                deletes,
                ..
            } => Box::new(Writer {
                batch_rows: batch,
                rows_left: Some(rows),
                deletes,
                ..Writer::new(store, mine, gen)
            }),
            Work::Index { rows } => {
                // One shared table: the first client inserts and indexes, the others rest.
                let active = !self.shared || thread == 0;
                let groups = if active {
                    let t = mine[0].n;
                    store
                        .index_groups(self.shape.indexes.len())
                        .into_iter()
                        .map(|g| (t, g))
                        .collect()
                } else {
                    Vec::new()
                };
                let rows = if !active {
                    0
                } else if self.shared {
                    rows * self.plans[step].clients as u64
                } else {
                    rows
                };
                Box::new(Indexer {
                    writer: Writer {
                        batch_rows: rows.max(1) as usize,
                        rows_left: Some(rows),
                        ..Writer::new(store, mine, gen)
                    },
                    groups,
                })
            }
            Work::Cleanup { settle } => {
                let mut actions: Vec<Tidy> = all.iter().map(|t| Tidy::Analyze(t.n)).collect();
                actions.push(Tidy::Engine(Maintenance::Flush));
                actions.push(Tidy::Engine(Maintenance::WaitForCompaction));
                actions.push(Tidy::Settle(settle));
                Box::new(Cleanup { store, actions })
            }
            Work::Query { point, .. } => Box::new(Querier {
                store,
                table: Arc::clone(&mine[0]),
                shape: Arc::clone(&self.shape),
                gen,
                point,
                queries: 0,
                max_id: 0,
                ids: Vec::new(),
            }),
        })
    }

    fn background<'e>(&self, engine: Db<'e>, step: usize) -> NewBackground<'e> {
        let Work::Query { batch, .. } = self.work[step] else {
            return Ok(None);
        };
        let all = self.current.get(step)?;
        Ok(Some(Box::new(Writer {
            batch_rows: batch,
            deletes: self.deletes,
            ..Writer::new(
                self.store(engine)?,
                all.to_vec(),
                self.gen(step, self.plans[step].clients + 1),
            )
        })))
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }
}

#[cfg(test)]
mod tests;
