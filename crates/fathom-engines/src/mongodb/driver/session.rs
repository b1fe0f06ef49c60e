//! One client's session on a MongoDB-protocol server: each call one command through the
//! driver's pool (its implicit session), or, between `begin` and `commit`, through the
//! client's explicit session in its transaction. Documents read are visited as the server
//! sent them (raw BSON), never decoded into maps.

use super::errors::classify;
use fathom_api::doc::bson::{doc, Bson, Document, RawDocumentBuf};
use fathom_api::doc::{Count, DocSession, DocVisit, Find, Modify, Update, Updated};
use mongodb::options::{FindOneAndDeleteOptions, FindOneAndUpdateOptions, FindOptions, Hint};
use mongodb::sync::{Client, ClientSession, Collection, Database};

pub struct MongoSession<'e> {
    client: &'e Client,
    db: Database,
    /// The explicit session, started at the first transaction and kept for the next.
    session: Option<ClientSession>,
    in_txn: bool,
}

impl<'e> MongoSession<'e> {
    pub fn new(client: &'e Client, db: Database) -> MongoSession<'e> {
        MongoSession {
            client,
            db,
            session: None,
            in_txn: false,
        }
    }

    fn coll(&self, name: &str) -> Collection<Document> {
        self.db.collection(name)
    }

    fn raw(&self, name: &str) -> Collection<RawDocumentBuf> {
        self.db.collection(name)
    }

    /// The session of the transaction in progress, if one is.
    fn txn(&mut self) -> Option<&mut ClientSession> {
        if self.in_txn {
            self.session.as_mut()
        } else {
            None
        }
    }
}

/// Runs a driver action in the transaction when one is in progress, else on its own.
macro_rules! run {
    ($self:ident, $action:expr) => {{
        let action = $action;
        match $self.txn() {
            Some(s) => action.session(s).run(),
            None => action.run(),
        }
        .map_err(classify)
    }};
}

/// Runs a driver action that returns a cursor (in the transaction when one is in progress)
/// and visits its documents, raw, until the cursor ends or the visit says stop; the count.
macro_rules! read_all {
    ($self:ident, $action:expr, $visit:ident) => {{
        let action = $action;
        let mut n = 0u64;
        match $self.txn() {
            Some(s) => {
                let mut cursor = action.session(&mut *s).run().map_err(classify)?;
                while cursor.advance(s).map_err(classify)? {
                    n += 1;
                    if !$visit(cursor.current()) {
                        break;
                    }
                }
            }
            None => {
                let mut cursor = action.run().map_err(classify)?;
                while cursor.advance().map_err(classify)? {
                    n += 1;
                    if !$visit(cursor.current()) {
                        break;
                    }
                }
            }
        }
        Ok(n)
    }};
}

fn find_options(find: &Find<'_>) -> FindOptions {
    let mut o = FindOptions::default();
    o.projection = find.projection.cloned();
    o.sort = find.sort.cloned();
    o.skip = (find.skip > 0).then_some(find.skip);
    o.limit = (find.limit > 0).then_some(find.limit);
    o.hint = find.hint.map(|h| Hint::Keys(h.clone()));
    o
}

impl DocSession for MongoSession<'_> {
    fn insert(&mut self, coll: &str, docs: &[Document], ordered: bool) -> Count {
        let c = self.coll(coll);
        let done = run!(self, c.insert_many(docs).ordered(ordered))?;
        Ok(done.inserted_ids.len() as u64)
    }

    fn find(&mut self, coll: &str, find: Find<'_>, visit: &mut DocVisit) -> Count {
        let c = self.raw(coll);
        let action = c
            .find(find.filter.clone())
            .with_options(find_options(&find));
        read_all!(self, action, visit)
    }

    fn aggregate(&mut self, coll: &str, pipeline: &[Document], visit: &mut DocVisit) -> Count {
        let c = self.coll(coll);
        let action = c.aggregate(pipeline.iter().cloned());
        read_all!(self, action, visit)
    }

    fn distinct(&mut self, coll: &str, field: &str, filter: &Document) -> Count {
        let c = self.coll(coll);
        let values = run!(self, c.distinct(field, filter.clone()))?;
        Ok(values.len() as u64)
    }

    fn update(&mut self, coll: &str, u: Update<'_>) -> anyhow::Result<Updated> {
        let c = self.coll(coll);
        let (filter, update) = (u.filter.clone(), u.update.clone());
        let is_replacement = !update.keys().any(|k| k.starts_with('$'));
        let done = if is_replacement {
            run!(self, c.replace_one(filter, update).upsert(u.upsert))?
        } else if u.many {
            run!(self, c.update_many(filter, update).upsert(u.upsert))?
        } else {
            run!(self, c.update_one(filter, update).upsert(u.upsert))?
        };
        Ok(Updated {
            matched: done.matched_count,
            modified: done.modified_count,
            upserted: done.upserted_id.is_some(),
        })
    }

    /// One `update` command with every statement, run as a command (the driver's own bulk
    /// write needs a server of 8.0 or later).
    fn update_each(&mut self, coll: &str, updates: &[Update<'_>]) -> anyhow::Result<Updated> {
        let statements: Vec<Document> = (updates.iter())
            .map(|u| {
                doc! {"q": u.filter.clone(), "u": u.update.clone(), "upsert": u.upsert,
                "multi": u.many}
            })
            .collect();
        let command = doc! {"update": coll, "updates": statements, "ordered": true};
        let db = self.db.clone();
        let reply = run!(self, db.run_command(command))?;
        let n = reply.get("n").and_then(number).unwrap_or(0);
        let upserted = reply.get_array("upserted").map_or(0, |a| a.len() as u64);
        Ok(Updated {
            matched: n - upserted.min(n),
            modified: reply.get("nModified").and_then(number).unwrap_or(0),
            upserted: upserted > 0,
        })
    }

    fn find_and_modify(&mut self, coll: &str, m: Modify<'_>, visit: &mut DocVisit) -> Count {
        let c = self.raw(coll);
        let filter = m.filter.clone();
        let found = match m.update {
            Some(u) => {
                let mut o = FindOneAndUpdateOptions::default();
                (o.sort, o.projection) = (m.sort.cloned(), m.projection.cloned());
                run!(
                    self,
                    c.find_one_and_update(filter, u.clone()).with_options(o)
                )?
            }
            None => {
                let mut o = FindOneAndDeleteOptions::default();
                (o.sort, o.projection) = (m.sort.cloned(), m.projection.cloned());
                run!(self, c.find_one_and_delete(filter).with_options(o))?
            }
        };
        Ok(match found {
            Some(d) => {
                visit(&d);
                1
            }
            None => 0,
        })
    }

    fn delete(&mut self, coll: &str, filter: &Document, many: bool) -> Count {
        let c = self.coll(coll);
        let done = if many {
            run!(self, c.delete_many(filter.clone()))?
        } else {
            run!(self, c.delete_one(filter.clone()))?
        };
        Ok(done.deleted_count)
    }

    fn count(&mut self, coll: &str, filter: &Document) -> Count {
        let c = self.coll(coll);
        run!(self, c.count_documents(filter.clone()))
    }

    fn begin(&mut self) -> anyhow::Result<()> {
        if self.session.is_none() {
            self.session = Some(self.client.start_session().run().map_err(classify)?);
        }
        let s = self.session.as_mut().expect("started above");
        s.start_transaction().run().map_err(classify)?;
        self.in_txn = true;
        Ok(())
    }

    fn commit(&mut self) -> anyhow::Result<()> {
        self.in_txn = false;
        match self.session.as_mut() {
            Some(s) => s.commit_transaction().run().map_err(classify),
            None => anyhow::bail!("commit without a transaction"),
        }
    }

    fn abort(&mut self) -> anyhow::Result<()> {
        self.in_txn = false;
        match self.session.as_mut() {
            Some(s) => s.abort_transaction().run().map_err(classify),
            None => Ok(()),
        }
    }
}

/// A count in a command's reply, in whichever integer type the server sent it.
fn number(v: &Bson) -> Option<u64> {
    match v {
        Bson::Int32(n) => Some(*n as u64),
        Bson::Int64(n) => Some(*n as u64),
        Bson::Double(n) => Some(*n as u64),
        _ => None,
    }
}
