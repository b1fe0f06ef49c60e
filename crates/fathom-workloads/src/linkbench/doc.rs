//! LinkBench on the document family with LinkbenchX's collections and indexes
//! (`LinkStoreMongoDBv2`): `link` with its unique `{link_type, id1, id2}` and the covering
//! `{id1, link_type, visibility, time, id2, version, data}`, `count` with its unique
//! `{id, link_type}`, and `node` keyed by `_id`, numbered by a counter primed from the largest
//! `_id`, as LinkbenchX's. The operations keep the MySQL store's semantics (the reference;
//! LinkbenchX's own count upkeep is not, docs/workloads.md §1.1): a write that changes a
//! count runs in one transaction with it when the server has them, and, as the seed ran it,
//! without one when it has not, where racing clients can leave counts that the check then
//! reports as drifted.

use super::kv::NodeIds;
use super::model::{self, Count, Link, LinkRows, ListPage, Node, Store, HIDDEN, VISIBLE};
use fathom_api::doc::bson::{doc, spec::BinarySubtype, Binary, Bson, Document, RawDocument};
use fathom_api::doc::{duplicate_key, DocEngine, DocSession, Find, Index, Update};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};

const LINKS: &str = "link";
const COUNTS: &str = "count";
const NODES: &str = "node";

/// Drops the collections and creates them with LinkbenchX's indexes (the load's start).
pub fn create(engine: &dyn DocEngine) -> anyhow::Result<()> {
    engine.drop_collections(&[LINKS, COUNTS, NODES])?;
    let index = |name: &str, keys: Document, unique: bool| Index {
        name: name.into(),
        keys,
        unique,
    };
    engine.create_indexes(
        LINKS,
        &[
            index("link_key", doc! {"link_type": 1, "id1": 1, "id2": 1}, true),
            index("id1_type", id1_type(), false),
        ],
    )?;
    engine.create_indexes(
        COUNTS,
        &[index("count_key", doc! {"id": 1, "link_type": 1}, true)],
    )
}

/// The covering index of the list query.
fn id1_type() -> Document {
    doc! {"id1": 1, "link_type": 1, "visibility": 1, "time": 1, "id2": 1, "version": 1, "data": 1}
}

fn bin(bytes: &[u8]) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Generic,
        bytes: bytes.to_vec(),
    })
}

fn link_key(id1: i64, link_type: i64, id2: i64) -> Document {
    doc! {"link_type": link_type, "id1": id1, "id2": id2}
}

fn link_doc(l: &Link) -> Document {
    doc! {
        "id1": l.id1, "link_type": l.link_type, "id2": l.id2, "visibility": l.visibility,
        "data": bin(&l.data), "time": l.time, "version": l.version,
    }
}

fn size(d: &RawDocument) -> u64 {
    d.as_bytes().len() as u64
}

pub struct DocStore<'e> {
    session: Box<dyn DocSession + 'e>,
    transactions: bool,
    node_ids: NodeIds,
    /// The list query's hint, built once.
    id1_type: Document,
}

impl<'e> DocStore<'e> {
    pub fn new(engine: &'e dyn DocEngine, node_ids: NodeIds) -> anyhow::Result<Self> {
        Ok(DocStore {
            session: engine.session()?,
            transactions: engine.transactions(),
            node_ids,
            id1_type: id1_type(),
        })
    }

    fn ids(&mut self) -> anyhow::Result<&AtomicI64> {
        if self.node_ids.get().is_none() {
            let (all, sort, only_id) = (doc! {}, doc! {"_id": -1}, doc! {"_id": 1});
            let mut max = 0;
            let find = Find::new(&all).sort(&sort).project(&only_id).limit(1);
            self.session.find(NODES, find, &mut |d| {
                max = d.get_i64("_id").unwrap_or(0);
                false
            })?;
            let _ = self.node_ids.set(AtomicI64::new(max + 1));
        }
        Ok(self.node_ids.get().expect("set above"))
    }

    fn update(
        &mut self,
        coll: &str,
        filter: &Document,
        update: &Document,
        upsert: bool,
    ) -> anyhow::Result<u64> {
        let u = Update {
            filter,
            update,
            upsert,
            many: false,
        };
        let done = self.session.update(coll, u)?;
        Ok(done.matched + done.upserted as u64)
    }

    /// Inserts documents in one `insert`; on a duplicate key, `each` is applied to every
    /// document's key instead (the ones inserted already are unchanged by it).
    fn insert_or(
        &mut self,
        coll: &str,
        docs: &[Document],
        mut each: impl FnMut(&mut Self, usize) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        match self.session.insert(coll, docs, false) {
            Err(e) if duplicate_key(&e) => (0..docs.len()).try_for_each(|i| each(self, i)),
            done => done.map(|_| ()),
        }
    }
}

impl LinkRows for DocStore<'_> {
    fn visibility(&mut self, id1: i64, link_type: i64, id2: i64) -> anyhow::Result<Option<i64>> {
        let (key, only) = (
            link_key(id1, link_type, id2),
            doc! {"visibility": 1, "_id": 0},
        );
        let mut v = None;
        let find = Find::new(&key).project(&only).limit(1);
        self.session.find(LINKS, find, &mut |d| {
            v = d.get_i64("visibility").ok();
            false
        })?;
        Ok(v)
    }

    fn insert_link(&mut self, link: &Link) -> anyhow::Result<()> {
        self.session.insert(LINKS, &[link_doc(link)], true)?;
        Ok(())
    }

    fn set_link(&mut self, l: &Link) -> anyhow::Result<()> {
        let set = doc! {"$set": {
            "visibility": l.visibility, "data": bin(&l.data), "time": l.time, "version": l.version,
        }};
        self.update(LINKS, &link_key(l.id1, l.link_type, l.id2), &set, false)?;
        Ok(())
    }

    fn hide_link(&mut self, id1: i64, link_type: i64, id2: i64) -> anyhow::Result<()> {
        let hide = doc! {"$set": {"visibility": HIDDEN}};
        self.update(LINKS, &link_key(id1, link_type, id2), &hide, false)?;
        Ok(())
    }

    /// As LinkStoreMysql's INSERT ... ON DUPLICATE KEY UPDATE: created at 1 or 0 when missing.
    fn bump_count(&mut self, id1: i64, link_type: i64, delta: i64, now: i64) -> anyhow::Result<()> {
        let key = doc! {"id": id1, "link_type": link_type};
        if delta > 0 {
            let up = doc! {"$inc": {"count": 1_i64, "version": 1_i64}, "$set": {"time": now}};
            self.update(COUNTS, &key, &up, true)?;
            return Ok(());
        }
        let positive = doc! {"id": id1, "link_type": link_type, "count": {"$gt": 0}};
        let down = doc! {"$inc": {"count": -1_i64, "version": 1_i64}, "$set": {"time": now}};
        if self.update(COUNTS, &positive, &down, false)? == 0 {
            let zero = doc! {
                "$inc": {"version": 1_i64}, "$set": {"time": now},
                "$setOnInsert": {"count": 0_i64},
            };
            self.update(COUNTS, &key, &zero, true)?;
        }
        Ok(())
    }

    /// A transaction when the server has them; alone when it has not.
    fn transaction<T>(
        &mut self,
        body: impl FnOnce(&mut Self) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        if !self.transactions {
            return body(self);
        }
        self.session.begin()?;
        match body(self) {
            Ok(v) => self.session.commit().map(|_| v),
            Err(e) => {
                let _ = self.session.abort();
                Err(e)
            }
        }
    }
}

impl Store for DocStore<'_> {
    fn reset_nodes(&mut self, start: i64) -> anyhow::Result<()> {
        self.session.delete(NODES, &doc! {}, true)?;
        self.ids()?.store(start, Ordering::Relaxed);
        Ok(())
    }

    fn add_nodes(&mut self, nodes: &[Node]) -> anyhow::Result<Vec<i64>> {
        let first = self.ids()?.fetch_add(nodes.len() as i64, Ordering::Relaxed);
        let docs: Vec<Document> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                doc! {
                    "_id": first + i as i64, "type": n.node_type, "version": n.version,
                    "time": n.time, "data": bin(&n.data),
                }
            })
            .collect();
        self.session.insert(NODES, &docs, true)?;
        Ok((0..nodes.len() as i64).map(|i| first + i).collect())
    }

    fn add_links_bulk(&mut self, links: &[Link]) -> anyhow::Result<()> {
        let docs: Vec<Document> = links.iter().map(link_doc).collect();
        self.insert_or(LINKS, &docs, |s, i| {
            let l = &links[i];
            let visible = doc! {"$set": {"visibility": l.visibility}};
            s.update(LINKS, &link_key(l.id1, l.link_type, l.id2), &visible, false)?;
            Ok(())
        })
    }

    fn add_counts_bulk(&mut self, counts: &[Count]) -> anyhow::Result<()> {
        let doc_of = |c: &Count| {
            doc! {"id": c.id1, "link_type": c.link_type, "count": c.count, "time": c.time, "version": c.version}
        };
        let docs: Vec<Document> = counts.iter().map(doc_of).collect();
        self.insert_or(COUNTS, &docs, |s, i| {
            let c = &counts[i];
            let key = doc! {"id": c.id1, "link_type": c.link_type};
            s.update(COUNTS, &key, &doc_of(c), true)?;
            Ok(())
        })
    }

    fn add_link(&mut self, link: &Link) -> anyhow::Result<bool> {
        model::add_link(self, link)
    }

    fn delete_link(&mut self, id1: i64, link_type: i64, id2: i64) -> anyhow::Result<bool> {
        model::delete_link(self, id1, link_type, id2, super::now_ms())
    }

    fn update_link(&mut self, link: &Link) -> anyhow::Result<bool> {
        model::update_link(self, link)
    }

    fn count_links(&mut self, id1: i64, link_type: i64) -> anyhow::Result<i64> {
        let (key, only) = (
            doc! {"id": id1, "link_type": link_type},
            doc! {"count": 1, "_id": 0},
        );
        let mut n = 0;
        let find = Find::new(&key).project(&only).limit(1);
        self.session.find(COUNTS, find, &mut |d| {
            n = d.get_i64("count").unwrap_or(0);
            false
        })?;
        Ok(n)
    }

    fn multiget_links(&mut self, id1: i64, link_type: i64, id2s: &[i64]) -> anyhow::Result<u64> {
        let filter = doc! {"link_type": link_type, "id1": id1, "id2": {"$in": id2s}};
        self.session.find(LINKS, Find::new(&filter), &mut |_| true)
    }

    fn get_link_list(&mut self, page: &ListPage) -> anyhow::Result<(i64, Option<i64>)> {
        let filter = doc! {
            "id1": page.id1, "link_type": page.link_type, "visibility": VISIBLE,
            "time": {"$gte": 0_i64, "$lte": page.max_time},
        };
        let newest_first = doc! {"time": -1};
        let find = Find::new(&filter)
            .sort(&newest_first)
            .skip(page.offset.max(0) as u64)
            .limit(page.limit)
            .hint(&self.id1_type);
        let mut oldest = None;
        let found = self.session.find(LINKS, find, &mut |d| {
            oldest = d.get_i64("time").ok();
            true
        })? as i64;
        // A full page: the history cache keeps its oldest (last) link's time.
        Ok((found, oldest.filter(|_| found == page.limit)))
    }

    fn add_node(&mut self, node: &Node) -> anyhow::Result<Option<i64>> {
        Ok(self.add_nodes(std::slice::from_ref(node))?.first().copied())
    }

    fn update_node(&mut self, node: &Node) -> anyhow::Result<bool> {
        let key = doc! {"_id": node.id, "type": node.node_type};
        let set =
            doc! {"$set": {"version": node.version, "time": node.time, "data": bin(&node.data)}};
        Ok(self.update(NODES, &key, &set, false)? == 1)
    }

    fn delete_node(&mut self, node_type: i64, id: i64) -> anyhow::Result<bool> {
        let key = doc! {"_id": id, "type": node_type};
        Ok(self.session.delete(NODES, &key, false)? == 1)
    }

    fn get_node(&mut self, node_type: i64, id: i64) -> anyhow::Result<Option<usize>> {
        let key = doc! {"_id": id, "type": node_type};
        let mut bytes = None;
        self.session
            .find(NODES, Find::new(&key).limit(1), &mut |d| {
                bytes = Some(size(d) as usize);
                false
            })?;
        Ok(bytes)
    }

    fn check_counts(&mut self) -> anyhow::Result<(u64, u64)> {
        let mut counts: HashMap<(i64, i64), i64> = HashMap::new();
        self.session.find(COUNTS, Find::new(&doc! {}), &mut |d| {
            let (id, t) = (d.get_i64("id"), d.get_i64("link_type"));
            if let (Ok(id), Ok(t)) = (id, t) {
                counts.insert((id, t), d.get_i64("count").unwrap_or(-1));
            }
            true
        })?;
        let visible = [
            doc! {"$match": {"visibility": VISIBLE}},
            doc! {"$group": {"_id": {"id1": "$id1", "t": "$link_type"}, "n": {"$sum": 1_i64}}},
        ];
        let (mut wrong, mut uncounted) = (0u64, 0u64);
        let rows = counts.len() as u64;
        self.session.aggregate(LINKS, &visible, &mut |d| {
            let group = d.get_document("_id").ok();
            let key = group.and_then(|g| Some((g.get_i64("id1").ok()?, g.get_i64("t").ok()?)));
            let n = d.get_i64("n").or_else(|_| d.get_i32("n").map(i64::from));
            match (key, n) {
                (Some(key), Ok(n)) => match counts.remove(&key) {
                    Some(c) if c != n => wrong += 1,
                    Some(_) => {}
                    None => uncounted += 1,
                },
                _ => wrong += 1,
            }
            true
        })?;
        // Count documents with no visible link left must say 0.
        wrong += counts.values().filter(|&&c| c != 0).count() as u64;
        Ok((wrong + uncounted, rows + uncounted))
    }

    fn counts_may_drift(&self) -> bool {
        !self.transactions
    }
}
