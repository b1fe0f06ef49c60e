//! LinkBench's request phase (docs/workloads.md §1.5–1.7): the operation mix, the access
//! distributions (Zipf ranks through the shufflers, blended correlated/uncorrelated), the id2
//! chooser, the GET_LINKS_LIST history cache, and the original's quirks unless a fix asks
//! otherwise.

use super::degree::{per_type, Degrees};
use super::dist::{geometric, uniform, Zipf};
use super::jrand::JavaRandom;
use super::kinds::LinkBenchKind;
use super::load::{now_ms, LINK_DATA_MAX, NODE_DATA_MAX};
use super::model::{Link, ListPage, Node, Store, LINK_TYPE, NODE_TYPE, RANGE_LIMIT, VISIBLE};
use super::motif::Motif;
use super::shuffle::{Kind, Shuffler};
use fathom_api::kind::Done;
use fathom_api::kind::Kind as _;
use fathom_api::pace::Spacing;
use fathom_api::step::{Client, LatencyFrom, OpenLoop};
use std::sync::Arc;

/// The operations in the order the mix is walked (`LinkBenchRequest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    AddLink,
    DeleteLink,
    UpdateLink,
    CountLink,
    MultigetLink,
    GetLinksList,
    AddNode,
    UpdateNode,
    DeleteNode,
    GetNode,
}

pub const MIX_ORDER: [Op; 10] = [
    Op::AddLink,
    Op::DeleteLink,
    Op::UpdateLink,
    Op::CountLink,
    Op::MultigetLink,
    Op::GetLinksList,
    Op::AddNode,
    Op::UpdateNode,
    Op::DeleteNode,
    Op::GetNode,
];

impl Op {
    /// The operation's kind.
    fn kind(self) -> LinkBenchKind {
        match self {
            Op::AddNode => LinkBenchKind::AddNode,
            Op::UpdateNode => LinkBenchKind::UpdateNode,
            Op::DeleteNode => LinkBenchKind::DeleteNode,
            Op::GetNode => LinkBenchKind::GetNode,
            Op::AddLink => LinkBenchKind::AddLink,
            Op::DeleteLink => LinkBenchKind::DeleteLink,
            Op::UpdateLink => LinkBenchKind::UpdateLink,
            Op::CountLink => LinkBenchKind::CountLink,
            Op::MultigetLink => LinkBenchKind::MultigetLink,
            Op::GetLinksList => LinkBenchKind::GetLinksList,
        }
    }
}

/// A rank distribution and the shuffler that turns ranks into ids.
pub struct Access {
    pub dist: AccessDist,
    pub shuffler: Arc<Shuffler>,
}

pub enum AccessDist {
    Zipf(Zipf),
    Uniform,
}

impl Access {
    fn id(&self, rng: &mut JavaRandom, start: i64, end: i64) -> i64 {
        let rank = match &self.dist {
            AccessDist::Zipf(z) => z.draw(rng),
            AccessDist::Uniform => uniform(rng, start, end),
        };
        start + self.shuffler.permute(rank - start)
    }
}

/// Uncorrelated with probability `blend`, else correlated with out-degree.
pub struct Blend {
    pub blend: f64,
    pub uncorrelated: Access,
    pub correlated: Access,
}

impl Blend {
    fn id(&self, rng: &mut JavaRandom, start: i64, end: i64) -> i64 {
        if rng.next_double() < self.blend {
            self.uncorrelated.id(rng, start, end)
        } else {
            self.correlated.id(rng, start, end)
        }
    }
}

/// Everything the requesters share.
pub struct Shape {
    pub start: i64,
    pub end: i64,
    pub types: i64,
    pub degrees: Arc<Degrees>,
    pub fixed_split: bool,
    /// UPDATE_LINK calls updateLink instead of addLink.
    pub fixed_update: bool,
    /// Cumulative percentages in `MIX_ORDER`.
    pub cumulative: [f64; 10],
    pub history_pct: f64,
    pub link_reads: Blend,
    pub link_writes: Blend,
    pub node_reads: Access,
    pub node_updates: Access,
    pub node_deletes: Access,
    pub link_datasize: f64,
    pub node_datasize: f64,
    pub multiget_prob: f64,
    pub motif_bytes: usize,
    /// Failed requests a requester tolerates (`max_failed_requests`); negative: any number.
    pub max_failed: i64,
}

impl Shape {
    pub fn shuffler(kind: Kind, n: i64) -> Arc<Shuffler> {
        Arc::new(Shuffler::new(kind, n))
    }
}

/// LinkBench's `requestrate`: each requester's own Poisson schedule, a late one catching up
/// back to back, its latency the service time.
pub fn throttle(per_client: f64, clients: usize) -> anyhow::Result<Option<OpenLoop>> {
    if per_client == 0.0 {
        return Ok(None);
    }
    if !(per_client > 0.0 && per_client.is_finite()) {
        anyhow::bail!(
            "parameter `requestrate`: expected requests/s per client, 0 or more, got {per_client}"
        );
    }
    Ok(Some(OpenLoop {
        ops_per_sec: per_client * clients.max(1) as f64,
        spacing: Spacing::Poisson,
        shared: false,
        latency_from: LatencyFrom::Start,
    }))
}

/// Per-thread list queries that returned a full page, for the history queries.
const HISTORY_CAPACITY: usize = 2048;

/// Opens a requester's store again after a failed request, as LinkStoreMysql's `clearErrors`
/// reconnects.
pub type Reopen<'e> = Box<dyn FnMut() -> anyhow::Result<Box<dyn Store + 'e>> + Send + 'e>;

/// One requester.
pub struct Requester<'e> {
    pub store: Box<dyn Store + 'e>,
    reopen: Reopen<'e>,
    /// Requests that failed so far.
    failed: u64,
    pub shape: Arc<Shape>,
    pub rng: JavaRandom,
    pub link_add: Motif,
    pub link_up: Motif,
    pub node_add: Motif,
    pub node_up: Motif,
    /// (id1, type, oldest time) of full pages.
    history: Vec<(i64, i64, i64)>,
}

/// What a payload is for.
#[derive(Clone, Copy)]
enum Payload {
    Link,
    Node,
}

impl<'e> Requester<'e> {
    pub fn new(mut reopen: Reopen<'e>, shape: Arc<Shape>, seed: i64) -> anyhow::Result<Self> {
        let m = shape.motif_bytes;
        Ok(Requester {
            store: reopen()?,
            reopen,
            failed: 0,
            shape,
            rng: JavaRandom::new(seed),
            link_add: Motif::link(m),
            link_up: Motif::link(m),
            node_add: Motif::node(m),
            node_up: Motif::node(m),
            history: Vec::new(),
        })
    }

    /// A request failed after its retries: counted, the store reopened, and the requester
    /// goes on, as LinkBench's does, until more than `max_failed_requests` failed.
    fn failure(&mut self, op: Op, e: anyhow::Error) -> anyhow::Result<Option<Done>> {
        let name = op.kind().op().name;
        self.failed += 1;
        let max = self.shape.max_failed;
        if max >= 0 && self.failed > max as u64 {
            return Err(e.context(format!(
                "{name}: {} failed requests on this requester, more than max_failed_requests={max}",
                self.failed
            )));
        }
        eprintln!("fathom: {name} failed ({e:#}); reopening the store");
        match (self.reopen)() {
            Ok(store) => self.store = store,
            Err(r) => eprintln!("fathom: reopening the store failed: {r:#}"),
        }
        Ok(Some(Done {
            failed: true,
            ..Done::of(op.kind())
        }))
    }

    fn pick(&mut self) -> Op {
        let r = self.rng.next_double() * 100.0;
        MIX_ORDER
            .iter()
            .zip(self.shape.cumulative)
            .find(|(_, c)| r <= *c)
            .map_or(Op::GetNode, |(op, _)| *op)
    }

    fn link_type(&mut self) -> i64 {
        LINK_TYPE + i64::from(self.rng.next_int_bound(self.shape.types as i32))
    }

    /// `ID2Chooser`: an id2 that exists with about probability `p_exist`.
    fn id2(&mut self, id1: i64, link_type: i64, p_exist: f64) -> i64 {
        id1 + i64::from(
            self.rng
                .next_int_bound(self.id2_range(id1, link_type, p_exist) as i32),
        )
    }

    fn id2_range(&self, id1: i64, link_type: i64, p_exist: f64) -> i64 {
        let s = &self.shape;
        let n = per_type(
            s.degrees.total(id1),
            link_type - LINK_TYPE,
            s.types,
            s.fixed_split,
        );
        ((n as f64 / p_exist).ceil() as i64).clamp(1, i32::MAX as i64)
    }

    fn new_link(&mut self, id1: i64, link_type: i64, p_exist: f64, update: bool) -> Link {
        let id2 = self.id2(id1, link_type, p_exist);
        let data = self.payload(Payload::Link, update);
        Link {
            id1,
            link_type,
            id2,
            visibility: VISIBLE,
            data,
            time: now_ms(),
            version: 0,
        }
    }

    /// A fresh payload for a link or a node, added or updated: each of the four draws from
    /// its own motif, as LinkBench's four data generators.
    fn payload(&mut self, of: Payload, update: bool) -> Vec<u8> {
        let s = &self.shape;
        let (motif, median, max) = match (of, update) {
            (Payload::Link, false) => (&mut self.link_add, s.link_datasize, LINK_DATA_MAX),
            (Payload::Link, true) => (&mut self.link_up, s.link_datasize, LINK_DATA_MAX),
            (Payload::Node, false) => (&mut self.node_add, s.node_datasize, NODE_DATA_MAX),
            (Payload::Node, true) => (&mut self.node_up, s.node_datasize, NODE_DATA_MAX),
        };
        let mut data = Vec::new();
        motif.payload(&mut self.rng, median, max, &mut data);
        data
    }

    fn node(&mut self, version: i64, update: bool) -> Node {
        let data = self.payload(Payload::Node, update);
        Node {
            id: 0,
            node_type: NODE_TYPE,
            version,
            time: now_ms() / 1000,
            data,
        }
    }

    fn link_list(&mut self) -> anyhow::Result<u64> {
        let history = self.rng.next_double() * 100.0 < self.shape.history_pct;
        if history && !self.history.is_empty() {
            let at = self.rng.next_int_bound(self.history.len() as i32) as usize;
            let (id1, t, last) = self.history[at];
            let (found, oldest) = self.store.get_link_list(&ListPage {
                id1,
                link_type: t,
                max_time: last,
                offset: 1,
                limit: RANGE_LIMIT,
            })?;
            match oldest {
                Some(time) if found == RANGE_LIMIT => self.history[at] = (id1, t, time),
                _ => {
                    self.history.swap_remove(at);
                }
            }
            return Ok(found as u64);
        }
        let (s, e) = (self.shape.start, self.shape.end);
        let id1 = self.shape.link_reads.id(&mut self.rng, s, e);
        let t = self.link_type();
        let (found, oldest) = self.store.get_link_list(&ListPage {
            id1,
            link_type: t,
            max_time: i64::MAX,
            offset: 0,
            limit: RANGE_LIMIT,
        })?;
        if let Some(time) = oldest.filter(|_| found >= RANGE_LIMIT) {
            if !self.history.iter().any(|h| h.0 == id1 && h.1 == t) {
                if self.history.len() < HISTORY_CAPACITY {
                    self.history.push((id1, t, time));
                } else {
                    let at = self.rng.next_int_bound(HISTORY_CAPACITY as i32) as usize;
                    self.history[at] = (id1, t, time);
                }
            }
        }
        Ok(found as u64)
    }

    fn multiget(&mut self) -> anyhow::Result<u64> {
        let (s, e) = (self.shape.start, self.shape.end);
        let id1 = self.shape.link_reads.id(&mut self.rng, s, e);
        let t = self.link_type();
        let k = geometric(&mut self.rng, 1, 128, self.shape.multiget_prob);
        let range = self.id2_range(id1, t, 0.5);
        let ids: Vec<i64> = if range <= k {
            (id1..id1 + k).collect()
        } else {
            let mut ids = Vec::with_capacity(k as usize);
            for _ in 0..k {
                let mut id2 = self.id2(id1, t, 0.5);
                for _ in 0..100 {
                    if !ids.contains(&id2) {
                        break;
                    }
                    id2 = self.id2(id1, t, 0.5);
                }
                ids.push(id2);
            }
            ids
        };
        self.store.multiget_links(id1, t, &ids)
    }

    /// Performs one operation; returns it and the rows or bytes it touched.
    fn one(&mut self, op: Op) -> anyhow::Result<u64> {
        let (s, e) = (self.shape.start, self.shape.end);
        Ok(match op {
            Op::AddLink | Op::UpdateLink => {
                let id1 = self.shape.link_writes.id(&mut self.rng, s, e);
                let t = self.link_type();
                let update = op == Op::UpdateLink;
                let link = self.new_link(id1, t, if update { 0.9 } else { 0.05 }, update);
                if update && self.shape.fixed_update {
                    self.store.update_link(&link)?;
                } else {
                    self.store.add_link(&link)?;
                }
                link.data.len() as u64
            }
            Op::DeleteLink => {
                let id1 = self.shape.link_writes.id(&mut self.rng, s, e);
                let t = self.link_type();
                let id2 = self.id2(id1, t, 0.9);
                u64::from(self.store.delete_link(id1, t, id2)?)
            }
            Op::CountLink => {
                let id1 = self.shape.link_reads.id(&mut self.rng, s, e);
                let t = self.link_type();
                self.store.count_links(id1, t)? as u64
            }
            Op::MultigetLink => self.multiget()?,
            Op::GetLinksList => self.link_list()?,
            Op::AddNode => {
                let node = self.node(1, false);
                self.store.add_node(&node)?;
                node.data.len() as u64
            }
            Op::UpdateNode => {
                let id = self.shape.node_updates.id(&mut self.rng, s, e);
                let node = Node {
                    id,
                    ..self.node(2, true)
                };
                self.store.update_node(&node)?;
                node.data.len() as u64
            }
            Op::DeleteNode => {
                let id = self.shape.node_deletes.id(&mut self.rng, s, e);
                u64::from(self.store.delete_node(NODE_TYPE, id)?)
            }
            Op::GetNode => {
                let id = self.shape.node_reads.id(&mut self.rng, s, e);
                self.store.get_node(NODE_TYPE, id)?.unwrap_or(0) as u64
            }
        })
    }
}

impl Client for Requester<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let op = self.pick();
        // A retried operation is generated again from the generator's state, as LinkStoreMysql
        // retries its statements: the same operation kind.
        let (bytes, retries) = match fathom_api::retry::retrying(|| self.one(op)) {
            Ok(done) => done,
            Err(e) => return self.failure(op, e),
        };
        Ok(Some(Done {
            bytes,
            retries,
            rows: u64::from(op == Op::AddLink || op == Op::AddNode),
            ..Done::of(op.kind())
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_names_its_own_kind() {
        let names = [
            (Op::AddNode, "ADD_NODE"),
            (Op::UpdateNode, "UPDATE_NODE"),
            (Op::DeleteNode, "DELETE_NODE"),
            (Op::GetNode, "GET_NODE"),
            (Op::AddLink, "ADD_LINK"),
            (Op::DeleteLink, "DELETE_LINK"),
            (Op::UpdateLink, "UPDATE_LINK"),
            (Op::CountLink, "COUNT_LINK"),
            (Op::MultigetLink, "MULTIGET_LINK"),
            (Op::GetLinksList, "GET_LINKS_LIST"),
        ];
        for (op, name) in names {
            assert_eq!(op.kind().op().name, name);
        }
    }
}
