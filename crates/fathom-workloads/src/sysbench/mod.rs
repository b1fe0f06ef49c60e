//! sysbench's OLTP tests (docs/workloads.md §3): a prepare step that creates and loads
//! `sbtest1..N` as sysbench does, then one timed step per test (`oltp_point_select`,
//! `select_random_points`, `oltp_read_only`, `oltp_update_index`, `oltp_update_non_index`,
//! `oltp_write_only`, `oltp_read_write`) with sysbench's statements and every `--rand-type`.
//! On sql engines with the real schema and prepared statements; on kv engines through the
//! row/index mapping; on document servers as sysbench-mongodb's collections and statements.

mod doc;
mod events;
mod kv;
mod load;
pub mod rand;
pub mod report;
mod sql;

use crate::params::{record, seed_or_clock, Params, Span, Switch};
use crate::steps::Steps;
use crate::{alike, NewClient, NewClients, NewStep, PreparedStep, StepOn, Workload, WorkloadEntry};
use events::{Events, Rows, Shape, Test};
use fathom_api::capability::Need;
use fathom_api::family::Db;
use fathom_api::kind::StepKinds;
use fathom_api::kv::SessionOptions;
use fathom_api::step::StepPlan;
use fathom_api::stop::Stop;
use rand::{RandType, SbRand};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// sysbench's options, as `--param` takes them.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SysbenchParams {
    /// tests to run in order, comma-separated: oltp_point_select, select_random_points,
    /// oltp_read_only, oltp_update_index, oltp_update_non_index, oltp_write_only,
    /// oltp_read_write
    tests: Vec<Test>,
    /// tables sbtest1..N (--tables)
    tables: u32,
    /// rows per table (--table-size)
    table_size: u64,
    /// uniform, special (1.0.20's default), gaussian, pareto, zipfian (--rand-type)
    rand_type: RandKind,
    /// --rand-spec-iter (special, gaussian)
    rand_spec_iter: u32,
    /// --rand-spec-pct (special)
    rand_spec_pct: f64,
    /// --rand-spec-res (special)
    rand_spec_res: f64,
    /// --rand-pareto-h
    rand_pareto_h: f64,
    /// --rand-zipfian-exp
    rand_zipfian_exp: f64,
    /// rows per range query
    range_size: u64,
    /// point selects per read-only or read-write event
    point_selects: u32,
    /// simple range queries per event
    simple_ranges: u32,
    /// SUM(k) range queries per event
    sum_ranges: u32,
    /// ORDER BY c range queries per event
    order_ranges: u32,
    /// DISTINCT c range queries per event
    distinct_ranges: u32,
    /// run the range queries at all
    range_selects: Switch,
    /// UPDATE k=k+1 per write event
    index_updates: u32,
    /// UPDATE c per write event
    non_index_updates: u32,
    /// DELETE+INSERT pairs per write event
    delete_inserts: u32,
    /// k values per select_random_points query
    random_points: u32,
    /// no BEGIN/COMMIT around read-only and read-write events
    skip_trx: Switch,
    /// create and load the tables first (off: use the tables already there)
    prepare: Switch,
    /// the index on k
    create_secondary: Switch,
    /// kv engines: a write event's reads run in its transaction, in its snapshot, as between
    /// BEGIN and COMMIT on a server (off: on the session before the transaction)
    kv_reads_in_trx: Switch,
    /// rows per INSERT while preparing
    batch: u64,
    /// length of each test (--time)
    duration: Span,
    /// unrecorded time at the start of each test
    warmup: Span,
    /// random seed; 0 picks one from the clock (recorded)
    seed: u64,
}

impl Default for SysbenchParams {
    fn default() -> Self {
        SysbenchParams {
            tests: vec![Test::PointSelect],
            tables: 1,
            table_size: 10_000,
            rand_type: RandKind::Special,
            rand_spec_iter: 12,
            rand_spec_pct: 1.0,
            rand_spec_res: 75.0,
            rand_pareto_h: 0.2,
            rand_zipfian_exp: 0.8,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            range_selects: Switch::new("on"),
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            random_points: 10,
            skip_trx: Switch::new("off"),
            prepare: Switch::new("on"),
            create_secondary: Switch::new("on"),
            kv_reads_in_trx: Switch::new("on"),
            batch: 1000,
            duration: Span::new("10s"),
            warmup: Span::new("0s"),
            seed: 0,
        }
    }
}

fathom_api::kinds! {
    /// What sysbench's operations are.
    pub enum SysbenchKind {
        /// A multi-row INSERT of the prepare step.
        Insert = ("insert", Load, "a multi-row INSERT of batch rows"),
        /// The index on k, created after the rows as sysbench does.
        CreateIndex = ("create_index", Maintenance, "the CREATE INDEX on k of one table"),
        /// An event of a test whose statements only read.
        ReadEvent = ("event", Read, "one event: the test's statements, in a transaction unless skip_trx"),
        /// An event of a test with a statement that writes.
        WriteEvent = ("event", Write, "one event: the test's statements, in a transaction unless skip_trx"),
    }
}

/// What a step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    Prepare,
    Test(Test),
}

pub struct Sysbench {
    shape: Shape,
    rand: RandType,
    batch: i64,
    create_secondary: bool,
    kv_reads_in_trx: bool,
    seed: u64,
    steps: Steps<Work>,
    resolved: BTreeMap<String, String>,
}

/// sysbench's `--rand-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum RandKind {
    Uniform,
    /// 1.0.20's default: a hot spot in the middle of the range.
    Special,
    Gaussian,
    Pareto,
    Zipfian,
}

fn rand_type(p: &SysbenchParams) -> RandType {
    let iter = p.rand_spec_iter.max(1);
    match p.rand_type {
        RandKind::Uniform => RandType::Uniform,
        RandKind::Special => RandType::Special {
            iter,
            pct: p.rand_spec_pct,
            res: p.rand_spec_res,
        },
        RandKind::Gaussian => RandType::Gaussian { iter },
        RandKind::Pareto => RandType::Pareto { h: p.rand_pareto_h },
        RandKind::Zipfian => RandType::Zipfian {
            exp: p.rand_zipfian_exp,
        },
    }
}

/// The tables and the statements of an event.
fn shape(p: &SysbenchParams) -> anyhow::Result<Shape> {
    let shape = Shape {
        tables: p.tables,
        table_size: p.table_size as i64,
        range_size: p.range_size as i64,
        point_selects: p.point_selects,
        simple_ranges: p.simple_ranges,
        sum_ranges: p.sum_ranges,
        order_ranges: p.order_ranges,
        distinct_ranges: p.distinct_ranges,
        range_selects: p.range_selects.value,
        index_updates: p.index_updates,
        non_index_updates: p.non_index_updates,
        delete_inserts: p.delete_inserts,
        random_points: p.random_points,
        skip_trx: p.skip_trx.value,
    };
    if shape.tables == 0 || shape.table_size == 0 {
        anyhow::bail!("parameters `tables` and `table_size` must be at least 1");
    }
    Ok(shape)
}

/// Checks the tests `tests` names against the shape.
fn check_tests(p: &SysbenchParams, shape: &Shape) -> anyhow::Result<()> {
    if p.tests.contains(&Test::RandomPoints) && shape.tables != 1 {
        anyhow::bail!("parameter `tests`: select_random_points needs tables=1 (as sysbench)");
    }
    Ok(())
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    let mut p: SysbenchParams = params.read("sysbench")?;
    let shape = shape(&p)?;
    check_tests(&p, &shape)?;
    p.seed = seed_or_clock(p.seed);
    let (duration, warmup) = (p.duration.value, p.warmup.value);
    let mut s = Sysbench {
        rand: rand_type(&p),
        batch: p.batch.max(1) as i64,
        create_secondary: p.create_secondary.value,
        kv_reads_in_trx: p.kv_reads_in_trx.value,
        seed: p.seed,
        steps: Steps::default(),
        resolved: record(&p),
        shape,
    };
    if p.prepare.value {
        let plan = StepPlan {
            name: "prepare".into(),
            // sysbench prepares tables in parallel, one thread per table at most.
            clients: clients.min(s.shape.tables as usize),
            kinds: StepKinds::of(load::KINDS),
            ..Default::default()
        };
        s.steps.push(plan, Work::Prepare);
    }
    for &test in &p.tests {
        let name = test.name();
        // An event is a transaction: a write when any of its statements writes.
        let kind = test.kind(&s.shape);
        let plan = StepPlan {
            name,
            clients,
            duration: Some(duration),
            warmup,
            kinds: StepKinds::of(&[kind]).with_queries(kind, test.mix(&s.shape)),
            ..Default::default()
        };
        s.steps.push(plan, Work::Test(test));
    }
    Ok(Box::new(s))
}

crate::params::timed!(SysbenchParams, duration);

pub const ENTRY: WorkloadEntry = WorkloadEntry::new::<SysbenchParams, SysbenchKind>(
    "sysbench",
    "sysbench 1.0.20's OLTP tests: prepare, then point selects, random points, read-only, updates, write-only, read-write",
    build,
    report::HOOKS,
);

impl Sysbench {
    fn rand_for(&self, step: usize, thread: usize) -> SbRand {
        SbRand::new(
            self.rand,
            crate::params::thread_seed(self.seed, step, thread),
        )
    }
}

/// A step of sysbench's on one engine: its clients share nothing.
impl<'a> PreparedStep<'a> for StepOn<'a, Sysbench> {
    fn clients(&self) -> NewClients<'a> {
        alike(self.workload.steps.plan(self.index).clients, |n| {
            self.client(n)
        })
    }
}

impl<'a> StepOn<'a, Sysbench> {
    /// Client `n`: a loader of its share of the tables, or a source of the test's events.
    fn client(&self, n: usize) -> NewClient<'a> {
        let (w, engine) = (self.workload, self.engine);
        let rand = w.rand_for(self.index, n);
        let threads = w.steps.plan(self.index).clients;
        match *w.steps.work(self.index) {
            Work::Prepare => {
                let tables: Vec<u32> = (1..=w.shape.tables)
                    .filter(|t| (*t as usize - 1) % threads.max(1) == n)
                    .collect();
                let rows = Rows {
                    rand,
                    table_size: w.shape.table_size,
                    c: String::new(),
                    pad: String::new(),
                };
                let plan = load::Plan::new(tables, rows, w.batch, w.create_secondary);
                Ok(match engine {
                    Db::Sql(e) => Box::new(sql::SqlLoad::new(e, plan)?),
                    Db::Kv(e) => {
                        Box::new(kv::KvLoad::new(e.session(SessionOptions::default())?, plan))
                    }
                    Db::Doc(e) => Box::new(doc::DocLoad::new(e, plan)?),
                    other => return Err(other.refused(ENTRY.name)),
                })
            }
            Work::Test(test) => {
                let events = Events::new(test, w.shape, rand, n, threads);
                Ok(match engine {
                    Db::Sql(e) => Box::new(sql::SqlEvents::new(
                        e,
                        events,
                        w.shape.tables,
                        w.shape.random_points,
                    )?),
                    Db::Kv(e) => Box::new(kv::KvEvents::new(
                        e.session(SessionOptions::default())?,
                        events,
                        w.create_secondary,
                        w.kv_reads_in_trx,
                    )),
                    Db::Doc(e) => Box::new(doc::DocEvents::new(e, events, w.shape.tables)?),
                    other => return Err(other.refused(ENTRY.name)),
                })
            }
        }
    }
}

impl Workload for Sysbench {
    fn steps(&self) -> &[StepPlan] {
        self.steps.plans()
    }

    fn step<'a>(&'a self, engine: Db<'a>, index: usize, _: &Stop) -> NewStep<'a> {
        StepOn::boxed(self, engine, index)
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }

    /// A write event's statements are one transaction on a kv engine too.
    fn needs(&self) -> Vec<Need> {
        let writes = |p: &StepPlan| p.kinds.query_mix().is_some_and(|q| q.write > 0.0);
        if self.steps.plans().iter().any(writes) {
            vec![Need::Transactions]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_refused, build_from};

    #[test]
    fn prepare_then_each_test() {
        let w = build_from(
            build,
            &["tests=oltp_read_only,oltp_point_select", "tables=4"],
            8,
        )
        .unwrap();
        let names: Vec<_> = w.steps().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["prepare", "oltp_read_only", "oltp_point_select"]);
        assert_eq!(
            w.steps()[0].clients,
            4,
            "one prepare thread per table at most"
        );
        assert_eq!(w.steps()[1].kinds.query_mix().unwrap().total(), 16.0);
    }

    #[test]
    fn bad_parameters_say_what_is_accepted() {
        assert_refused(
            build,
            &[
                (
                    &["tests=oltp_nope"],
                    "`oltp_nope` is not oltp_point_select, ",
                ),
                (
                    &["rand_type=normal"],
                    "`rand_type`: `normal` is not uniform, special, gaussian, pareto or zipfian",
                ),
                (
                    &["tests=select_random_points", "tables=2"],
                    "needs tables=1",
                ),
                (&["skip_trx=maybe"], "expected on or off"),
            ],
        );
    }
}
