//! sysbench's OLTP tests (specs/workloads.md §3): a prepare step that creates and loads
//! `sbtest1..N` as sysbench does, then one timed step per test (`oltp_point_select`,
//! `select_random_points`, `oltp_read_only`, `oltp_update_index`, `oltp_update_non_index`,
//! `oltp_write_only`, `oltp_read_write`) with sysbench's statements and every `--rand-type`.
//! On sql engines with the real schema and prepared statements; on kv engines through the
//! row/index mapping.

mod events;
mod kv;
pub mod rand;
mod sql;

use crate::params::{ParamSpec, Params};
use crate::{NewClient, Workload, WorkloadEntry};
use events::{Events, Rows, Shape, Test, TESTS};
use fathom_core::capability::Need;
use fathom_core::driver::StepPlan;
use fathom_core::family::Db;
use fathom_core::kind::{OpKind, Role};
use fathom_core::kv::SessionOptions;
use rand::{RandType, SbRand};
use std::collections::BTreeMap;

const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "tests", default: "oltp_point_select", help: "tests to run in order, comma-separated: oltp_point_select, select_random_points, oltp_read_only, oltp_update_index, oltp_update_non_index, oltp_write_only, oltp_read_write" },
    ParamSpec { name: "tables", default: "1", help: "tables sbtest1..N (--tables)" },
    ParamSpec { name: "table_size", default: "10000", help: "rows per table (--table-size)" },
    ParamSpec { name: "rand_type", default: "special", help: "uniform, special (1.0.20's default), gaussian, pareto, zipfian (--rand-type)" },
    ParamSpec { name: "rand_spec_iter", default: "12", help: "--rand-spec-iter (special, gaussian)" },
    ParamSpec { name: "rand_spec_pct", default: "1", help: "--rand-spec-pct (special)" },
    ParamSpec { name: "rand_spec_res", default: "75", help: "--rand-spec-res (special)" },
    ParamSpec { name: "rand_pareto_h", default: "0.2", help: "--rand-pareto-h" },
    ParamSpec { name: "rand_zipfian_exp", default: "0.8", help: "--rand-zipfian-exp" },
    ParamSpec { name: "range_size", default: "100", help: "rows per range query" },
    ParamSpec { name: "point_selects", default: "10", help: "point selects per read-only or read-write event" },
    ParamSpec { name: "simple_ranges", default: "1", help: "simple range queries per event" },
    ParamSpec { name: "sum_ranges", default: "1", help: "SUM(k) range queries per event" },
    ParamSpec { name: "order_ranges", default: "1", help: "ORDER BY c range queries per event" },
    ParamSpec { name: "distinct_ranges", default: "1", help: "DISTINCT c range queries per event" },
    ParamSpec { name: "range_selects", default: "on", help: "run the range queries at all" },
    ParamSpec { name: "index_updates", default: "1", help: "UPDATE k=k+1 per write event" },
    ParamSpec { name: "non_index_updates", default: "1", help: "UPDATE c per write event" },
    ParamSpec { name: "delete_inserts", default: "1", help: "DELETE+INSERT pairs per write event" },
    ParamSpec { name: "random_points", default: "10", help: "k values per select_random_points query" },
    ParamSpec { name: "skip_trx", default: "off", help: "no BEGIN/COMMIT around read-only and read-write events" },
    ParamSpec { name: "prepare", default: "on", help: "create and load the tables first (off: use the tables already there)" },
    ParamSpec { name: "create_secondary", default: "on", help: "the index on k" },
    ParamSpec { name: "batch", default: "1000", help: "rows per INSERT while preparing" },
    ParamSpec { name: "duration", default: "10s", help: "length of each test (--time)" },
    ParamSpec { name: "warmup", default: "0s", help: "unrecorded time at the start of each test" },
    ParamSpec { name: "seed", default: "0", help: "random seed; 0 picks one from the clock (recorded)" },
];

pub const ENTRY: WorkloadEntry = WorkloadEntry {
    name: "sysbench",
    about: "sysbench 1.0.20's OLTP tests: prepare, then point selects, random points, read-only, updates, write-only, read-write",
    params: PARAMS,
    build,
    families: &["kv", "sql"],
    duration_param: "duration",
};

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
    seed: u64,
    plans: Vec<StepPlan>,
    work: Vec<Work>,
    resolved: BTreeMap<String, String>,
}

fn on_off(params: &Params, name: &str) -> anyhow::Result<bool> {
    params.on_off(PARAMS, name)
}

fn rand_type(params: &Params) -> anyhow::Result<RandType> {
    let f = |n| params.f64(PARAMS, n);
    let iter = params.u64(PARAMS, "rand_spec_iter")?.max(1) as u32;
    Ok(match params.raw(PARAMS, "rand_type") {
        "uniform" => RandType::Uniform,
        "special" => RandType::Special {
            iter,
            pct: f("rand_spec_pct")?,
            res: f("rand_spec_res")?,
        },
        "gaussian" => RandType::Gaussian { iter },
        "pareto" => RandType::Pareto {
            h: f("rand_pareto_h")?,
        },
        "zipfian" => RandType::Zipfian {
            exp: f("rand_zipfian_exp")?,
        },
        other => anyhow::bail!(
            "parameter `rand_type`: unknown `{other}`; expected one of {}",
            rand::NAMES.join(", ")
        ),
    })
}

/// The tables and the statements of an event.
fn shape(params: &Params) -> anyhow::Result<Shape> {
    let n = |name| -> anyhow::Result<u32> {
        let v = params.u64(PARAMS, name)?;
        u32::try_from(v).map_err(|_| anyhow::anyhow!("parameter `{name}`: {v} is too large"))
    };
    let shape = Shape {
        tables: n("tables")?,
        table_size: params.u64(PARAMS, "table_size")? as i64,
        range_size: params.u64(PARAMS, "range_size")? as i64,
        point_selects: n("point_selects")?,
        simple_ranges: n("simple_ranges")?,
        sum_ranges: n("sum_ranges")?,
        order_ranges: n("order_ranges")?,
        distinct_ranges: n("distinct_ranges")?,
        range_selects: on_off(params, "range_selects")?,
        index_updates: n("index_updates")?,
        non_index_updates: n("non_index_updates")?,
        delete_inserts: n("delete_inserts")?,
        random_points: n("random_points")?,
        skip_trx: on_off(params, "skip_trx")?,
    };
    if shape.tables == 0 || shape.table_size == 0 {
        anyhow::bail!("parameters `tables` and `table_size` must be at least 1");
    }
    Ok(shape)
}

/// The tests `tests` names, in order.
fn tests(params: &Params, shape: &Shape) -> anyhow::Result<Vec<Test>> {
    let tests: Vec<Test> = params
        .raw(PARAMS, "tests")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            Test::by_name(t).ok_or_else(|| {
                let names: Vec<_> = TESTS.iter().map(|(n, _)| *n).collect();
                anyhow::anyhow!(
                    "parameter `tests`: unknown test `{t}`; tests are: {}",
                    names.join(", ")
                )
            })
        })
        .collect::<anyhow::Result<_>>()?;
    if tests.contains(&Test::RandomPoints) && shape.tables != 1 {
        anyhow::bail!("parameter `tests`: select_random_points needs tables=1 (as sysbench)");
    }
    Ok(tests)
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    params.check("sysbench", PARAMS)?;
    let shape = shape(params)?;
    let tests = tests(params, &shape)?;
    let batch = params.u64(PARAMS, "batch")?.max(1) as i64;
    let duration = params.duration(PARAMS, "duration")?;
    let warmup = params.duration(PARAMS, "warmup")?;
    let seed = params.seed(PARAMS)?;
    let mut resolved = params.resolved(PARAMS);
    resolved.insert("seed".into(), seed.to_string());
    let mut s = Sysbench {
        rand: rand_type(params)?,
        batch,
        create_secondary: on_off(params, "create_secondary")?,
        seed,
        plans: Vec::new(),
        work: Vec::new(),
        resolved,
        shape,
    };
    if on_off(params, "prepare")? {
        s.plans.push(StepPlan {
            name: "prepare".into(),
            // sysbench prepares tables in parallel, one thread per table at most.
            clients: clients.min(s.shape.tables as usize),
            op_kinds: vec![
                OpKind::new("insert", Role::Load),
                OpKind::new("create_index", Role::Maintenance),
            ],
            ..Default::default()
        });
        s.work.push(Work::Prepare);
    }
    for test in tests {
        let name = TESTS
            .iter()
            .find(|(_, t)| *t == test)
            .map(|(n, _)| *n)
            .unwrap_or("");
        // An event is a transaction: a write when any of its statements writes.
        let mix = test.mix(&s.shape);
        let role = if mix.write > 0.0 {
            Role::Write
        } else {
            Role::Read
        };
        s.plans.push(StepPlan {
            name: name.to_string(),
            clients,
            duration: Some(duration),
            warmup,
            op_kinds: vec![OpKind::new("event", role)],
            queries: Some(mix),
            ..Default::default()
        });
        s.work.push(Work::Test(test));
    }
    Ok(Box::new(s))
}

impl Sysbench {
    fn rand_for(&self, step: usize, thread: usize) -> SbRand {
        SbRand::new(
            self.rand,
            crate::params::thread_seed(self.seed, step, thread),
        )
    }
}

impl Workload for Sysbench {
    fn steps(&self) -> &[StepPlan] {
        &self.plans
    }

    fn client<'e>(&self, engine: Db<'e>, step: usize, thread: usize) -> NewClient<'e> {
        let rand = self.rand_for(step, thread);
        let threads = self.plans[step].clients;
        match self.work[step] {
            Work::Prepare => {
                let tables: Vec<u32> = (1..=self.shape.tables)
                    .filter(|t| (*t as usize - 1) % threads.max(1) == thread)
                    .collect();
                let rows = Rows {
                    rand,
                    table_size: self.shape.table_size,
                    c: String::new(),
                    pad: String::new(),
                };
                Ok(match engine {
                    Db::Sql(e) => Box::new(sql::SqlLoad::new(
                        e,
                        tables,
                        rows,
                        self.batch,
                        self.create_secondary,
                    )?),
                    Db::Kv(e) => Box::new(kv::KvLoad::new(
                        e.session(SessionOptions::default())?,
                        tables,
                        rows,
                        self.batch,
                        self.create_secondary,
                    )),
                })
            }
            Work::Test(test) => {
                let events = Events::new(test, self.shape, rand, thread, threads);
                Ok(match engine {
                    Db::Sql(e) => Box::new(sql::SqlEvents::new(
                        e,
                        events,
                        self.shape.tables,
                        self.shape.random_points,
                    )?),
                    Db::Kv(e) => Box::new(kv::KvEvents::new(
                        e.session(SessionOptions::default())?,
                        events,
                    )),
                })
            }
        }
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }

    /// A write event's statements are one transaction on a kv engine too.
    fn needs(&self) -> Vec<Need> {
        let writes = |p: &StepPlan| p.queries.is_some_and(|q| q.write > 0.0);
        if self.plans.iter().any(writes) {
            vec![Need::Transactions]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build_with(pairs: &[&str], clients: usize) -> anyhow::Result<Box<dyn Workload>> {
        let p = Params::parse(&pairs.iter().map(|s| s.to_string()).collect::<Vec<_>>())?;
        build(&p, clients)
    }

    #[test]
    fn prepare_then_each_test() {
        let w = build_with(&["tests=oltp_read_only,oltp_point_select", "tables=4"], 8).unwrap();
        let names: Vec<_> = w.steps().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["prepare", "oltp_read_only", "oltp_point_select"]);
        assert_eq!(
            w.steps()[0].clients,
            4,
            "one prepare thread per table at most"
        );
        assert_eq!(w.steps()[1].queries.unwrap().total(), 16.0);
    }

    #[test]
    fn bad_parameters_say_what_is_accepted() {
        let e = |p: &[&str]| build_with(p, 1).err().unwrap().to_string();
        assert!(e(&["tests=oltp_nope"]).contains("tests are: oltp_point_select"));
        assert!(e(&["rand_type=normal"]).contains("expected one of uniform, special"));
        assert!(e(&["tests=select_random_points", "tables=2"]).contains("needs tables=1"));
        assert!(e(&["skip_trx=maybe"]).contains("expected on or off"));
    }
}
