//! LinkBench (specs/workloads.md §1): `load` writes the social graph (nodes, links with the
//! out-degree of `Distribution.dat`, count rows), `request` runs the operation mix with
//! LinkBench's access distributions, and `check` verifies that every count row equals its
//! visible links. The original's quirks are kept unless `fix` names them.

pub mod degree;
pub mod dist;
pub mod jrand;
mod kv;
mod load;
pub mod model;
pub mod motif;
mod request;
pub mod shuffle;
mod sql;
#[cfg(test)]
mod tests;

use crate::params::{ParamSpec, Params};
use crate::shared::PerStep;
use crate::{NewClient, Workload, WorkloadEntry};
use fathom_core::capability::Need;
use fathom_core::driver::{Client, Done, StepPlan};
use fathom_core::family::Db;
use fathom_core::kind::{OpKind, Role};
use fathom_core::kv::SessionOptions;
pub use load::{now_ms, KINDS as LOAD_KINDS};
pub use request::KINDS as REQUEST_KINDS;
/// The consistency check's one operation.
pub const CHECK: OpKind = OpKind::new("CHECK", Role::Check);
use load::{Chunks, Graph, LinkLoader, NodeLoader};
use model::Store;
use request::{Access, AccessDist, Blend, Requester, MIX_ORDER};
use shuffle::Kind;
use std::collections::BTreeMap;
use std::sync::Arc;

const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "steps", default: "load,request,check", help: "steps in order: load, request, check" },
    ParamSpec { name: "maxid1", default: "100001", help: "ids are [startid1, maxid1) (LinkBench's default 10000001)" },
    ParamSpec { name: "startid1", default: "1", help: "first id" },
    ParamSpec { name: "link_type_count", default: "2", help: "link types" },
    ParamSpec { name: "loaders", default: "0", help: "link loader threads (0: as many as clients); the node loader is one more" },
    ParamSpec { name: "loader_chunk_size", default: "2048", help: "id1s per load work chunk" },
    ParamSpec { name: "bulk_batch", default: "1024", help: "rows per bulk INSERT while loading" },
    ParamSpec { name: "duration", default: "60s", help: "length of each request step (maxtime)" },
    ParamSpec { name: "warmup", default: "0s", help: "unrecorded time at the start of each request step (warmup_time)" },
    ParamSpec { name: "requests", default: "0", help: "requests per client per request step; 0: until the duration" },
    ParamSpec { name: "request_steps", default: "1", help: "request steps in a row (request.1, request.2, ...), for a long request phase in parts" },
    ParamSpec { name: "link_datasize", default: "8", help: "median link payload bytes" },
    ParamSpec { name: "node_datasize", default: "128", help: "median node payload bytes" },
    ParamSpec { name: "addlink", default: "8.9886601", help: "percent of requests" },
    ParamSpec { name: "deletelink", default: "2.9907664", help: "percent of requests" },
    ParamSpec { name: "updatelink", default: "8.0122125", help: "percent of requests" },
    ParamSpec { name: "countlink", default: "4.8863567", help: "percent of requests" },
    ParamSpec { name: "getlink", default: "0.5261142", help: "percent of requests (MULTIGET_LINK)" },
    ParamSpec { name: "getlinklist", default: "50.7119145", help: "percent of requests" },
    ParamSpec { name: "addnode", default: "2.5732789", help: "percent of requests" },
    ParamSpec { name: "updatenode", default: "7.366437", help: "percent of requests" },
    ParamSpec { name: "deletenode", default: "1.0115914", help: "percent of requests" },
    ParamSpec { name: "getnode", default: "12.9326683", help: "percent of requests" },
    ParamSpec { name: "getlinklist_history", default: "0.3", help: "percent of GET_LINKS_LIST that page back through history" },
    ParamSpec { name: "read_shape", default: "0.8", help: "Zipf shape of correlated link reads" },
    ParamSpec { name: "read_uncorr_blend", default: "99.5", help: "percent of link reads that are uncorrelated" },
    ParamSpec { name: "read_uncorr_shape", default: "0.8", help: "Zipf shape of uncorrelated link reads" },
    ParamSpec { name: "write_shape", default: "0.741", help: "Zipf shape of correlated link writes" },
    ParamSpec { name: "write_uncorr_blend", default: "95", help: "percent of link writes that are uncorrelated (read only with fix=write_blend)" },
    ParamSpec { name: "write_uncorr_shape", default: "0.741", help: "Zipf shape of uncorrelated link writes (read only with fix=write_blend)" },
    ParamSpec { name: "node_read_shape", default: "0.625", help: "Zipf shape of GET_NODE" },
    ParamSpec { name: "node_update_shape", default: "0.606", help: "Zipf shape of UPDATE_NODE" },
    ParamSpec { name: "link_multiget_prob", default: "0.382", help: "geometric multiget size's probability" },
    ParamSpec { name: "motif_length", default: "128", help: "motif bytes of the payload generator (used only with fix=motif_length; the original always uses 512)" },
    ParamSpec { name: "fix", default: "", help: "original quirks to correct, comma-separated: update_link (UPDATE_LINK calls updateLink, not the addLink upsert), write_blend (write_uncorr_* are read), type_split (links split evenly across types), motif_length (the configured motif length)" },
    ParamSpec { name: "seed", default: "0", help: "random seed; 0 picks one from the clock (recorded)" },
];

pub const ENTRY: WorkloadEntry = WorkloadEntry {
    name: "linkbench",
    about: "LinkBench: load a social graph, run Facebook's request mix, check every count against its links",
    params: PARAMS,
    build,
    families: &["kv", "sql"],
    duration_param: "duration",
};

const FIXES: &[&str] = &["update_link", "write_blend", "type_split", "motif_length"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    Load,
    Request,
    Check,
}

/// What a step's clients share: the load's work queue and a kv engine's node numbering.
struct StepState {
    chunks: Chunks,
    node_ids: kv::NodeIds,
}

pub struct LinkBench {
    graph: Arc<Graph>,
    shape: Arc<request::Shape>,
    loaders: usize,
    chunk_size: i64,
    seed: u64,
    plans: Vec<StepPlan>,
    work: Vec<Work>,
    resolved: BTreeMap<String, String>,
    current: PerStep<StepState>,
}

fn zipf(params: &Params, start: i64, end: i64, shape: &str) -> anyhow::Result<AccessDist> {
    let theta = params.f64(PARAMS, shape)?;
    dist::Zipf::new(start, end, theta)
        .map(AccessDist::Zipf)
        .map_err(|e| anyhow::anyhow!("parameter `{shape}`: {e}"))
}

/// The original quirks `fix` corrects.
fn fixes(params: &Params) -> anyhow::Result<Vec<&str>> {
    let fixes: Vec<&str> = params
        .raw(PARAMS, "fix")
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    if let Some(bad) = fixes.iter().find(|f| !FIXES.contains(f)) {
        anyhow::bail!(
            "parameter `fix`: unknown `{bad}`; fixes are {}",
            FIXES.join(", ")
        );
    }
    Ok(fixes)
}

/// The request mix's cumulative percentages, in `MIX_ORDER`.
fn mix(params: &Params) -> anyhow::Result<[f64; 10]> {
    let names = [
        "addlink",
        "deletelink",
        "updatelink",
        "countlink",
        "getlink",
        "getlinklist",
        "addnode",
        "updatenode",
        "deletenode",
        "getnode",
    ];
    debug_assert_eq!(names.len(), MIX_ORDER.len());
    let mut cumulative = [0.0; 10];
    let mut sum = 0.0;
    for (i, name) in names.iter().enumerate() {
        sum += params.f64(PARAMS, name)?;
        cumulative[i] = sum;
    }
    if (sum - 100.0).abs() > 1e-5 {
        anyhow::bail!(
            "parameters addlink..getnode: the operation percentages sum to {sum}, not 100"
        );
    }
    Ok(cumulative)
}

/// The request phase's shape: the mix, the access distributions through their shufflers,
/// payload sizes.
fn request_shape(
    params: &Params,
    graph: &Graph,
    fixed: &dyn Fn(&str) -> bool,
) -> anyhow::Result<request::Shape> {
    let (start, end) = (graph.start, graph.end);
    let n = end - start;
    let links = request::Shape::shuffler(Kind::Links, n);
    let uncorr = request::Shape::shuffler(Kind::Uncorrelated, n);
    let nodes = request::Shape::shuffler(Kind::Nodes, n);
    let pct = |name| params.f64(PARAMS, name).map(|v| v / 100.0);
    // The original reads the write blend and uncorrelated write shape from read_uncorr_*.
    let (write_blend, write_uncorr_shape) = if fixed("write_blend") {
        ("write_uncorr_blend", "write_uncorr_shape")
    } else {
        ("read_uncorr_blend", "read_uncorr_shape")
    };
    let access = |dist, shuffler: &Arc<shuffle::Shuffler>| Access {
        dist,
        shuffler: Arc::clone(shuffler),
    };
    Ok(request::Shape {
        start,
        end,
        types: graph.types,
        degrees: Arc::clone(&graph.degrees),
        fixed_split: fixed("type_split"),
        fixed_update: fixed("update_link"),
        cumulative: mix(params)?,
        history_pct: params.f64(PARAMS, "getlinklist_history")?,
        link_reads: Blend {
            blend: pct("read_uncorr_blend")?,
            uncorrelated: access(zipf(params, start, end, "read_uncorr_shape")?, &uncorr),
            correlated: access(zipf(params, start, end, "read_shape")?, &links),
        },
        link_writes: Blend {
            blend: pct(write_blend)?,
            uncorrelated: access(zipf(params, start, end, write_uncorr_shape)?, &uncorr),
            correlated: access(zipf(params, start, end, "write_shape")?, &links),
        },
        node_reads: access(zipf(params, start, end, "node_read_shape")?, &nodes),
        node_updates: access(zipf(params, start, end, "node_update_shape")?, &nodes),
        node_deletes: access(AccessDist::Uniform, &nodes),
        link_datasize: graph.link_datasize,
        node_datasize: graph.node_datasize,
        multiget_prob: params.f64(PARAMS, "link_multiget_prob")?,
        motif_bytes: graph.motif_bytes,
    })
}

/// The graph the load writes.
fn graph(params: &Params, fixed: &dyn Fn(&str) -> bool) -> anyhow::Result<Graph> {
    let start = params.u64(PARAMS, "startid1")? as i64;
    let end = params.u64(PARAMS, "maxid1")? as i64;
    if start < 1 || end <= start + 1 {
        anyhow::bail!("parameters `startid1` and `maxid1`: expected 1 <= startid1 < maxid1 - 1, got {start} and {end}");
    }
    let types = params.u64(PARAMS, "link_type_count")? as i64;
    if types < 1 {
        anyhow::bail!("parameter `link_type_count`: must be at least 1");
    }
    Ok(Graph {
        start,
        end,
        types,
        degrees: Arc::new(degree::Degrees::new(start, end)?),
        fixed_split: fixed("type_split"),
        link_datasize: params.f64(PARAMS, "link_datasize")?,
        node_datasize: params.f64(PARAMS, "node_datasize")?,
        bulk: params.u64(PARAMS, "bulk_batch")?.max(1) as usize,
        motif_bytes: if fixed("motif_length") {
            params.u64(PARAMS, "motif_length")?.max(1) as usize
        } else {
            motif::ORIGINAL_MOTIF_BYTES
        },
    })
}

/// The steps `steps` names: the load (its loaders and the node loader), the request parts,
/// the check.
fn plans(
    params: &Params,
    loaders: usize,
    clients: usize,
) -> anyhow::Result<(Vec<StepPlan>, Vec<Work>)> {
    let requests = params.u64(PARAMS, "requests")?;
    let request_steps = params.u64(PARAMS, "request_steps")?.max(1);
    let mut plans = Vec::new();
    let mut work = Vec::new();
    for step in params.raw(PARAMS, "steps").split(',').map(str::trim) {
        match step {
            "" => {}
            "load" => {
                plans.push(StepPlan {
                    name: "load".into(),
                    clients: loaders + 1,
                    op_kinds: load::KINDS.to_vec(),
                    ..StepPlan::default()
                });
                work.push(Work::Load);
            }
            "request" => {
                for i in 1..=request_steps {
                    plans.push(StepPlan {
                        name: if request_steps == 1 {
                            "request".into()
                        } else {
                            format!("request.{i}")
                        },
                        clients: clients.max(1),
                        duration: Some(params.duration(PARAMS, "duration")?),
                        warmup: params.duration(PARAMS, "warmup")?,
                        ops_per_client: (requests > 0).then_some(requests),
                        op_kinds: request::KINDS.to_vec(),
                        ..StepPlan::default()
                    });
                    work.push(Work::Request);
                }
            }
            "check" => {
                plans.push(StepPlan {
                    name: "check".into(),
                    clients: 1,
                    op_kinds: vec![CHECK],
                    ..StepPlan::default()
                });
                work.push(Work::Check);
            }
            other => anyhow::bail!(
                "parameter `steps`: unknown step `{other}`; steps are load, request, check"
            ),
        }
    }
    if plans.is_empty() {
        anyhow::bail!("parameter `steps`: no steps given");
    }
    Ok((plans, work))
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    params.check("linkbench", PARAMS)?;
    let fixes = fixes(params)?;
    let fixed = |f: &str| fixes.contains(&f);
    let graph = graph(params, &fixed)?;
    let shape = request_shape(params, &graph, &fixed)?;
    let loaders = match params.u64(PARAMS, "loaders")? as usize {
        0 => clients.max(1),
        l => l,
    };
    let seed = params.seed(PARAMS)?;
    let mut resolved = params.resolved(PARAMS);
    resolved.insert("seed".into(), seed.to_string());
    let (plans, work) = plans(params, loaders, clients)?;
    Ok(Box::new(LinkBench {
        graph: Arc::new(graph),
        shape: Arc::new(shape),
        loaders,
        chunk_size: params.u64(PARAMS, "loader_chunk_size")?.max(1) as i64,
        seed,
        plans,
        work,
        resolved,
        current: PerStep::default(),
    }))
}

impl LinkBench {
    fn store<'e>(&self, db: Db<'e>, state: &StepState) -> anyhow::Result<Box<dyn Store + 'e>> {
        Ok(match db {
            Db::Sql(e) => Box::new(sql::SqlStore::new(e)?),
            Db::Kv(e) => Box::new(kv::KvStore::new(
                e.session(SessionOptions::default())?,
                Arc::clone(&state.node_ids),
            )),
        })
    }

    fn rng(&self, step: usize, thread: usize) -> jrand::JavaRandom {
        jrand::JavaRandom::new(crate::params::thread_seed(self.seed, step, thread) as i64)
    }
}

/// The consistency check as a step's one operation: fails naming the pairs that differ.
struct Check<'e> {
    store: Box<dyn Store + 'e>,
    done: bool,
}

impl Client for Check<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        let (wrong, pairs) = self.store.check_counts()?;
        if wrong > 0 {
            anyhow::bail!(
                "consistency check failed: {wrong} of {pairs} (id1, link type) pairs have a count \
                 row that differs from their visible links"
            );
        }
        Ok(Some(Done::default()))
    }
}

impl Workload for LinkBench {
    fn steps(&self) -> &[StepPlan] {
        &self.plans
    }

    /// The load creates LinkStoreMysql's tables on a sql engine; every step gets a fresh work
    /// queue and node numbering.
    fn prepare_step(&self, engine: Db<'_>, step: usize) -> anyhow::Result<()> {
        if let (Work::Load, Db::Sql(e)) = (self.work[step], engine) {
            let mut conn = e.connect()?;
            for ddl in sql::schema(e.dialect(), e.storage_engine()) {
                conn.exec(&ddl)?;
            }
        }
        self.current.set(
            step,
            StepState {
                chunks: load::chunks(self.graph.start, self.graph.end, self.chunk_size),
                node_ids: Arc::default(),
            },
        );
        Ok(())
    }

    fn client<'e>(&self, engine: Db<'e>, step: usize, thread: usize) -> NewClient<'e> {
        let state = self.current.get(step)?;
        let store = self.store(engine, &state)?;
        let rng = self.rng(step, thread);
        Ok(match self.work[step] {
            Work::Load => {
                let m = self.graph.motif_bytes;
                if thread == self.loaders {
                    Box::new(NodeLoader {
                        store,
                        graph: Arc::clone(&self.graph),
                        rng,
                        motif: motif::Motif::node(m),
                        next: None,
                        buf: Vec::new(),
                    })
                } else {
                    Box::new(LinkLoader::new(
                        store,
                        Arc::clone(&self.graph),
                        Arc::clone(&state.chunks),
                        rng,
                        motif::Motif::link(m),
                    ))
                }
            }
            Work::Request => Box::new(Requester::new(
                store,
                Arc::clone(&self.shape),
                crate::params::thread_seed(self.seed, step, thread) as i64,
            )),
            Work::Check => Box::new(Check { store, done: false }),
        })
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }

    /// A link write and its count change are one transaction (a plain read-modify-write
    /// could lose a count update, which the check would find).
    fn needs(&self) -> Vec<Need> {
        if self.work.contains(&Work::Request) {
            vec![Need::Transactions]
        } else {
            Vec::new()
        }
    }
}
