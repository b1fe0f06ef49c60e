//! The insert benchmark on the document family, as iibench.py's mongo mode writes and reads:
//! collection `pi<n>` of documents with its fields (`product` for productid, as iibench.py
//! names it there), a batch as one `insert` of many documents, the secondary indexes by their
//! Mongo names (`pc`, `cpc`, `pdc`), and each range query as a `find` from its parameter with
//! the index's fields projected, sorted by them, limited and hinted. Unlike iibench.py, whose
//! `_id` is the driver's ObjectId (and which has no deletes or point queries on Mongo), `_id`
//! is the transactionid, numbered by fathom as AUTO_INCREMENT would (as on kv engines): so the
//! table can be a queue and the point query reads by it.

use super::clients::Store;
use super::gen::{Batch, Col, Shape, Table};
use fathom_api::doc::bson::{doc, Bson, DateTime, Document, RawDocument};
use fathom_api::doc::{DocEngine, DocSession, Find, Index};
use fathom_api::target::Maintenance;
use std::sync::Arc;

/// A column's field name in iibench.py's mongo documents.
fn field(c: Col) -> &'static str {
    match c {
        Col::Product => "product",
        other => other.name(),
    }
}

/// A secondary index's name on Mongo.
fn index_name(sql_name: &str) -> &str {
    match sql_name {
        "marketsegment" => "pc",
        "registersegment" => "cpc",
        other => other,
    }
}

fn collection(t: u32) -> String {
    format!("pi{t}")
}

pub struct DocStore<'e> {
    engine: &'e dyn DocEngine,
    session: Box<dyn DocSession + 'e>,
    shape: Arc<Shape>,
    docs: Vec<Document>,
    /// Each secondary index's keys (its sort and hint) and its projection, built once.
    ranges: Vec<(Document, Document)>,
}

impl<'e> DocStore<'e> {
    pub fn new(engine: &'e dyn DocEngine, shape: Arc<Shape>) -> anyhow::Result<Self> {
        let ranges = shape
            .indexes
            .iter()
            .map(|ix| {
                let keys: Document = ix
                    .cols
                    .iter()
                    .map(|&c| (field(c).to_string(), Bson::Int32(1)))
                    .collect();
                let mut projection = keys.clone();
                projection.insert("_id", 0);
                (keys, projection)
            })
            .collect();
        Ok(DocStore {
            engine,
            session: engine.session()?,
            shape,
            docs: Vec::new(),
            ranges,
        })
    }
}

fn size(d: &RawDocument) -> u64 {
    d.as_bytes().len() as u64
}

impl Store for DocStore<'_> {
    fn create_table(&mut self, t: u32) -> anyhow::Result<()> {
        self.engine.drop_collections(&[&collection(t)])
    }

    fn insert(&mut self, t: &Table, batch: &Batch) -> anyhow::Result<()> {
        let first = t.claim_insert(batch.len());
        let when = DateTime::from_millis(batch.dateandtime * 1000);
        self.docs.clear();
        for (i, (r, data)) in batch.rows.iter().enumerate() {
            self.docs.push(doc! {
                "_id": first + i as i64,
                "dateandtime": when,
                "cashregisterid": r.cashregisterid,
                "customerid": r.customerid,
                "product": r.productid,
                "price": r.price,
                "data": data.as_str(),
            });
        }
        self.session.insert(&collection(t.n), &self.docs, true)?;
        Ok(())
    }

    fn delete(&mut self, t: u32, from: i64, n: usize) -> anyhow::Result<u64> {
        // Ids are numbered without gaps and claimed in order: the n oldest from `from` are
        // the ids below from + n.
        let range = doc! {"_id": {"$gte": from, "$lt": from + n as i64}};
        self.session.delete(&collection(t), &range, true)
    }

    /// The smallest `_id`, or with `last` the largest.
    fn end_id(&mut self, t: u32, last: bool) -> anyhow::Result<Option<i64>> {
        let (all, only_id) = (doc! {}, doc! {"_id": 1});
        let sort = doc! {"_id": if last { -1 } else { 1 }};
        let mut id = None;
        let find = Find::new(&all).project(&only_id).sort(&sort).limit(1);
        self.session.find(&collection(t), find, &mut |d| {
            id = d.get_i64("_id").ok();
            false
        })?;
        Ok(id)
    }

    fn create_indexes(&mut self, t: u32, positions: &[usize]) -> anyhow::Result<()> {
        let indexes: Vec<Index> = positions
            .iter()
            .map(|&i| Index {
                name: index_name(self.shape.indexes[i].name).to_string(),
                keys: self.ranges[i].0.clone(),
                unique: false,
            })
            .collect();
        self.engine.create_indexes(&collection(t), &indexes)
    }

    fn range_query(&mut self, t: u32, index: usize, from: i64) -> anyhow::Result<u64> {
        let ix = self.shape.indexes[index];
        let (keys, projection) = &self.ranges[index];
        let op = if ix.strict() { "$gt" } else { "$gte" };
        let filter = doc! {field(ix.cols[0]): {op: from}};
        let find = Find::new(&filter)
            .project(projection)
            .sort(keys)
            .limit(self.shape.rows_per_query as i64)
            .hint(keys);
        let mut bytes = 0;
        self.session.find(&collection(t), find, &mut |d| {
            bytes += size(d);
            true
        })?;
        Ok(bytes)
    }

    fn point_query(&mut self, t: u32, ids: &[i64]) -> anyhow::Result<u64> {
        let filter = doc! {"_id": {"$in": ids}};
        let projection = doc! {"_id": 1, "product": 1, "data": 1};
        let mut bytes = 0;
        let find = Find::new(&filter).project(&projection);
        self.session.find(&collection(t), find, &mut |d| {
            bytes += size(d);
            true
        })?;
        Ok(bytes)
    }

    /// Mongo keeps no optimizer statistics to refresh.
    fn analyze(&mut self, _t: u32) -> anyhow::Result<()> {
        Ok(())
    }

    fn maintain(&mut self, action: Maintenance) -> anyhow::Result<()> {
        self.engine.maintain(action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_take_iibench_mongo_names() {
        assert_eq!(index_name("marketsegment"), "pc");
        assert_eq!(index_name("registersegment"), "cpc");
        assert_eq!(index_name("pdc"), "pdc");
        assert_eq!(field(Col::Product), "product");
        assert_eq!(field(Col::Price), "price");
    }
}
