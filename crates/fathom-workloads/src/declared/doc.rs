//! A declared workload's operations on a document server, as YCSB's MongoDB binding runs them:
//! a record is a document `{_id: key, field0: BinData, ...}` in the table's collection; read is
//! a `find` by `_id` (projected to one field unless all are read), update a `$set` of the new
//! fields, insert an `insert`, scan a `find` from the key on sorted by `_id` with the scan
//! length as its limit, delete a `delete` by `_id`.

use super::ops::{Op, Shared, Work};
use super::record::{random_bytes, Fields, Keys};
use super::YcsbKind;
use fathom_core::doc::bson::{doc, spec::BinarySubtype, Binary, Bson, Document};
use fathom_core::doc::{DocSession, Find, Update};
use fathom_core::driver::{Client, Done};
use rand::rngs::SmallRng;
use std::sync::Arc;

pub struct DocClient<'e> {
    session: Box<dyn DocSession + 'e>,
    collection: String,
    shared: Arc<Shared>,
    keys: Keys,
    fields: Fields,
    rng: SmallRng,
    work: Work,
    key: Vec<u8>,
    /// The key as text (it is ASCII).
    key_text: String,
    bytes: Vec<u8>,
}

impl<'e> DocClient<'e> {
    pub fn new(
        session: Box<dyn DocSession + 'e>,
        collection: &str,
        shared: Arc<Shared>,
        keys: Keys,
        fields: Fields,
        rng: SmallRng,
        work: Work,
    ) -> DocClient<'e> {
        DocClient {
            session,
            collection: collection.to_string(),
            shared,
            keys,
            fields,
            rng,
            work,
            key: Vec::new(),
            key_text: String::new(),
            bytes: Vec::new(),
        }
    }

    /// Fresh bytes for a field, as BSON binary (what the binding's `toArray()` stores).
    fn value(&mut self) -> Bson {
        self.bytes.clear();
        let len = self.fields.length.next(&mut self.rng) as usize;
        random_bytes(&mut self.rng, len, &mut self.bytes);
        Bson::Binary(Binary {
            subtype: BinarySubtype::Generic,
            bytes: self.bytes.clone(),
        })
    }

    /// The projection of one field, or none for all.
    fn projection(&self, field: Option<usize>) -> Option<Document> {
        field.map(|f| doc! { self.fields.names[f].as_str(): 1 })
    }

    /// Finds by `filter`, sorted by `_id` when `sorted`, at most `limit` documents: how many
    /// came back and their bytes.
    fn find(
        &mut self,
        filter: &Document,
        field: Option<usize>,
        sorted: bool,
        limit: i64,
    ) -> anyhow::Result<(u64, u64)> {
        let projection = self.projection(field);
        let sort = doc! { "_id": 1 };
        let mut find = Find::new(filter).limit(limit);
        if let Some(p) = &projection {
            find = find.project(p);
        }
        if sorted {
            find = find.sort(&sort);
        }
        let mut bytes = 0u64;
        let rows = self.session.find(&self.collection, find, &mut |d| {
            bytes += d.as_bytes().len() as u64;
            true
        })?;
        Ok((rows, bytes))
    }

    /// `$set` of new bytes for `field`, or every field; how many documents matched.
    fn update(&mut self, field: Option<usize>) -> anyhow::Result<u64> {
        let mut set = Document::new();
        let which: Vec<usize> = match field {
            Some(f) => vec![f],
            None => (0..self.fields.names.len()).collect(),
        };
        for f in which {
            let v = self.value();
            set.insert(self.fields.names[f].clone(), v);
        }
        let filter = doc! { "_id": self.key_text.as_str() };
        let update = doc! { "$set": set };
        let done = self.session.update(
            &self.collection,
            Update {
                filter: &filter,
                update: &update,
                upsert: false,
                many: false,
            },
        )?;
        Ok(done.matched)
    }

    fn carry_out(&mut self, op: Op) -> anyhow::Result<Done> {
        let mut done = Done::of(op.kind);
        self.keys.key(op.record, &mut self.key);
        self.key_text.clear();
        self.key_text.push_str(std::str::from_utf8(&self.key)?);
        match op.kind {
            YcsbKind::Load | YcsbKind::Insert => {
                let mut record = doc! { "_id": self.key_text.as_str() };
                for f in 0..self.fields.names.len() {
                    let v = self.value();
                    record.insert(self.fields.names[f].clone(), v);
                }
                done.rows = self.session.insert(&self.collection, &[record], true)?;
                if op.kind == YcsbKind::Insert {
                    self.shared.inserted();
                }
            }
            YcsbKind::Read | YcsbKind::ReadModifyWrite => {
                let filter = doc! { "_id": self.key_text.as_str() };
                (done.rows, done.bytes) = self.find(&filter, op.read_field, false, 1)?;
                if op.kind == YcsbKind::ReadModifyWrite {
                    self.update(op.field)?;
                }
            }
            YcsbKind::Update => done.rows = self.update(op.field)?,
            YcsbKind::Scan => {
                let filter = doc! { "_id": { "$gte": self.key_text.as_str() } };
                (done.rows, done.bytes) =
                    self.find(&filter, op.read_field, true, op.scan_length as i64)?;
            }
            YcsbKind::Delete => {
                let filter = doc! { "_id": self.key_text.as_str() };
                done.rows = self.session.delete(&self.collection, &filter, false)?;
            }
        }
        Ok(done)
    }
}

impl Client for DocClient<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let fields = self.fields.names.len();
        match self.work.next(&self.shared, &mut self.rng, fields) {
            Some(op) => self.carry_out(op).map(Some),
            None => Ok(None),
        }
    }
}
