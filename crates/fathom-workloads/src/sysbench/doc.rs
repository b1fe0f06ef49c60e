//! sysbench on the document family, as sysbench-mongodb (tmcallaghan/sysbench-mongodb,
//! `jmongosysbenchload.java`, `jmongosysbenchexecute.java`) sends it: collections `sbtestN` of
//! `{_id, k, c, pad}`, the index `{k: 1}` created before the load, inserts of `batch`
//! documents, and each statement as its `find`, `aggregate`, `distinct`, `update` or
//! `remove`. The events (which statements, which ids) are sysbench 1.0.20's, as on every
//! family. sysbench-mongodb runs no transactions (TokuMX's aside); fathom wraps a write event
//! in one when the server has them, and sends the statements alone when it has not: then two
//! clients can delete and insert the same id at once, and the second insert's duplicate key
//! is taken as the other client's pair having run first.

use super::events::{Events, Query, RangeKind};
use super::load::{self, Next, Plan};
use fathom_api::doc::bson::{doc, Document};
use fathom_api::doc::{duplicate_key, DocEngine, DocSession, Find, Index, Update};
use fathom_api::kind::Done;
use fathom_api::retry::{retryable, retrying};
use fathom_api::step::Client;

fn collection(table: u32) -> String {
    format!("sbtest{table}")
}

/// The index sysbench-mongodb creates on every collection before loading it.
fn k_index() -> Index {
    Index {
        name: "k_1".into(),
        keys: doc! {"k": 1},
        unique: false,
    }
}

/// A client running one test's events.
pub struct DocEvents<'e> {
    session: Box<dyn DocSession + 'e>,
    events: Events,
    names: Vec<String>,
    transactions: bool,
    /// `{c: 1, _id: 0}`, the projection of every read of c.
    only_c: Document,
    by_c: Document,
}

impl<'e> DocEvents<'e> {
    pub fn new(engine: &'e dyn DocEngine, events: Events, tables: u32) -> anyhow::Result<Self> {
        Ok(DocEvents {
            session: engine.session()?,
            events,
            names: (1..=tables).map(collection).collect(),
            transactions: engine.transactions(),
            only_c: doc! {"c": 1, "_id": 0},
            by_c: doc! {"c": 1},
        })
    }

    fn event(&mut self) -> anyhow::Result<u64> {
        let ev = self.events.next_event();
        let s = self.session.as_mut();
        let in_trx = ev.trx && self.transactions;
        if in_trx {
            s.begin()?;
        }
        let mut bytes = 0u64;
        let mut visit = |d: &fathom_api::doc::bson::RawDocument| {
            bytes += d.as_bytes().len() as u64;
            true
        };
        for q in &ev.queries {
            match *q {
                Query::Point { table, id } => {
                    let filter = doc! {"_id": id};
                    let find = Find::new(&filter).project(&self.only_c).limit(1);
                    s.find(&self.names[table as usize - 1], find, &mut visit)?;
                }
                Query::Range(r) => {
                    let coll = &self.names[r.table as usize - 1];
                    let filter = doc! {"_id": {"$gte": r.start, "$lte": r.end}};
                    let find = Find::new(&filter).project(&self.only_c);
                    match r.kind {
                        RangeKind::Simple => s.find(coll, find, &mut visit)?,
                        RangeKind::Order => s.find(coll, find.sort(&self.by_c), &mut visit)?,
                        RangeKind::Distinct => s.distinct(coll, "c", &filter)?,
                        RangeKind::Sum => {
                            let pipeline = [
                                doc! {"$match": filter.clone()},
                                doc! {"$project": {"k": 1, "_id": 0}},
                                doc! {"$group": {"_id": null, "average": {"$sum": "$k"}}},
                            ];
                            s.aggregate(coll, &pipeline, &mut visit)?
                        }
                    };
                }
                Query::Points { table } => {
                    let filter = doc! {"k": {"$in": ev.points.clone()}};
                    s.find(
                        &self.names[table as usize - 1],
                        Find::new(&filter),
                        &mut visit,
                    )?;
                }
                Query::IndexUpdate { table, id } => {
                    let (filter, inc) = (doc! {"_id": id}, doc! {"$inc": {"k": 1}});
                    s.update(&self.names[table as usize - 1], one(&filter, &inc))?;
                }
                Query::NonIndexUpdate { table, id } => {
                    let (filter, set) = (doc! {"_id": id}, doc! {"$set": {"c": &ev.c}});
                    s.update(&self.names[table as usize - 1], one(&filter, &set))?;
                }
                Query::DeleteInsert { table, id, k } => {
                    let coll = &self.names[table as usize - 1];
                    s.delete(coll, &doc! {"_id": id}, false)?;
                    let row = doc! {"_id": id, "k": k, "c": &ev.c, "pad": &ev.pad};
                    match s.insert(coll, &[row], true) {
                        // Without a transaction another client can delete and insert the same
                        // id between the two: its document stands, as if this pair ran first.
                        Err(e) if !in_trx && duplicate_key(&e) => {}
                        done => {
                            done?;
                        }
                    }
                }
            }
        }
        if in_trx {
            s.commit()?;
        }
        Ok(bytes)
    }
}

fn one<'a>(filter: &'a Document, update: &'a Document) -> Update<'a> {
    Update {
        filter,
        update,
        upsert: false,
        many: false,
    }
}

impl Client for DocEvents<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        // A write conflict aborts the event's transaction, which then runs again.
        let (bytes, retries) = retrying(|| {
            self.event().inspect_err(|e| {
                if retryable(e) && self.transactions {
                    let _ = self.session.abort();
                }
            })
        })?;
        Ok(Some(self.events.done(bytes, retries)))
    }
}

/// The prepare step's client: per collection, drops it, creates the index on k (when the
/// tables have it, recorded as sysbench's CREATE INDEX is on the other families), then inserts
/// documents `_id` 1..=table_size in batches.
pub struct DocLoad<'e> {
    engine: &'e dyn DocEngine,
    session: Box<dyn DocSession + 'e>,
    plan: Plan,
}

impl<'e> DocLoad<'e> {
    pub fn new(engine: &'e dyn DocEngine, plan: Plan) -> anyhow::Result<DocLoad<'e>> {
        Ok(DocLoad {
            engine,
            session: engine.session()?,
            plan,
        })
    }
}

impl Client for DocLoad<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        loop {
            match self.plan.next() {
                Next::Finished => return Ok(None),
                Next::TableDone(_) => {}
                Next::Table(t) => {
                    let name = collection(t);
                    self.engine.drop_collections(&[&name])?;
                    if self.plan.create_secondary {
                        self.engine.create_indexes(&name, &[k_index()])?;
                        return Ok(Some(load::index_done()));
                    }
                }
                Next::Batch { table, first, n } => {
                    let rows = &mut self.plan.rows;
                    let docs: Vec<Document> = (0..n)
                        .map(|i| {
                            let k = rows.next_row();
                            doc! {"_id": first + i, "k": k, "c": &rows.c, "pad": &rows.pad}
                        })
                        .collect();
                    self.session.insert(&collection(table), &docs, true)?;
                    return Ok(Some(load::rows_done(n)));
                }
            }
        }
    }
}
