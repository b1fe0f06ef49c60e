//! LinkBench (docs/workloads.md §1): `load` writes the social graph (nodes, links with the
//! out-degree of `Distribution.dat`, count rows), `request` runs the operation mix with
//! LinkBench's access distributions, and `check` verifies that every count row equals its
//! visible links. The original's quirks are kept unless `fix` names them. On document servers
//! with LinkbenchX's collections and indexes.

mod check;
pub mod degree;
pub mod dist;
mod doc;
pub mod jrand;
pub mod kinds;
mod kv;
mod load;
pub mod model;
pub mod motif;
pub mod report;
mod request;
mod schema;
pub mod shuffle;
mod sql;
mod syntax;
#[cfg(test)]
mod tests;

use crate::params::{record, seed_or_clock, Params, Span};
use crate::statements::Statements;
use crate::steps::Steps;
use crate::{alike, NewClient, NewClients, NewStep, PreparedStep, Workload, WorkloadEntry};
use check::Check;
use fathom_api::capability::Need;
use fathom_api::family::Db;
use fathom_api::kv::SessionOptions;
use fathom_api::step::StepPlan;
use fathom_api::stop::Stop;
pub use kinds::LinkBenchKind;
pub use load::now_ms;
use load::{Chunks, Graph, LinkLoader, NodeLoader};
use model::Store;
use request::{Access, AccessDist, Blend, Requester, MIX_ORDER};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use shuffle::Kind;
use std::collections::BTreeMap;
use std::sync::Arc;

/// LinkBench's configuration, as `--param` takes it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LinkBenchParams {
    /// steps in order: load, request, check
    steps: Vec<Step>,
    /// ids are [startid1, maxid1) (LinkBench's default 10000001)
    maxid1: u64,
    /// first id
    startid1: u64,
    /// link types
    link_type_count: u64,
    /// link loader threads (0: as many as clients); the node loader is one more
    loaders: u64,
    /// id1s per load work chunk
    loader_chunk_size: u64,
    /// rows per bulk INSERT while loading
    bulk_batch: u64,
    /// length of each request step (maxtime)
    duration: Span,
    /// unrecorded time at the start of each request step (warmup_time)
    warmup: Span,
    /// requests per client per request step; 0: until the duration
    requests: u64,
    /// average requests/s per client (Poisson arrivals, each client its own schedule); latency
    /// then counts from each request's start, as LinkBench's; 0: as fast as possible
    requestrate: f64,
    /// failed requests a requester tolerates, each reopening its store (LinkBench's
    /// LinkConfigMysql.properties: 100); one more ends the step; -1: any number
    max_failed_requests: i64,
    /// request steps in a row (request.1, request.2, ...), for a long request phase in parts
    request_steps: u64,
    /// median link payload bytes
    link_datasize: f64,
    /// median node payload bytes
    node_datasize: f64,
    /// percent of requests
    addlink: f64,
    /// percent of requests
    deletelink: f64,
    /// percent of requests
    updatelink: f64,
    /// percent of requests
    countlink: f64,
    /// percent of requests (MULTIGET_LINK)
    getlink: f64,
    /// percent of requests
    getlinklist: f64,
    /// percent of requests
    addnode: f64,
    /// percent of requests
    updatenode: f64,
    /// percent of requests
    deletenode: f64,
    /// percent of requests
    getnode: f64,
    /// percent of GET_LINKS_LIST that page back through history
    getlinklist_history: f64,
    /// Zipf shape of correlated link reads
    read_shape: f64,
    /// percent of link reads that are uncorrelated
    read_uncorr_blend: f64,
    /// Zipf shape of uncorrelated link reads
    read_uncorr_shape: f64,
    /// Zipf shape of correlated link writes
    write_shape: f64,
    /// percent of link writes that are uncorrelated (read only with fix=write_blend)
    write_uncorr_blend: f64,
    /// Zipf shape of uncorrelated link writes (read only with fix=write_blend)
    write_uncorr_shape: f64,
    /// Zipf shape of GET_NODE
    node_read_shape: f64,
    /// Zipf shape of UPDATE_NODE
    node_update_shape: f64,
    /// geometric multiget size's probability
    link_multiget_prob: f64,
    /// motif bytes of the payload generator (used only with fix=motif_length; the original always
    /// uses 512)
    motif_length: u64,
    /// original quirks to correct, comma-separated: update_link (UPDATE_LINK calls updateLink,
    /// not the addLink upsert), write_blend (write_uncorr_* are read), type_split (links split
    /// evenly across types), motif_length (the configured motif length)
    fix: Vec<Fix>,
    /// random seed; 0 picks one from the clock (recorded)
    seed: u64,
    /// how SQL statements are sent: original (text on MariaDB, as LinkStoreMysql: the values
    /// written into the SQL, writes on a connection with autocommit off, each one's COMMIT sent
    /// with its last statement or after it, reads on a second connection in autocommit;
    /// prepared on PostgreSQL and SQLite, which have no original store), text, or prepared
    /// (prepared once on one connection; writes between BEGIN and COMMIT, reads in autocommit)
    statements: Statements,
    /// MariaDB: linktable's partitions by id1 (create_innodb.sql's 16); 0 for none
    partitions: u64,
}

impl Default for LinkBenchParams {
    fn default() -> Self {
        LinkBenchParams {
            steps: vec![Step::Load, Step::Request, Step::Check],
            maxid1: 100_001,
            startid1: 1,
            link_type_count: 2,
            loaders: 0,
            loader_chunk_size: 2048,
            bulk_batch: 1024,
            duration: Span::new("60s"),
            warmup: Span::new("0s"),
            requests: 0,
            requestrate: 0.0,
            max_failed_requests: 100,
            request_steps: 1,
            link_datasize: 8.0,
            node_datasize: 128.0,
            addlink: 8.9886601,
            deletelink: 2.9907664,
            updatelink: 8.0122125,
            countlink: 4.8863567,
            getlink: 0.5261142,
            getlinklist: 50.7119145,
            addnode: 2.5732789,
            updatenode: 7.366437,
            deletenode: 1.0115914,
            getnode: 12.9326683,
            getlinklist_history: 0.3,
            read_shape: 0.8,
            read_uncorr_blend: 99.5,
            read_uncorr_shape: 0.8,
            write_shape: 0.741,
            write_uncorr_blend: 95.0,
            write_uncorr_shape: 0.741,
            node_read_shape: 0.625,
            node_update_shape: 0.606,
            link_multiget_prob: 0.382,
            motif_length: 128,
            fix: Vec::new(),
            seed: 0,
            statements: Statements::Original,
            partitions: 16,
        }
    }
}

/// A step of LinkBench's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Step {
    /// The graph's nodes, links and counts, by the loaders and the node loader.
    Load,
    /// The request mix, for `duration` or `requests` (in `request_steps` parts).
    Request,
    /// Every count against its visible links.
    Check,
}

/// An original quirk `fix` corrects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Fix {
    /// UPDATE_LINK calls updateLink, not the addLink upsert.
    UpdateLink,
    /// write_uncorr_* are read (the original reads read_uncorr_* for writes).
    WriteBlend,
    /// Links split evenly across types.
    TypeSplit,
    /// The configured motif length (the original always uses 512).
    MotifLength,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    Load,
    Request,
    Check,
}

pub struct LinkBench {
    graph: Arc<Graph>,
    shape: Arc<request::Shape>,
    loaders: usize,
    chunk_size: i64,
    seed: u64,
    statements: Statements,
    partitions: u64,
    steps: Steps<Work>,
    resolved: BTreeMap<String, String>,
}

fn zipf(start: i64, end: i64, (shape, theta): (&str, f64)) -> anyhow::Result<AccessDist> {
    dist::Zipf::new(start, end, theta)
        .map(AccessDist::Zipf)
        .map_err(|e| anyhow::anyhow!("parameter `{shape}`: {e}"))
}

/// The request mix's cumulative percentages, in `MIX_ORDER`.
fn mix(p: &LinkBenchParams) -> anyhow::Result<[f64; 10]> {
    let percents = [
        p.addlink,
        p.deletelink,
        p.updatelink,
        p.countlink,
        p.getlink,
        p.getlinklist,
        p.addnode,
        p.updatenode,
        p.deletenode,
        p.getnode,
    ];
    debug_assert_eq!(percents.len(), MIX_ORDER.len());
    let mut cumulative = [0.0; 10];
    let mut sum = 0.0;
    for (i, pct) in percents.iter().enumerate() {
        sum += pct;
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
fn request_shape(p: &LinkBenchParams, graph: &Graph) -> anyhow::Result<request::Shape> {
    let fixes = &p.fix;
    let (start, end) = (graph.start, graph.end);
    let n = end - start;
    let links = request::Shape::shuffler(Kind::Links, n);
    let uncorr = request::Shape::shuffler(Kind::Uncorrelated, n);
    let nodes = request::Shape::shuffler(Kind::Nodes, n);
    // The original reads the write blend and uncorrelated write shape from read_uncorr_*.
    let (write_blend, write_uncorr_shape) = if fixes.contains(&Fix::WriteBlend) {
        (
            p.write_uncorr_blend,
            ("write_uncorr_shape", p.write_uncorr_shape),
        )
    } else {
        (
            p.read_uncorr_blend,
            ("read_uncorr_shape", p.read_uncorr_shape),
        )
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
        fixed_split: fixes.contains(&Fix::TypeSplit),
        fixed_update: fixes.contains(&Fix::UpdateLink),
        cumulative: mix(p)?,
        max_failed: p.max_failed_requests,
        history_pct: p.getlinklist_history,
        link_reads: Blend {
            blend: p.read_uncorr_blend / 100.0,
            uncorrelated: access(
                zipf(start, end, ("read_uncorr_shape", p.read_uncorr_shape))?,
                &uncorr,
            ),
            correlated: access(zipf(start, end, ("read_shape", p.read_shape))?, &links),
        },
        link_writes: Blend {
            blend: write_blend / 100.0,
            uncorrelated: access(zipf(start, end, write_uncorr_shape)?, &uncorr),
            correlated: access(zipf(start, end, ("write_shape", p.write_shape))?, &links),
        },
        node_reads: access(
            zipf(start, end, ("node_read_shape", p.node_read_shape))?,
            &nodes,
        ),
        node_updates: access(
            zipf(start, end, ("node_update_shape", p.node_update_shape))?,
            &nodes,
        ),
        node_deletes: access(AccessDist::Uniform, &nodes),
        link_datasize: graph.link_datasize,
        node_datasize: graph.node_datasize,
        multiget_prob: p.link_multiget_prob,
        motif_bytes: graph.motif_bytes,
    })
}

/// The graph the load writes.
fn graph(p: &LinkBenchParams) -> anyhow::Result<Graph> {
    let (start, end) = (p.startid1 as i64, p.maxid1 as i64);
    if start < 1 || end <= start + 1 {
        anyhow::bail!("parameters `startid1` and `maxid1`: expected 1 <= startid1 < maxid1 - 1, got {start} and {end}");
    }
    let types = p.link_type_count as i64;
    if types < 1 {
        anyhow::bail!("parameter `link_type_count`: must be at least 1");
    }
    Ok(Graph {
        start,
        end,
        types,
        degrees: Arc::new(degree::Degrees::new(start, end)?),
        fixed_split: p.fix.contains(&Fix::TypeSplit),
        link_datasize: p.link_datasize,
        node_datasize: p.node_datasize,
        bulk: p.bulk_batch.max(1) as usize,
        motif_bytes: if p.fix.contains(&Fix::MotifLength) {
            p.motif_length.max(1) as usize
        } else {
            motif::ORIGINAL_MOTIF_BYTES
        },
    })
}

/// The steps `steps` names: the load (its loaders and the node loader), the request parts,
/// the check.
fn plans(p: &LinkBenchParams, loaders: usize, clients: usize) -> anyhow::Result<Steps<Work>> {
    let requests = p.requests;
    let request_steps = p.request_steps.max(1);
    let mut steps = Steps::default();
    for step in &p.steps {
        match step {
            Step::Load => {
                let plan = StepPlan {
                    name: "load".into(),
                    clients: loaders + 1,
                    kinds: kinds::of(kinds::LOAD),
                    ..StepPlan::default()
                };
                steps.push(plan, Work::Load);
            }
            Step::Request => {
                for i in 1..=request_steps {
                    let plan = StepPlan {
                        name: if request_steps == 1 {
                            "request".into()
                        } else {
                            format!("request.{i}")
                        },
                        clients: clients.max(1),
                        duration: Some(p.duration.value),
                        warmup: p.warmup.value,
                        ops_per_client: (requests > 0).then_some(requests),
                        open_loop: request::throttle(p.requestrate, clients)?,
                        kinds: kinds::of(kinds::REQUEST),
                        ..StepPlan::default()
                    };
                    steps.push(plan, Work::Request);
                }
            }
            Step::Check => {
                let plan = StepPlan {
                    name: "check".into(),
                    clients: 1,
                    kinds: kinds::of(kinds::CHECKING),
                    ..StepPlan::default()
                };
                steps.push(plan, Work::Check);
            }
        }
    }
    if steps.is_empty() {
        anyhow::bail!("parameter `steps`: no steps given");
    }
    Ok(steps)
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    let mut p: LinkBenchParams = params.read("linkbench")?;
    p.seed = seed_or_clock(p.seed);
    let graph = graph(&p)?;
    let shape = request_shape(&p, &graph)?;
    let loaders = match p.loaders as usize {
        0 => clients.max(1),
        l => l,
    };
    let seed = p.seed;
    let steps = plans(&p, loaders, clients)?;
    Ok(Box::new(LinkBench {
        graph: Arc::new(graph),
        shape: Arc::new(shape),
        loaders,
        chunk_size: p.loader_chunk_size.max(1) as i64,
        seed,
        statements: p.statements,
        partitions: p.partitions,
        steps,
        resolved: record(&p),
    }))
}

crate::params::timed!(LinkBenchParams, duration);

pub const ENTRY: WorkloadEntry = WorkloadEntry::new::<LinkBenchParams, LinkBenchKind>(
    "linkbench",
    "LinkBench: load a social graph, run Facebook's request mix, check every count against its links",
    build,
    report::HOOKS,
);

/// A client's store on the engine: a connection of its own, or a session.
fn open_store<'e>(
    db: Db<'e>,
    statements: Statements,
    node_ids: &kv::NodeIds,
) -> anyhow::Result<Box<dyn Store + 'e>> {
    Ok(match db {
        Db::Sql(e) => Box::new(sql::SqlStore::new(e, statements)?),
        Db::Kv(e) => Box::new(kv::KvStore::new(
            e.session(SessionOptions::default())?,
            Arc::clone(node_ids),
        )),
        Db::Doc(e) => Box::new(doc::DocStore::new(e, Arc::clone(node_ids))?),
        other => return Err(other.refused(ENTRY.name)),
    })
}

impl LinkBench {
    fn rng(&self, step: usize, thread: usize) -> jrand::JavaRandom {
        jrand::JavaRandom::new(crate::params::thread_seed(self.seed, step, thread) as i64)
    }
}

/// A LinkBench step on one engine, with what its clients share: the load's work queue and a
/// kv engine's node numbering, fresh for the step.
struct LinkBenchStep<'a> {
    w: &'a LinkBench,
    engine: Db<'a>,
    index: usize,
    chunks: Chunks,
    node_ids: kv::NodeIds,
}

impl<'a> LinkBenchStep<'a> {
    fn store(&self) -> anyhow::Result<Box<dyn Store + 'a>> {
        open_store(self.engine, self.w.statements, &self.node_ids)
    }

    /// What opens a client's store, again when a requester reconnects.
    fn reopen(&self) -> request::Reopen<'a> {
        let (db, statements, node_ids) =
            (self.engine, self.w.statements, Arc::clone(&self.node_ids));
        Box::new(move || open_store(db, statements, &node_ids))
    }
}

impl<'a> PreparedStep<'a> for LinkBenchStep<'a> {
    /// The load's clients are its link loaders and the node loader (LinkBench's one
    /// node-loading thread, after them); a request step's are requesters; the check's is the
    /// check.
    fn clients(&self) -> NewClients<'a> {
        let w = self.w;
        match *w.steps.work(self.index) {
            Work::Load => {
                let mut loaders = alike(w.loaders, |n| self.link_loader(n))?;
                loaders.push(self.node_loader(w.loaders)?);
                Ok(loaders)
            }
            Work::Request => alike(w.steps.plan(self.index).clients, |n| {
                Ok(Box::new(Requester::new(
                    self.reopen(),
                    Arc::clone(&w.shape),
                    crate::params::thread_seed(w.seed, self.index, n) as i64,
                )?))
            }),
            Work::Check => Ok(vec![Box::new(Check::new(self.store()?))]),
        }
    }
}

impl<'a> LinkBenchStep<'a> {
    /// Link loader `n`, taking id1 chunks from the step's queue.
    fn link_loader(&self, n: usize) -> NewClient<'a> {
        let w = self.w;
        Ok(Box::new(LinkLoader::new(
            self.store()?,
            Arc::clone(&w.graph),
            Arc::clone(&self.chunks),
            w.rng(self.index, n),
            motif::Motif::link(w.graph.motif_bytes),
        )))
    }

    /// The node loader, thread `n` of the load's (its random stream is that thread's).
    fn node_loader(&self, n: usize) -> NewClient<'a> {
        let w = self.w;
        Ok(Box::new(NodeLoader {
            store: self.store()?,
            graph: Arc::clone(&w.graph),
            rng: w.rng(self.index, n),
            motif: motif::Motif::node(w.graph.motif_bytes),
            next: None,
            buf: Vec::new(),
        }))
    }
}

impl Workload for LinkBench {
    fn steps(&self) -> &[StepPlan] {
        self.steps.plans()
    }

    /// The load creates LinkStoreMysql's tables on a sql engine (LinkbenchX's collections on a
    /// document server); every step gets a fresh work queue and node numbering.
    fn step<'a>(&'a self, engine: Db<'a>, index: usize, _: &Stop) -> NewStep<'a> {
        match (*self.steps.work(index), engine) {
            (Work::Load, Db::Sql(e)) => {
                let mut conn = e.connect()?;
                for ddl in schema::schema(e.dialect(), e.storage_engine(), self.partitions) {
                    conn.exec(&ddl)?;
                }
            }
            (Work::Load, Db::Doc(e)) => doc::create(e)?,
            _ => {}
        }
        Ok(Box::new(LinkBenchStep {
            w: self,
            engine,
            index,
            chunks: load::chunks(self.graph.start, self.graph.end, self.chunk_size),
            node_ids: Arc::default(),
        }))
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }

    /// A link write and its count change are one transaction (a plain read-modify-write
    /// could lose a count update, which the check would find).
    fn needs(&self) -> Vec<Need> {
        if self.steps.works().any(|w| *w == Work::Request) {
            vec![Need::Transactions]
        } else {
            Vec::new()
        }
    }
}
