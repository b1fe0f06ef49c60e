//! Workloads written as data: a TOML file (`--workload FILE`, or a bundled name such as
//! `ycsb/workloada`) declares the records, a load and timed or counted phases with their mix
//! and key distribution, and this workload runs it with YCSB's generators on any kv engine or
//! document server (docs/declared.md).

mod bundled;
mod data;
mod doc;
pub mod file;
pub mod gen;
mod kv;
mod ops;
mod pgbench_format;
mod plan;
pub mod rate;
pub mod record;
mod refusal;
pub mod report;
pub mod script;
mod scripted;
mod sql;
pub mod sqlfile;
mod ycsb_format;

use crate::params::{record as record_params, seed_or_clock, thread_seed, Params, Span};
use crate::statements::Statements;
use crate::steps::Steps;
use crate::{alike, kv_session, NewClients, NewStep, PreparedStep, Workload, WorkloadEntry};
use doc::DocStore;
use fathom_api::family::{Db, Family};
use fathom_api::kind::StepKinds;
use fathom_api::kv::SessionOptions;
use fathom_api::pace::Spacing;
use fathom_api::step::{ClientGroup, StepPlan};
use fathom_api::stop::Stop;
use file::{Arrivals, KeyFormat, KvValue, Loaded, Phase};
use kv::KvStore;
use ops::{Core, Driven, Shared, Work};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use schemars::JsonSchema;
use script::Val;
use scripted::{LoadShared, ScriptClient, ScriptKind, TableLoader};
use serde::{Deserialize, Serialize};
use sql::SqlStore;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// What a workload file's run takes as `--param`: the file, and overrides of its counts.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DeclaredParams {
    /// the workload file (a path, or a bundled name such as ycsb/workloada); `--workload FILE`
    /// sets it
    file: String,
    /// records loaded and drawn from (YCSB's recordcount); 0: the file's
    records: u64,
    /// operations of each counted phase, over all clients (YCSB's operationcount); 0: the file's
    operations: u64,
    /// run every phase for this long instead of its count (`--duration` sets it); 0s: the file's
    duration: Span,
    /// unrecorded time at the start of each timed phase; 0s: the file's
    warmup: Span,
    /// steps to run, by name (the load's and the phases'); empty: all, in the file's order
    steps: Vec<String>,
    /// random seed; 0 picks one from the clock (recorded)
    seed: u64,
    /// the file's variable `scale` (pgbench's -s: the tables' size); 0: the file's
    scale: u64,
    /// other variables of the file's [vars], as NAME=INTEGER (`vars=table_size=100000`)
    vars: Vec<String>,
    /// how SQL statements are sent: original (as YCSB's JDBC binding: text on MariaDB, as
    /// Connector/J's client-side prepared statements; prepared on PostgreSQL and SQLite),
    /// text, or prepared
    statements: Statements,
}

impl Default for DeclaredParams {
    fn default() -> Self {
        DeclaredParams {
            file: String::new(),
            records: 0,
            operations: 0,
            duration: Span::new("0s"),
            warmup: Span::new("0s"),
            steps: Vec::new(),
            seed: 0,
            scale: 0,
            vars: Vec::new(),
            statements: Statements::Original,
        }
    }
}

crate::params::timed!(DeclaredParams, duration);

pub const ENTRY: WorkloadEntry = WorkloadEntry::new::<DeclaredParams, YcsbKind>(
    "declared",
    "a workload written as a TOML file (`--workload FILE`; bundled: ycsb/workloada … ycsb/workloadf, pgbench/…, sysbench/…, dbbench/readrandom, cases/tombstones, cases/long-ranges)",
    build,
    report::HOOKS,
);

fathom_api::kinds! {
    /// A declared workload's operations, as YCSB names them in its output.
    pub enum YcsbKind {
        Load = ("INSERT", Load, "the load's insert of the next record, every field written"),
        Read = ("READ", Read, "a read of one record (a get of its packed fields on kv engines)"),
        Update = ("UPDATE", Write, "an update of one field, or all: a get, then a put of the merged fields"),
        Insert = ("INSERT", Insert, "an insert of the next new record"),
        Scan = ("SCAN", Scan, "a seek to a record and up to the scan length read in key order"),
        ReadModifyWrite = ("READ-MODIFY-WRITE", Write, "a read of a record, then an update of it"),
        Delete = ("DELETE", Delete, "a delete of one record"),
    }
}

/// A step: the load, or a phase.
enum Step {
    Load,
    Phase(usize),
}

/// A step's own part: which step it is and, for a counted phase, its operations over all
/// clients (`None` for a timed one or the load).
struct StepWork {
    step: Step,
    operations: Option<u64>,
}

pub struct Declared {
    loaded: Loaded,
    records: u64,
    seed: u64,
    statements: Statements,
    steps: Steps<StepWork>,
    resolved: BTreeMap<String, String>,
    /// The file's variables' values (by slot), `--param scale` applied.
    vars: Vec<Val>,
    table_rows: TableRows,
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    Ok(Box::new(declare(params, clients)?))
}

/// The workload a file declares, its counts overridden by the parameters.
fn declare(params: &Params, clients: usize) -> anyhow::Result<Declared> {
    let mut p: DeclaredParams = params.read("declared")?;
    if p.file.is_empty() {
        anyhow::bail!("parameter `file`: the workload file (--workload FILE) is missing");
    }
    if clients == 0 {
        anyhow::bail!("a declared workload needs at least one client");
    }
    let loaded = file::load(&p.file)?;
    let f = &loaded.file;
    let records = match p.records {
        0 => *f.data.records.get_ref(),
        n => n,
    };
    p.seed = seed_or_clock(p.seed);
    let mut steps = Steps::default();
    let mut all: Vec<(String, Step)> = Vec::new();
    if let Some(l) = &f.load {
        all.push((l.name.clone(), Step::Load));
    }
    for (i, ph) in f.phases.iter().enumerate() {
        all.push((ph.name.get_ref().clone(), Step::Phase(i)));
    }
    for want in &p.steps {
        if !all.iter().any(|(n, _)| n == want) {
            let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
            anyhow::bail!(
                "parameter `steps`: {} has no step `{want}`; it has {}",
                p.file,
                names.join(", ")
            );
        }
    }
    let (vars, table_rows) = values(f, &p)?;
    for (name, step) in all {
        if !p.steps.is_empty() && !p.steps.contains(&name) {
            continue;
        }
        let (plan, operations) = match step {
            Step::Load => (
                StepPlan {
                    name: name.clone(),
                    clients,
                    kinds: match f.tables.is_empty() {
                        true => StepKinds::of(&[YcsbKind::Load]),
                        false => StepKinds::of(&[ScriptKind::Load]),
                    },
                    ..Default::default()
                },
                None,
            ),
            Step::Phase(i) => phase_plan(&f.phases[i], &name, clients, &p),
        };
        steps.push(plan, StepWork { step, operations });
    }
    let mut resolved = record_params(&p);
    resolved.insert("records".into(), records.to_string());
    resolved.insert(
        "file_digest".into(),
        format!("{:016x}", digest(&loaded.text)),
    );
    resolved.insert(fathom_schema::result::WORKLOAD_NAME.into(), f.name.clone());
    Ok(Declared {
        loaded,
        records,
        seed: p.seed,
        statements: p.statements,
        steps,
        resolved,
        vars,
        table_rows,
    })
}

/// Each SQL table's name and rows.
type TableRows = Vec<(String, u64)>;

/// The file's variables' values (`scale` as `--param scale` says), and each table's rows.
fn values(f: &file::File, p: &DeclaredParams) -> anyhow::Result<(Vec<Val>, TableRows)> {
    let mut vars = vec![Val::Int(0); f.names.0.len()];
    for (name, v) in &f.vars {
        if let Some(i) = f.names.find(name) {
            vars[i] = Val::Int(*v);
        }
    }
    if p.scale > 0 {
        let Some(i) = f
            .names
            .find("scale")
            .filter(|_| f.vars.contains_key("scale"))
        else {
            anyhow::bail!(
                "parameter `scale`: {} has no variable `scale` in [vars]",
                p.file
            );
        };
        vars[i] = Val::Int(p.scale as i64);
    }
    for set in &p.vars {
        let parsed = (set.split_once('='))
            .and_then(|(name, v)| Some((name.trim(), v.trim().parse::<i64>().ok()?)));
        let Some((name, v)) = parsed else {
            anyhow::bail!("parameter `vars`: `{set}`: NAME=INTEGER, as `table_size=100000`");
        };
        let Some(i) = f.names.find(name).filter(|_| f.vars.contains_key(name)) else {
            let known: Vec<&str> = f.vars.keys().map(String::as_str).collect();
            anyhow::bail!(
                "parameter `vars`: {} has no variable `{name}` in [vars] (it has: {})",
                p.file,
                known.join(", ")
            );
        };
        vars[i] = Val::Int(v);
    }
    let mut rng = SmallRng::seed_from_u64(p.seed);
    let mut rows = Vec::new();
    for t in &f.tables {
        let name = t.name.get_ref();
        let n = match t.rows_expr.as_ref().map(|e| e.eval(&vars, &mut rng)) {
            Some(Ok(Val::Int(n))) if n >= 0 => n as u64,
            Some(Err(e)) => anyhow::bail!("{}: table {name}'s rows: {e}", p.file),
            _ => anyhow::bail!("{}: table {name}'s rows: a count of 0 or more", p.file),
        };
        rows.push((name.clone(), n));
    }
    Ok((vars, rows))
}

/// A phase's plan and, when counted, its operations over all clients.
fn phase_plan(
    ph: &Phase,
    name: &str,
    clients: usize,
    p: &DeclaredParams,
) -> (StepPlan, Option<u64>) {
    let duration = match p.duration.value {
        Duration::ZERO => ph.duration.as_ref().map(|d| d.value),
        d => Some(d),
    };
    let warmup = match p.warmup.value {
        Duration::ZERO => ph.warmup.as_ref().map_or(Duration::ZERO, |w| w.value),
        w => w,
    };
    let ops = match (duration, p.operations) {
        (Some(_), _) => None,
        (None, 0) => ph.operations.as_ref().map(|o| *o.get_ref()),
        (None, n) => Some(n),
    };
    let spacing = match ph.arrivals {
        Arrivals::Poisson => Spacing::Poisson,
        Arrivals::Uniform => Spacing::Uniform,
    };
    let groups: Vec<ClientGroup> = (ph.groups().into_iter())
        .map(|(_, n, _, rate)| ClientGroup {
            clients: n.map_or(clients, |n| n as usize),
            rate: rate.map(|r| r.schedule(duration)),
            spacing,
        })
        .collect();
    let mut kinds: Vec<YcsbKind> = Vec::new();
    let scripts = (!ph.scripts.is_empty()).then(|| scripted::script_kinds(&ph.scripts));
    for (_, _, mix, _) in ph.groups() {
        for (k, w) in ops::KINDS.into_iter().zip(mix.weights()) {
            if w > 0.0 && !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    kinds.sort_by_key(|k| ops::KINDS.iter().position(|x| x == k));
    let plan = StepPlan {
        name: name.to_string(),
        clients: groups.iter().map(|g| g.clients).sum(),
        duration,
        warmup: if duration.is_some() {
            warmup
        } else {
            Duration::ZERO
        },
        kinds: scripts.unwrap_or_else(|| StepKinds::of(&kinds)),
        groups,
        ..Default::default()
    };
    (plan, ops)
}

/// FNV-1a of the file's text: the run records which file it ran, and history keys series by it.
fn digest(text: &str) -> u64 {
    text.bytes().fold(0xCBF2_9CE4_8422_2325, |h: u64, b| {
        (h ^ b as u64).wrapping_mul(1_099_511_628_211)
    })
}

impl Workload for Declared {
    fn steps(&self) -> &[StepPlan] {
        self.steps.plans()
    }

    /// SQL tables or scripts run on SQL engines only; db_bench's binary keys on kv engines only.
    fn refuses(&self, family: Family) -> Option<String> {
        let f = &self.loaded.file;
        let sql_only = !f.tables.is_empty() || f.phases.iter().any(|p| !p.scripts.is_empty());
        if sql_only && family != Family::Sql {
            return Some(format!(
                "{} has SQL tables or scripts: run it on a SQL engine (innodb, myrocks, postgres, \
                 sqlite-sql)",
                self.loaded.source
            ));
        }
        if *f.data.key_format.get_ref() == KeyFormat::Binary && family != Family::Kv {
            return Some(format!(
                "{}: data.key_format = \"binary\" (db_bench's keys) is for kv engines; a SQL \
                 table's key and a document's _id are text (key_format = \"ycsb\")",
                self.loaded.source
            ));
        }
        None
    }

    fn step<'a>(&'a self, engine: Db<'a>, index: usize, _stop: &Stop) -> NewStep<'a> {
        // The load starts from nothing: on a SQL database it makes the table, as YCSB's
        // JdbcDBCreateTable does first; on a document server it drops the collection.
        let table = &self.loaded.file.data.table;
        let f = &self.loaded.file;
        if let Some(why) = self.refuses(engine.family()) {
            anyhow::bail!("{why}");
        }
        let mut load = None;
        match (&self.steps.work(index).step, engine) {
            (Step::Load, Db::Sql(e)) if !f.tables.is_empty() => {
                let mut conn = e.connect()?;
                for ddl in scripted::tables_ddl(e.dialect(), e.storage_engine(), &f.tables) {
                    conn.exec(&ddl)?;
                }
                let clients = self.steps.plan(index).clients;
                load = Some(Arc::new(LoadShared::new(self.table_rows.clone(), clients)));
            }
            (Step::Load, Db::Sql(e)) => {
                let mut conn = e.connect()?;
                for ddl in sql::table_ddl(e.dialect(), e.storage_engine(), table, &self.fields()) {
                    conn.exec(&ddl)?;
                }
            }
            (Step::Load, Db::Doc(e)) => e.drop_collections(&[table])?,
            _ => {}
        }
        Ok(Box::new(DeclaredStep {
            workload: self,
            engine,
            index,
            shared: Shared::new(self.records),
            load,
        }))
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }
}

/// A step on one engine: its clients share the load's and the inserts' counters.
struct DeclaredStep<'a> {
    workload: &'a Declared,
    engine: Db<'a>,
    index: usize,
    shared: Arc<Shared>,
    /// The SQL tables' load, shared by its clients.
    load: Option<Arc<LoadShared>>,
}

impl<'a> PreparedStep<'a> for DeclaredStep<'a> {
    fn clients(&self) -> NewClients<'a> {
        let w = self.workload;
        let plan = w.steps.plan(self.index);
        alike(plan.clients, |c| {
            let rng = SmallRng::seed_from_u64(thread_seed(w.seed, self.index, c));
            if let Some(client) = self.sql_client(c, rng.clone())? {
                return Ok(client);
            }
            let work = match w.steps.work(self.index).step {
                Step::Load => Work::Load,
                Step::Phase(i) => Work::Run(Box::new(w.plan(
                    i,
                    c,
                    &plan.groups,
                    w.steps.work(self.index).operations,
                ))),
            };
            let core = Core::new(self.shared.clone(), w.keys(), w.fields(), rng, work);
            let table = &w.loaded.file.data.table;
            let client: Box<dyn fathom_api::step::Client + 'a> = match self.engine {
                Db::Sql(e) => {
                    let store = SqlStore::new(e, w.statements, table, &core.fields)?;
                    Box::new(Driven { core, store })
                }
                Db::Doc(e) => {
                    let store = DocStore::new(e.session()?, table);
                    Box::new(Driven { core, store })
                }
                db => {
                    let session = kv_session(db, "declared", SessionOptions::default())?;
                    let raw = *w.loaded.file.data.kv_value.get_ref() == KvValue::Raw;
                    let store = KvStore::new(session, raw);
                    Box::new(Driven { core, store })
                }
            };
            Ok(client)
        })
    }
}

impl<'a> DeclaredStep<'a> {
    /// Client `c` of a load of SQL tables or of a script phase; `None` for YCSB's records.
    fn sql_client(
        &self,
        c: usize,
        rng: SmallRng,
    ) -> anyhow::Result<Option<Box<dyn fathom_api::step::Client + 'a>>> {
        let w = self.workload;
        let f = &w.loaded.file;
        let Db::Sql(e) = self.engine else {
            return Ok(None);
        };
        let mut vars = w.vars.clone();
        if let Some(i) = f.names.find("client_id") {
            vars[i] = Val::Int(c as i64);
        }
        if let Some(i) = f.names.find("clients") {
            vars[i] = Val::Int(w.steps.plan(self.index).clients as i64);
        }
        Ok(match (&w.steps.work(self.index).step, &self.load) {
            (Step::Load, Some(load)) => {
                let row = f.names.find("row").unwrap_or(0);
                let (conn, d) = (e.connect()?, e.dialect());
                let load = load.clone();
                Some(Box::new(TableLoader::new(
                    conn,
                    d,
                    load,
                    &f.tables,
                    (vars, row),
                    rng,
                )))
            }
            (Step::Phase(i), _) if !f.phases[*i].scripts.is_empty() => {
                let clients = w.steps.plan(self.index).clients as u64;
                let quota = w
                    .steps
                    .work(self.index)
                    .operations
                    .map(|o| o / clients + u64::from((c as u64) < o % clients));
                let scripts = &f.phases[*i].scripts;
                let client = ScriptClient::new(e, w.statements, scripts, vars, (rng, quota))?;
                Some(Box::new(client))
            }
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests;
