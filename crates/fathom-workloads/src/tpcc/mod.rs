//! TPC-C on the sql family as Percona-Lab's sysbench-tpcc runs it (docs/workloads.md): a
//! `prepare` step that creates its nine tables (per table copy) and loads warehouses in
//! parallel, a timed `run` step of its five transactions with its mix, and a `check` step of
//! TPC-C's consistency conditions 1–4. Where sysbench-tpcc departs from the specification,
//! `follow=spec` takes the specification's choice. On kv engines the same steps run the same
//! transactions over a key layout of the nine tables (`kv`); on document servers over py-tpcc's
//! collections and commands (`doc`), or with `documents=kv` over the key layout.

mod check;
mod delivery;
mod doc;
mod gen;
mod input;
mod kv;
mod load;
mod new_order;
mod order_status;
mod payment;
mod population;
mod report;
mod schema;
mod stmts;
mod txn;

use crate::params::{record, seed_or_clock, thread_seed, Params, Span, Switch};
use crate::statements::Statements;
use crate::steps::Steps;
use crate::{
    alike, kv_session, NewClient, NewClients, NewStep, PreparedStep, StepOn, Workload,
    WorkloadEntry,
};
use fathom_api::capability::Need;
use fathom_api::doc::DocEngine;
use fathom_api::family::{Db, Family};
use fathom_api::kind::StepKinds;
use fathom_api::kv::SessionOptions;
use fathom_api::sql::{Dialect, SqlEngine};
use fathom_api::step::StepPlan;
use fathom_api::stop::Stop;
use gen::{Draws, Follow};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// sysbench-tpcc's options, as `--param` takes them.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TpccParams {
    /// warehouses, the scale (sysbench-tpcc's --scale)
    warehouses: u32,
    /// copies of the nine tables, warehouse1 … warehouseN (--tables)
    tables: u32,
    /// steps to run, comma-separated: prepare, run, check
    steps: Vec<StepName>,
    /// sysbench-tpcc (its departures from TPC-C kept, to compare with it) or spec (the
    /// specification's choices where it departs)
    follow: Follow,
    /// isolation level: rr, rc or ser (--trx_level)
    isolation: Isolation,
    /// foreign keys on the tables (--use_fk; not on SQLite or MyRocks; MariaDB sessions turn
    /// their checks off, as sysbench-tpcc's)
    use_fk: Switch,
    /// how statements are sent: original (SQL text, as sysbench-tpcc's con:query; SQLite
    /// prepares), text, or prepared
    statements: Statements,
    /// on document servers: py-tpcc (its MongoDB driver's collections, documents and
    /// commands) or kv (the kv family's key layout in one collection)
    documents: Documents,
    /// length of the run step (--time)
    duration: Span,
    /// unrecorded time at the start of the run step
    warmup: Span,
    /// random seed; 0 picks one from the clock (recorded)
    seed: u64,
}

impl Default for TpccParams {
    fn default() -> Self {
        TpccParams {
            warehouses: 1,
            tables: 1,
            steps: vec![StepName::Prepare, StepName::Run, StepName::Check],
            follow: Follow::SysbenchTpcc,
            isolation: Isolation::Rr,
            use_fk: Switch::new("on"),
            statements: Statements::Original,
            documents: Documents::PyTpcc,
            duration: Span::new("60s"),
            warmup: Span::new("0s"),
            seed: 0,
        }
    }
}

/// A step of the workload, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum StepName {
    Prepare,
    Run,
    Check,
}

/// How the tables are kept on a document server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum Documents {
    /// py-tpcc's MongoDB driver's mapping: a collection per table, order lines inside orders.
    PyTpcc,
    /// The kv family's keys and values, one document each, in one collection.
    Kv,
}

/// sysbench-tpcc's `--trx_level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Isolation {
    Rr,
    Rc,
    Ser,
}

fathom_api::kinds! {
    /// TPC-C's transactions, and the steps around them.
    pub enum TpccKind {
        Load = ("load", Load, "a multi-row INSERT of the initial population (up to 512 KiB of SQL)"),
        NewOrder = ("new_order", Write, "a New-Order transaction that committed: 5 to 15 order lines"),
        NewOrderRollback = ("new_order_rollback", Write, "a New-Order transaction rolled back at its unused item (1%)"),
        Payment = ("payment", Write, "a Payment transaction: the warehouse, district and customer paid, a history row"),
        OrderStatus = ("order_status", Read, "an Order-Status transaction: a customer's last order and its lines"),
        Delivery = ("delivery", Write, "a Delivery transaction: the oldest new order of each of 10 districts delivered"),
        StockLevel = ("stock_level", Read, "a Stock-Level transaction: stock below a threshold among the last 20 orders' items"),
        Check = ("check", Check, "one consistency condition on one warehouse of one table copy"),
    }
}

pub struct Tpcc {
    p: TpccParams,
    /// Held through each transaction on a document server without transactions.
    serial: std::sync::Mutex<()>,
    steps: Steps<StepName>,
    resolved: BTreeMap<String, String>,
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    let mut p: TpccParams = params.read("tpcc")?;
    if p.warehouses == 0 || p.tables == 0 {
        anyhow::bail!("parameters `warehouses` and `tables` must be at least 1");
    }
    p.seed = seed_or_clock(p.seed);
    let mut steps = Steps::default();
    for &name in &p.steps {
        let plan = match name {
            StepName::Prepare => StepPlan {
                name: "prepare".into(),
                // sysbench-tpcc loads warehouses in parallel, one thread per warehouse at most.
                clients: clients.min(p.warehouses as usize),
                kinds: StepKinds::of(&[TpccKind::Load]),
                ..Default::default()
            },
            StepName::Run => StepPlan {
                name: "run".into(),
                clients,
                duration: Some(p.duration.value),
                warmup: p.warmup.value,
                kinds: StepKinds::of(&[
                    TpccKind::NewOrder,
                    TpccKind::Payment,
                    TpccKind::OrderStatus,
                    TpccKind::Delivery,
                    TpccKind::StockLevel,
                    TpccKind::NewOrderRollback,
                ]),
                ..Default::default()
            },
            StepName::Check => StepPlan {
                name: "check".into(),
                clients: 1,
                kinds: StepKinds::of(&[TpccKind::Check]),
                ..Default::default()
            },
        };
        steps.push(plan, name);
    }
    Ok(Box::new(Tpcc {
        serial: Default::default(),
        resolved: record(&p),
        steps,
        p,
    }))
}

crate::params::timed!(TpccParams, duration);

pub const ENTRY: WorkloadEntry = WorkloadEntry {
    families: &[Family::Sql, Family::Kv, Family::Doc],
    ..WorkloadEntry::new::<TpccParams, TpccKind>(
        "tpcc",
        "TPC-C as sysbench-tpcc runs it: prepare (warehouses in parallel), run (the five transactions), check; on kv engines through their transactions",
        build,
        report::HOOKS,
    )
};

impl Workload for Tpcc {
    fn steps(&self) -> &[StepPlan] {
        self.steps.plans()
    }

    fn step<'a>(&'a self, engine: Db<'a>, index: usize, _: &Stop) -> NewStep<'a> {
        if *self.steps.work(index) == StepName::Prepare {
            match engine {
                Db::Sql(e) => self.create(e)?,
                Db::Doc(e) if self.p.documents == Documents::PyTpcc => self.doc_items(e)?,
                _ => self.kv_items(engine)?,
            }
        }
        StepOn::boxed(self, engine, index)
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }

    /// Each transaction is one of the engine's (RocksDB opens as an OptimisticTransactionDB).
    fn needs(&self) -> Vec<Need> {
        match self.steps.works().any(|s| *s == StepName::Run) {
            true => vec![Need::Transactions],
            false => Vec::new(),
        }
    }
}

impl Tpcc {
    /// The tables, their indexes and the items of every copy (before the warehouses are
    /// loaded), and with `use_fk` the foreign keys, as sysbench-tpcc's `create_tables`.
    fn create(&self, e: &dyn SqlEngine) -> anyhow::Result<()> {
        let mut conn = e.connect()?;
        // The items draw from a step index past the last, apart from every client's.
        let mut draws = self.draws(self.steps.len(), 0);
        for t in 1..=self.p.tables {
            for ddl in schema::create(e.dialect(), e.storage_engine(), t) {
                conn.exec(&ddl)?;
            }
            for (sql, _) in load::items(&mut draws, t) {
                conn.exec(&sql)?;
            }
            for ddl in schema::indexes(t) {
                conn.exec(&ddl)?;
            }
            if self.foreign_keys(e) {
                for ddl in schema::foreign_keys(t) {
                    conn.exec(&ddl)?;
                }
            }
        }
        Ok(())
    }

    /// Whether the tables get foreign keys: `use_fk`, where the engine has them (not SQLite's
    /// tables as sysbench-tpcc would make them, nor MyRocks, which refuses them: sysbench-tpcc's
    /// MyRocks runs pass --use_fk=0).
    fn foreign_keys(&self, e: &dyn SqlEngine) -> bool {
        self.p.use_fk.value
            && e.dialect() != Dialect::Sqlite
            && e.storage_engine() != Some("ROCKSDB")
    }

    /// The items of every copy on a kv or document engine, before the warehouses load.
    fn kv_items(&self, engine: Db) -> anyhow::Result<()> {
        let mut session = kv_session(engine, "tpcc", SessionOptions::default())?;
        let mut draws = self.draws(self.steps.len(), 0);
        for t in 1..=self.p.tables {
            for batch in kv::load::items(&mut draws, t) {
                batch.write(session.as_mut())?;
            }
        }
        Ok(())
    }

    /// py-tpcc's collections and indexes of every copy, and its items, before the warehouses
    /// load.
    fn doc_items(&self, e: &dyn DocEngine) -> anyhow::Result<()> {
        let mut session = e.session()?;
        let mut draws = self.draws(self.steps.len(), 0);
        for t in 1..=self.p.tables {
            doc::create(e, t)?;
            for batch in doc::load::items(&mut draws, t) {
                batch.write(session.as_mut())?;
            }
        }
        Ok(())
    }

    fn draws(&self, step: usize, client: usize) -> Draws {
        let seed = thread_seed(self.p.seed, step, client);
        Draws::new(SmallRng::seed_from_u64(seed), self.p.follow)
    }

    /// A connection set up as sysbench-tpcc's `db_connection_init`: the isolation level, and
    /// on MariaDB foreign key checks off and autocommit off.
    fn connect<'a>(
        &self,
        e: &'a dyn SqlEngine,
    ) -> anyhow::Result<Box<dyn fathom_api::sql::SqlConn + 'a>> {
        let mut conn = e.connect()?;
        let level = match self.p.isolation {
            Isolation::Rr => "REPEATABLE READ",
            Isolation::Rc => "READ COMMITTED",
            Isolation::Ser => "SERIALIZABLE",
        };
        match e.dialect() {
            Dialect::MariaDb => {
                conn.exec(&format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"))?;
                conn.exec("SET FOREIGN_KEY_CHECKS=0")?;
                conn.exec("SET autocommit=0")?;
            }
            Dialect::Postgres => conn.exec(&format!(
                "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {level}"
            ))?,
            Dialect::Sqlite => {}
        }
        Ok(conn)
    }
}

impl<'a> PreparedStep<'a> for StepOn<'a, Tpcc> {
    fn clients(&self) -> NewClients<'a> {
        alike(self.workload.steps.plan(self.index).clients, |n| {
            self.client(n)
        })
    }
}

impl<'a> StepOn<'a, Tpcc> {
    /// The warehouses load client `n` loads: every n-th of them.
    fn mine(&self, n: usize) -> Vec<i64> {
        let threads = self.workload.steps.plan(self.index).clients.max(1) as i64;
        (1..=self.workload.p.warehouses as i64)
            .filter(|x| (x - 1) % threads == n as i64)
            .collect()
    }

    fn client(&self, n: usize) -> NewClient<'a> {
        let w = self.workload;
        let p = &w.p;
        let draws = w.draws(self.index, n);
        let warehouses = p.warehouses as i64;
        let inputs = input::Inputs {
            draws,
            tables: p.tables as usize,
            warehouses,
        };
        if let Db::Doc(e) = self.engine {
            if p.documents == Documents::PyTpcc {
                return self.doc_client(e, inputs, n);
            }
        }
        let Db::Sql(e) = self.engine else {
            let session = kv_session(self.engine, "tpcc", SessionOptions::default())?;
            return Ok(match *w.steps.work(self.index) {
                StepName::Prepare => Box::new(kv::load::KvLoader::new(
                    session,
                    inputs.draws,
                    (self.mine(n), p.tables),
                )),
                StepName::Run => {
                    let serial = match self.engine {
                        Db::Doc(e) if !e.transactions() => Some(&w.serial),
                        _ => None,
                    };
                    Box::new(kv::txn::KvTerminal::new(session, serial, inputs, n))
                }
                StepName::Check => Box::new(kv::check::client(session, p.tables, warehouses)),
            });
        };
        let now = match e.dialect() {
            Dialect::Sqlite => "CURRENT_TIMESTAMP",
            _ => "NOW()",
        };
        Ok(match *w.steps.work(self.index) {
            StepName::Prepare => {
                let mut conn = w.connect(e)?;
                if e.dialect() == Dialect::MariaDb {
                    // sysbench-tpcc's load_tables: autocommit on for the bulk inserts.
                    conn.exec("SET SESSION autocommit=1")?;
                }
                let mine = self.mine(n);
                Box::new(load::Loader::new(conn, inputs.draws, now, (mine, p.tables)))
            }
            StepName::Run => {
                let mut conn = w.connect(e)?;
                let text = p
                    .statements
                    .text_on(e.dialect(), &[Dialect::MariaDb, Dialect::Postgres])?;
                let mut prep = stmts::Preparer {
                    conn: conn.as_mut(),
                    text,
                    dialect: e.dialect(),
                };
                let all = (1..=p.tables)
                    .map(|t| prep.stmts(t))
                    .collect::<anyhow::Result<Vec<_>>>()?;
                let begin_write = match e.dialect() {
                    Dialect::Sqlite => "BEGIN IMMEDIATE",
                    _ => "BEGIN",
                };
                Box::new(txn::Terminal::new(conn, all, inputs, begin_write))
            }
            StepName::Check => Box::new(check::Check::new(e.connect()?, p.tables, warehouses)?),
        })
    }
}

impl<'a> StepOn<'a, Tpcc> {
    /// Client `n` of a step on a document server, with py-tpcc's mapping.
    fn doc_client(&self, e: &'a dyn DocEngine, inputs: input::Inputs, n: usize) -> NewClient<'a> {
        let w = self.workload;
        let session = e.session()?;
        Ok(match *w.steps.work(self.index) {
            StepName::Prepare => Box::new(doc::load::DocLoader::new(
                session,
                inputs.draws,
                (self.mine(n), w.p.tables),
            )),
            StepName::Run => {
                let server = doc::txn::Server::of(&e.version(), e.transactions());
                let serial = (!server.transactions).then_some(&w.serial);
                Box::new(doc::txn::DocTerminal::new(session, server, serial, inputs))
            }
            StepName::Check => Box::new(doc::check::client(
                session,
                w.p.tables,
                w.p.warehouses as i64,
            )),
        })
    }
}
