//! LinkBench's load phase (docs/workloads.md §1.4): one node loader inserting every node in
//! order in bulk batches, and link loaders taking chunks of id1s (highest first) from a shared
//! queue, writing each id1's links of every type with their count rows in bulk batches.

use super::degree::{per_type, Degrees};
use super::jrand::JavaRandom;
use super::kinds::LinkBenchKind;
use super::model::{Count, Link, Node, Store, LINK_TYPE, NODE_TYPE, VISIBLE};
use super::motif::Motif;
use fathom_api::kind::Done;
use fathom_api::retry::retrying;
use fathom_api::step::Client;
use std::sync::{Arc, Mutex};

/// Largest node payload plus one.
pub const NODE_DATA_MAX: i64 = 1 << 20;
/// Largest link payload plus one.
pub const LINK_DATA_MAX: i64 = 255;

/// What the loaders share: the graph's shape.
pub struct Graph {
    pub start: i64,
    pub end: i64,
    pub types: i64,
    pub degrees: Arc<Degrees>,
    /// The corrected per-type split instead of the original's.
    pub fixed_split: bool,
    pub link_datasize: f64,
    pub node_datasize: f64,
    pub bulk: usize,
    pub motif_bytes: usize,
}

/// The chunks of id1s left, highest last so `pop` takes it first.
pub type Chunks = Arc<Mutex<Vec<(i64, i64)>>>;

pub fn chunks(start: i64, end: i64, size: i64) -> Chunks {
    let mut v = Vec::new();
    let mut at = start;
    while at < end {
        v.push((at, (at + size).min(end)));
        at += size;
    }
    Arc::new(Mutex::new(v))
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Inserts every node, in id order, `bulk` at a time.
pub struct NodeLoader<'e> {
    pub store: Box<dyn Store + 'e>,
    pub graph: Arc<Graph>,
    pub rng: JavaRandom,
    pub motif: Motif,
    pub next: Option<i64>,
    pub buf: Vec<u8>,
}

impl Client for NodeLoader<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let g = &self.graph;
        let from = match self.next {
            None => {
                self.store.reset_nodes(g.start)?;
                g.start
            }
            Some(id) if id >= g.end => return Ok(None),
            Some(id) => id,
        };
        let to = (from + g.bulk as i64).min(g.end);
        let time = now_ms() / 1000;
        let mut nodes = Vec::with_capacity((to - from) as usize);
        let mut bytes = 0;
        for _ in from..to {
            let (rng, buf) = (&mut self.rng, &mut self.buf);
            self.motif.payload(rng, g.node_datasize, NODE_DATA_MAX, buf);
            bytes += self.buf.len() as u64;
            nodes.push(Node {
                id: 0,
                node_type: NODE_TYPE,
                version: 1,
                time,
                data: self.buf.clone(),
            });
        }
        // Not retried: a retry would number the nodes again from a later id.
        let ids = self.store.add_nodes(&nodes)?;
        if ids.first() != Some(&from) {
            anyhow::bail!(
                "the node table numbered nodes from {:?}, expected {from}",
                ids.first()
            );
        }
        self.next = Some(to);
        Ok(Some(Done {
            bytes,
            rows: nodes.len() as u64,
            ..Done::of(LinkBenchKind::LoadNodeBulk)
        }))
    }
}

/// Where a link loader is: the id1 being written, its type and the link within it.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    id1: i64,
    end: i64,
    type_index: i64,
    j: i64,
    n: i64,
    max_time: i64,
}

/// Takes chunks of id1s and writes their links and count rows in bulk batches; one operation
/// is one batch.
pub struct LinkLoader<'e> {
    store: Box<dyn Store + 'e>,
    graph: Arc<Graph>,
    chunks: Chunks,
    rng: JavaRandom,
    motif: Motif,
    links: Vec<Link>,
    counts: Vec<Count>,
    cursor: Option<Cursor>,
}

impl<'e> LinkLoader<'e> {
    pub fn new(
        store: Box<dyn Store + 'e>,
        graph: Arc<Graph>,
        chunks: Chunks,
        rng: JavaRandom,
        motif: Motif,
    ) -> Self {
        LinkLoader {
            store,
            graph,
            chunks,
            rng,
            motif,
            links: Vec::new(),
            counts: Vec::new(),
            cursor: None,
        }
    }

    fn links_of(&self, id1: i64, type_index: i64) -> i64 {
        let g = &self.graph;
        per_type(g.degrees.total(id1), type_index, g.types, g.fixed_split)
    }

    /// The cursor at the first link of `id1` (type 0).
    fn at(&self, id1: i64, end: i64) -> Cursor {
        Cursor {
            id1,
            end,
            type_index: 0,
            j: 0,
            n: self.links_of(id1, 0),
            max_time: 0,
        }
    }

    /// Moves to the next link to write, finishing (id1, type)s on the way; false when no
    /// chunk is left.
    fn advance(&mut self) -> bool {
        loop {
            let Some(c) = self.cursor.as_mut() else {
                let chunk = self.chunks.lock().unwrap_or_else(|p| p.into_inner()).pop();
                let Some((from, to)) = chunk else {
                    return false;
                };
                self.cursor = Some(self.at(from, to));
                continue;
            };
            if c.j < c.n {
                return true;
            }
            // This (id1, type) is done: its count row, if it got links.
            if c.n > 0 {
                self.counts.push(Count {
                    id1: c.id1,
                    link_type: LINK_TYPE + c.type_index,
                    count: c.n,
                    time: c.max_time,
                    version: 0,
                });
            }
            let (id1, end, next_type) = (c.id1, c.end, c.type_index + 1);
            if next_type < self.graph.types {
                let n = self.links_of(id1, next_type);
                let c = self.cursor.as_mut().expect("present");
                *c = Cursor {
                    type_index: next_type,
                    j: 0,
                    n,
                    max_time: 0,
                    ..*c
                };
            } else if id1 + 1 < end {
                self.cursor = Some(self.at(id1 + 1, end));
            } else {
                self.cursor = None;
            }
        }
    }

    fn flush_links(&mut self) -> anyhow::Result<Done> {
        let (store, links) = (&mut self.store, &self.links);
        let ((), retries) = retrying(|| store.add_links_bulk(links))?;
        let bytes = self.links.iter().map(|l| 40 + l.data.len() as u64).sum();
        let rows = self.links.len() as u64;
        self.links.clear();
        Ok(Done {
            bytes,
            rows,
            retries,
            ..Done::of(LinkBenchKind::LoadLinksBulk)
        })
    }

    fn flush_counts(&mut self) -> anyhow::Result<Done> {
        let (store, counts) = (&mut self.store, &self.counts);
        let ((), retries) = retrying(|| store.add_counts_bulk(counts))?;
        let rows = self.counts.len() as u64;
        self.counts.clear();
        // Count rows are not inserts of the graph: only nodes and links count as rows.
        Ok(Done {
            bytes: rows * 40,
            retries,
            ..Done::of(LinkBenchKind::LoadCountsBulk)
        })
    }
}

impl Client for LinkLoader<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let bulk = self.graph.bulk;
        loop {
            if self.links.len() >= bulk {
                return self.flush_links().map(Some);
            }
            if self.counts.len() >= bulk {
                return self.flush_counts().map(Some);
            }
            if !self.advance() {
                if !self.links.is_empty() {
                    return self.flush_links().map(Some);
                }
                if !self.counts.is_empty() {
                    return self.flush_counts().map(Some);
                }
                return Ok(None);
            }
            let c = self.cursor.expect("advance found a link");
            // LinkBench's draws per link: size, payload, then time.
            let mut data = Vec::new();
            let median = self.graph.link_datasize;
            self.motif
                .payload(&mut self.rng, median, LINK_DATA_MAX, &mut data);
            let time = now_ms() - (1i64 << 31) + i64::from(self.rng.next_int());
            self.links.push(Link {
                id1: c.id1,
                link_type: LINK_TYPE + c.type_index,
                id2: c.id1 + c.j,
                visibility: VISIBLE,
                data,
                time,
                version: 0,
            });
            let cur = self.cursor.as_mut().expect("present");
            cur.j += 1;
            cur.max_time = cur.max_time.max(time);
        }
    }
}
