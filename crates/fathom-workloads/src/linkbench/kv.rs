//! LinkBench on the kv family through the shared row/index mapping: linktable under
//! (link_type, id1, id2), its covering `id1_type` index as keys holding every listed column
//! (as MyRocks stores it), counttable under (id1, link_type), nodetable under id. A link write
//! and its count change are one engine transaction; loads are atomic batches of blind puts.

use super::model::{Count, Link, ListPage, Node, Store, VISIBLE};
use crate::rows::{decode_row, encode_row, index_id, key_int, Col, Key};
use fathom_api::kv::{BatchOp, Direction, KvSession, KvTxn, Seek, TxnEnd};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

const LINKS: u32 = 1;
const COUNTS: u32 = 2;
const NODES: u32 = 3;
/// Stored link: visibility, time, version, data.
const LINK_ROW: &[bool] = &[true, true, true, false];
/// Stored count: count, time, version.
const COUNT_ROW: &[bool] = &[true, true, true];
/// Stored node: type, version, time, data.
const NODE_ROW: &[bool] = &[true, true, true, false];

fn link_key(link_type: i64, id1: i64, id2: i64) -> Vec<u8> {
    Key::default()
        .start(index_id(LINKS, 0))
        .int(link_type)
        .int(id1)
        .int(id2)
        .as_slice()
        .to_vec()
}

fn list_key(l: &Link) -> Vec<u8> {
    Key::default()
        .start(index_id(LINKS, 1))
        .int(l.id1)
        .int(l.link_type)
        .int(l.visibility)
        .int(l.time)
        .int(l.id2)
        .int(l.version)
        .bytes(&l.data)
        .as_slice()
        .to_vec()
}

fn count_key(id1: i64, link_type: i64) -> Vec<u8> {
    Key::default()
        .start(index_id(COUNTS, 0))
        .int(id1)
        .int(link_type)
        .as_slice()
        .to_vec()
}

fn node_key(id: i64) -> Vec<u8> {
    Key::default()
        .start(index_id(NODES, 0))
        .int(id)
        .as_slice()
        .to_vec()
}

/// A stored row of three integers and the payload: a link's or a node's value.
fn row_value(ints: [i64; 3], data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(32 + data.len());
    let [a, b, c] = ints;
    encode_row(
        &[Col::Int(a), Col::Int(b), Col::Int(c), Col::Bytes(data)],
        &mut v,
    );
    v
}

fn link_value(l: &Link) -> Vec<u8> {
    row_value([l.visibility, l.time, l.version], &l.data)
}

fn ints(row: &[u8], types: &[bool]) -> anyhow::Result<Vec<i64>> {
    let cols =
        decode_row(row, types).ok_or_else(|| anyhow::anyhow!("a stored row does not decode"))?;
    Ok(cols
        .iter()
        .map(|c| match c {
            Col::Int(v) => *v,
            Col::Bytes(b) => b.len() as i64,
        })
        .collect())
}

/// A link as stored, read back.
fn stored_link(id1: i64, link_type: i64, id2: i64, row: &[u8]) -> anyhow::Result<Link> {
    let cols = decode_row(row, LINK_ROW)
        .ok_or_else(|| anyhow::anyhow!("a stored link does not decode"))?;
    let int = |i: usize| match cols[i] {
        Col::Int(v) => v,
        Col::Bytes(_) => 0,
    };
    let data = match cols[3] {
        Col::Bytes(b) => b.to_vec(),
        Col::Int(_) => Vec::new(),
    };
    Ok(Link {
        id1,
        link_type,
        id2,
        visibility: int(0),
        time: int(1),
        version: int(2),
        data,
    })
}

/// Moves the count of (id1, type) by `delta` inside a transaction, never below 0.
fn bump(t: &mut dyn KvTxn, id1: i64, link_type: i64, delta: i64, now: i64) -> anyhow::Result<()> {
    let key = count_key(id1, link_type);
    let mut v = Vec::new();
    let (count, version) = if t.read(&key, &mut v)? {
        let c = ints(&v, COUNT_ROW)?;
        ((c[0] + delta).max(0), c[2] + 1)
    } else {
        (delta.max(0), 0)
    };
    let mut row = Vec::new();
    encode_row(
        &[Col::Int(count), Col::Int(now), Col::Int(version)],
        &mut row,
    );
    t.put(&key, &row)
}

/// Writes `new` over `old` (or fresh), keeping the index entry and the count (stamped
/// `count_time`) in step.
fn write_link(
    t: &mut dyn KvTxn,
    old: Option<&Link>,
    new: &Link,
    count_time: i64,
) -> anyhow::Result<()> {
    if let Some(o) = old {
        t.delete(&list_key(o))?;
    }
    t.put(&link_key(new.link_type, new.id1, new.id2), &link_value(new))?;
    t.put(&list_key(new), &[])?;
    let was = old.is_some_and(|o| o.visibility == VISIBLE);
    let is = new.visibility == VISIBLE;
    if was != is {
        bump(
            t,
            new.id1,
            new.link_type,
            if is { 1 } else { -1 },
            count_time,
        )?;
    }
    Ok(())
}

fn read_link(
    t: &mut dyn KvTxn,
    id1: i64,
    link_type: i64,
    id2: i64,
) -> anyhow::Result<Option<Link>> {
    let mut v = Vec::new();
    if !t.read(&link_key(link_type, id1, id2), &mut v)? {
        return Ok(None);
    }
    stored_link(id1, link_type, id2, &v).map(Some)
}

/// Node ids the store hands out, as AUTO_INCREMENT would: shared by a step's clients.
pub type NodeIds = Arc<std::sync::OnceLock<AtomicI64>>;

pub struct KvStore<'e> {
    session: Box<dyn KvSession + 'e>,
    node_ids: NodeIds,
}

impl<'e> KvStore<'e> {
    pub fn new(session: Box<dyn KvSession + 'e>, node_ids: NodeIds) -> Self {
        KvStore { session, node_ids }
    }

    fn ids(&mut self) -> anyhow::Result<&AtomicI64> {
        if self.node_ids.get().is_none() {
            let start = Key::default().start(index_id(NODES, 1)).as_slice().to_vec();
            let prefix = index_id(NODES, 0).to_be_bytes();
            let mut max = 0;
            self.session
                .scan(Seek::new(&start, Direction::Reverse, 1), &mut |k, _| {
                    if k.starts_with(&prefix) {
                        max = key_int(k, 4).unwrap_or(0);
                    }
                    false
                })?;
            let _ = self.node_ids.set(AtomicI64::new(max + 1));
        }
        Ok(self.node_ids.get().expect("set above"))
    }

    fn transact<T>(
        &mut self,
        mut body: impl FnMut(&mut dyn KvTxn) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let mut out = None;
        self.session.transaction(&mut |t| {
            out = Some(body(t)?);
            Ok(TxnEnd::Commit)
        })?;
        Ok(out.expect("the body ran"))
    }

    fn node_value(node: &Node) -> Vec<u8> {
        row_value([node.node_type, node.version, node.time], &node.data)
    }
}

/// id1s per part of the consistency check (fewer in tests, so small graphs have several parts).
const CHECK_IDS: i64 = if cfg!(test) { 500 } else { 1 << 16 };

/// What the check's scans call with each entry's id1, key and value.
type IdVisit<'a> = dyn FnMut(i64, &[u8], &[u8]) + 'a;

impl KvStore<'_> {
    /// Visits the entries of index `index` (keyed by id1 first) whose id1 is in [lo, hi), with
    /// that id1; returns the first id1 at or past `hi`, if any.
    fn scan_ids(
        &mut self,
        index: u32,
        lo: i64,
        hi: i64,
        visit: &mut IdVisit,
    ) -> anyhow::Result<Option<i64>> {
        let start = Key::default().start(index).int(lo).as_slice().to_vec();
        let prefix = index.to_be_bytes();
        let mut past = None;
        let all = Seek::new(&start, Direction::Forward, usize::MAX);
        self.session.scan(all, &mut |k, v| {
            if !k.starts_with(&prefix) {
                return false;
            }
            let id1 = key_int(k, 4).unwrap_or(0);
            if id1 >= hi {
                past = Some(id1);
                return false;
            }
            visit(id1, k, v);
            true
        })?;
        Ok(past)
    }

    /// The check for id1s in [lo, hi): visible links per (id1, type) from the id1_type index
    /// against the count rows. Returns the pairs that differ, the pairs checked, and the first
    /// id1 at or past `hi` in either table (where the next part starts).
    fn check_part(&mut self, lo: i64, hi: i64) -> anyhow::Result<(u64, u64, Option<i64>)> {
        let mut visible: HashMap<(i64, i64), i64> = HashMap::new();
        let next_links = self.scan_ids(index_id(LINKS, 1), lo, hi, &mut |id1, k, _| {
            if key_int(k, 20) == Some(VISIBLE) {
                *visible
                    .entry((id1, key_int(k, 12).unwrap_or(0)))
                    .or_insert(0) += 1;
            }
        })?;
        let mut counts: HashMap<(i64, i64), i64> = HashMap::new();
        let mut bad = None;
        let next_counts = self.scan_ids(
            index_id(COUNTS, 0),
            lo,
            hi,
            &mut |id1, k, v| match ints(v, COUNT_ROW) {
                Ok(c) => {
                    counts.insert((id1, key_int(k, 12).unwrap_or(0)), c[0]);
                }
                Err(e) => bad = Some(e),
            },
        )?;
        if let Some(e) = bad {
            return Err(e);
        }
        let next = match (next_links, next_counts) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let mut wrong = 0;
        let mut pairs = counts.len() as u64;
        for (key, &n) in &visible {
            match counts.get(key) {
                Some(&c) if c == n => {}
                Some(_) => wrong += 1,
                None => {
                    wrong += 1;
                    pairs += 1;
                }
            }
        }
        wrong += counts
            .iter()
            .filter(|(k, &c)| c != 0 && !visible.contains_key(k))
            .count() as u64;
        Ok((wrong, pairs, next))
    }
}

impl Store for KvStore<'_> {
    fn reset_nodes(&mut self, start: i64) -> anyhow::Result<()> {
        // A fresh database per run: only the numbering restarts.
        self.ids()?.store(start, Ordering::Relaxed);
        Ok(())
    }

    fn add_nodes(&mut self, nodes: &[Node]) -> anyhow::Result<Vec<i64>> {
        let first = self.ids()?.fetch_add(nodes.len() as i64, Ordering::Relaxed);
        let keys: Vec<Vec<u8>> = (0..nodes.len() as i64)
            .map(|i| node_key(first + i))
            .collect();
        let values: Vec<Vec<u8>> = nodes.iter().map(Self::node_value).collect();
        let ops: Vec<BatchOp<'_>> = keys
            .iter()
            .zip(&values)
            .map(|(k, v)| BatchOp::Put(k, v))
            .collect();
        self.session.write_batch(&ops)?;
        Ok((0..nodes.len() as i64).map(|i| first + i).collect())
    }

    fn add_links_bulk(&mut self, links: &[Link]) -> anyhow::Result<()> {
        let mut kv = Vec::with_capacity(links.len() * 2);
        for l in links {
            kv.push((link_key(l.link_type, l.id1, l.id2), link_value(l)));
            kv.push((list_key(l), Vec::new()));
        }
        let ops: Vec<BatchOp<'_>> = kv.iter().map(|(k, v)| BatchOp::Put(k, v)).collect();
        self.session.write_batch(&ops)
    }

    fn add_counts_bulk(&mut self, counts: &[Count]) -> anyhow::Result<()> {
        let kv: Vec<(Vec<u8>, Vec<u8>)> = counts
            .iter()
            .map(|c| {
                let mut row = Vec::new();
                encode_row(
                    &[Col::Int(c.count), Col::Int(c.time), Col::Int(c.version)],
                    &mut row,
                );
                (count_key(c.id1, c.link_type), row)
            })
            .collect();
        let ops: Vec<BatchOp<'_>> = kv.iter().map(|(k, v)| BatchOp::Put(k, v)).collect();
        self.session.write_batch(&ops)
    }

    fn add_link(&mut self, link: &Link) -> anyhow::Result<bool> {
        self.transact(|t| {
            let old = read_link(t, link.id1, link.link_type, link.id2)?;
            write_link(t, old.as_ref(), link, link.time)?;
            Ok(old.is_some())
        })
    }

    fn delete_link(&mut self, id1: i64, link_type: i64, id2: i64) -> anyhow::Result<bool> {
        let now = super::now_ms();
        self.transact(|t| match read_link(t, id1, link_type, id2)? {
            Some(old) if old.visibility == VISIBLE => {
                let new = Link {
                    visibility: super::model::HIDDEN,
                    ..old.clone()
                };
                // The hide keeps the link's time; the count row takes the delete's.
                write_link(t, Some(&old), &new, now)?;
                Ok(true)
            }
            _ => Ok(false),
        })
    }

    fn update_link(&mut self, link: &Link) -> anyhow::Result<bool> {
        self.transact(
            |t| match read_link(t, link.id1, link.link_type, link.id2)? {
                Some(old) => {
                    write_link(t, Some(&old), link, link.time)?;
                    Ok(true)
                }
                None => Ok(false),
            },
        )
    }

    fn count_links(&mut self, id1: i64, link_type: i64) -> anyhow::Result<i64> {
        let mut v = Vec::new();
        if self.session.read(&count_key(id1, link_type), &mut v)? {
            Ok(ints(&v, COUNT_ROW)?[0])
        } else {
            Ok(0)
        }
    }

    fn multiget_links(&mut self, id1: i64, link_type: i64, id2s: &[i64]) -> anyhow::Result<u64> {
        let mut found = 0;
        for &id2 in id2s {
            if self.session.get(&link_key(link_type, id1, id2))?.is_some() {
                found += 1;
            }
        }
        Ok(found)
    }

    fn get_link_list(&mut self, page: &ListPage) -> anyhow::Result<(i64, Option<i64>)> {
        let ListPage { id1, link_type, .. } = *page;
        let mut prefix = Key::default();
        prefix
            .start(index_id(LINKS, 1))
            .int(id1)
            .int(link_type)
            .int(VISIBLE);
        let prefix = prefix.as_slice().to_vec();
        let mut start = Key::default();
        start
            .start(index_id(LINKS, 1))
            .int(id1)
            .int(link_type)
            .int(VISIBLE)
            .int(page.max_time)
            .int(i64::MAX)
            .int(i64::MAX);
        let (mut seen, mut found, mut last) = (0i64, 0i64, None);
        self.session.scan(
            Seek::new(start.as_slice(), Direction::Reverse, usize::MAX),
            &mut |k, _| {
                if !k.starts_with(&prefix) {
                    return false;
                }
                seen += 1;
                if seen <= page.offset {
                    return true;
                }
                found += 1;
                last = key_int(k, prefix.len());
                found < page.limit
            },
        )?;
        Ok((found, if found == page.limit { last } else { None }))
    }

    fn add_node(&mut self, node: &Node) -> anyhow::Result<Option<i64>> {
        Ok(self.add_nodes(std::slice::from_ref(node))?.first().copied())
    }

    fn update_node(&mut self, node: &Node) -> anyhow::Result<bool> {
        let key = node_key(node.id);
        let value = Self::node_value(node);
        self.transact(|t| {
            let mut v = Vec::new();
            if !t.read(&key, &mut v)? || ints(&v, NODE_ROW)?[0] != node.node_type {
                return Ok(false);
            }
            t.put(&key, &value)?;
            Ok(true)
        })
    }

    fn delete_node(&mut self, node_type: i64, id: i64) -> anyhow::Result<bool> {
        let key = node_key(id);
        self.transact(|t| {
            let mut v = Vec::new();
            if !t.read(&key, &mut v)? || ints(&v, NODE_ROW)?[0] != node_type {
                return Ok(false);
            }
            t.delete(&key)?;
            Ok(true)
        })
    }

    fn get_node(&mut self, node_type: i64, id: i64) -> anyhow::Result<Option<usize>> {
        let mut v = Vec::new();
        if !self.session.read(&node_key(id), &mut v)? {
            return Ok(None);
        }
        Ok((ints(&v, NODE_ROW)?[0] == node_type).then_some(v.len()))
    }

    /// Part by part of the id1 range, so that memory holds one part's pairs, not the graph's.
    fn check_counts(&mut self) -> anyhow::Result<(u64, u64)> {
        let (mut wrong, mut pairs) = (0, 0);
        let mut from = Some(i64::MIN);
        while let Some(lo) = from {
            let part = self.check_part(lo, lo.saturating_add(CHECK_IDS))?;
            wrong += part.0;
            pairs += part.1;
            from = part.2;
        }
        Ok((wrong, pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{drive, scratch};
    use fathom_api::family::Engine;
    use fathom_api::kv::SessionOptions;

    /// The check, part by part, finds one count row made wrong among several parts' pairs.
    #[test]
    fn the_check_in_parts_finds_a_wrong_count() {
        let (_dir, engine) = scratch("lmdb", &[]);
        let w = crate::testing::build_from(super::super::build, &["maxid1=3001", "steps=load"], 1)
            .unwrap();
        drive(w.as_ref(), engine.db(), 0);
        let Engine::Kv(kv) = &engine else {
            panic!("lmdb is a kv engine")
        };
        let mut store = KvStore::new(
            kv.session(SessionOptions::default()).unwrap(),
            Arc::default(),
        );
        let (wrong, pairs) = store.check_counts().unwrap();
        assert_eq!(wrong, 0);
        assert!(pairs > 1000, "pairs of every part: {pairs}");
        // A count row of an id1 in a later part, one too high.
        let mut row = None;
        let from = Key::default()
            .start(index_id(COUNTS, 0))
            .int(2000)
            .as_slice()
            .to_vec();
        store
            .session
            .scan(Seek::new(&from, Direction::Forward, 1), &mut |k, v| {
                row = Some((k.to_vec(), ints(v, COUNT_ROW).unwrap()));
                false
            })
            .unwrap();
        let (key, c) = row.unwrap();
        let mut v = Vec::new();
        encode_row(
            &[Col::Int(c[0] + 1), Col::Int(c[1]), Col::Int(c[2])],
            &mut v,
        );
        store.session.put(&key, &v).unwrap();
        assert_eq!(store.check_counts().unwrap(), (1, pairs));
    }
}
