//! A declared workload's operations on a document server, as YCSB's MongoDB binding runs them:
//! a record is a document `{_id: key, field0: BinData, ...}` in the table's collection; read is
//! a `find` by `_id` (projected to one field unless all are read), update a `$set` of the new
//! fields, insert an `insert`, scan a `find` from the key on sorted by `_id` with the scan
//! length as its limit, delete a `delete` by `_id`.

use super::ops::{Carry, Core, Op};
use super::YcsbKind;
use fathom_api::doc::bson::{doc, spec::BinarySubtype, Binary, Bson, Document};
use fathom_api::doc::{DocSession, Find, Update};
use fathom_api::kind::Done;

pub struct DocStore<'e> {
    session: Box<dyn DocSession + 'e>,
    collection: String,
    bytes: Vec<u8>,
}

impl<'e> DocStore<'e> {
    pub fn new(session: Box<dyn DocSession + 'e>, collection: &str) -> DocStore<'e> {
        DocStore {
            session,
            collection: collection.to_string(),
            bytes: Vec::new(),
        }
    }

    /// Fresh bytes for a field, as BSON binary (what the binding's `toArray()` stores).
    fn value(&mut self, core: &mut Core) -> Bson {
        core.fresh(&mut self.bytes);
        Bson::Binary(Binary {
            subtype: BinarySubtype::Generic,
            bytes: self.bytes.clone(),
        })
    }

    /// Finds by `filter`, projected to `field` unless it is `None`, sorted by `_id` when
    /// `sorted`, at most `limit` documents: how many came back and their bytes.
    fn find(
        &mut self,
        core: &Core,
        filter: &Document,
        field: Option<usize>,
        sorted: bool,
        limit: i64,
    ) -> anyhow::Result<(u64, u64)> {
        let projection = field.map(|f| doc! { core.fields.names[f].as_str(): 1 });
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
    fn update(&mut self, core: &mut Core, field: Option<usize>) -> anyhow::Result<u64> {
        let mut set = Document::new();
        let which: Vec<usize> = match field {
            Some(f) => vec![f],
            None => (0..core.fields.names.len()).collect(),
        };
        for f in which {
            let v = self.value(core);
            set.insert(core.fields.names[f].clone(), v);
        }
        let filter = doc! { "_id": core.key_text()? };
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
}

impl Carry for DocStore<'_> {
    fn carry_out(&mut self, core: &mut Core, op: Op) -> anyhow::Result<Done> {
        let mut done = Done::of(op.kind);
        let by_key = doc! { "_id": core.key_text()? };
        match op.kind {
            YcsbKind::Load | YcsbKind::Insert => {
                let mut record = by_key;
                for f in 0..core.fields.names.len() {
                    let v = self.value(core);
                    record.insert(core.fields.names[f].clone(), v);
                }
                done.rows = self.session.insert(&self.collection, &[record], true)?;
            }
            YcsbKind::Read | YcsbKind::ReadModifyWrite => {
                (done.rows, done.bytes) = self.find(core, &by_key, op.read_field, false, 1)?;
                if op.kind == YcsbKind::ReadModifyWrite {
                    self.update(core, op.field)?;
                }
            }
            YcsbKind::Update => done.rows = self.update(core, op.field)?,
            YcsbKind::Scan => {
                let from = doc! { "_id": { "$gte": core.key_text()? } };
                let n = op.scan_length as i64;
                (done.rows, done.bytes) = self.find(core, &from, op.read_field, true, n)?;
            }
            YcsbKind::Delete => {
                done.rows = self.session.delete(&self.collection, &by_key, false)?;
            }
        }
        Ok(done)
    }
}
