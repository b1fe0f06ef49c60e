//! fathom's own MongoDB client (`client=fathom`): one connection per session, each call one command
//! written straight into an OP_MSG and one write and one read on the socket, as the PostgreSQL and
//! MariaDB clients do. The official driver's sync API hands every command to its tokio runtime and
//! back, which cost fathom about 0.2 ms of CPU per query (docs/performance.md). Commands are those
//! the driver sends for the same calls: `find` (and `getMore` while its cursor lasts), `aggregate`,
//! `distinct`, `insert`, `update`, `findAndModify`, `delete`, and `count_documents`'s
//! `$match`/`$group` pipeline for a count. No transactions, logins or TLS: where those are needed
//! the engine uses the driver. Unlike the driver it sends no implicit session id (`lsid`) with each
//! command: a server without sessions in use keeps none.

use super::wire::{as_f64, BsonOut, MsgConn, ServerError, WireError};
use crate::netbuf::Endpoint;
use fathom_api::doc::bson::{doc, Bson, Document, RawDocument};
use fathom_api::doc::{Count, DocSession, DocVisit, DuplicateKey, Find, Modify, Update, Updated};
use fathom_api::retry::EngineError;
use std::ops::Range;

const DUPLICATE_KEY: i32 = 11000;
const WRITE_CONFLICT: i32 = 112;

/// How every session's commands are sent: the database, and the concerns the settings or
/// the URL give (sent with every write, or every read).
#[derive(Clone, Debug)]
pub struct LeanConfig {
    pub endpoint: Endpoint,
    pub db: String,
    pub write_concern: Option<Document>,
    pub read_concern: Option<Document>,
}

pub struct LeanSession<'e> {
    conn: MsgConn,
    config: &'e LeanConfig,
}

impl<'e> LeanSession<'e> {
    pub fn connect(config: &'e LeanConfig) -> anyhow::Result<LeanSession<'e>> {
        let conn = MsgConn::connect(&config.endpoint).map_err(classify)?;
        Ok(LeanSession { conn, config })
    }

    /// Runs a command on the workload's database; the range of its reply.
    fn run(&mut self, body: impl FnOnce(&mut BsonOut)) -> anyhow::Result<Range<usize>> {
        self.conn.command(&self.config.db, body).map_err(classify)
    }

    /// A write command: `body`'s fields, then the write concern when one is set.
    fn write(&mut self, body: impl FnOnce(&mut BsonOut)) -> anyhow::Result<&RawDocument> {
        let concern = self.config.write_concern.as_ref();
        let at = self.run(|out| {
            body(out);
            if let Some(c) = concern {
                out.document("writeConcern", c);
            }
        })?;
        Ok(self.conn.reply(at))
    }

    /// Visits the documents of a cursor command's reply, then of each `getMore` until the
    /// cursor ends or the visit says stop (the server's cursor is then killed).
    fn read_cursor(
        &mut self,
        coll: &str,
        first: Range<usize>,
        visit: &mut DocVisit,
    ) -> anyhow::Result<u64> {
        let (mut n, mut at, mut batch) = (0u64, first, "firstBatch");
        loop {
            let (id, stopped) = {
                let cursor = self.conn.reply(at).get_document("cursor")?;
                let mut stopped = false;
                for d in cursor.get_array(batch)? {
                    n += 1;
                    if !visit(d?.as_document().ok_or_else(not_a_document)?) {
                        stopped = true;
                        break;
                    }
                }
                (cursor.get_i64("id")?, stopped)
            };
            if id == 0 {
                return Ok(n);
            }
            if stopped {
                self.run(|out| {
                    out.str("killCursors", coll);
                    out.value("cursors", &Bson::Array(vec![Bson::Int64(id)]));
                })
                .map(|_| ())?;
                return Ok(n);
            }
            at = self.run(|out| {
                out.i64("getMore", id);
                out.str("collection", coll);
            })?;
            batch = "nextBatch";
        }
    }
}

fn not_a_document() -> anyhow::Error {
    anyhow::anyhow!("mongodb: a cursor's batch holds a value that is not a document")
}

/// A reply's count field (`n`, `nModified`), in whichever numeric type the server sent.
fn count_of(reply: &RawDocument, key: &str) -> u64 {
    reply
        .get(key)
        .ok()
        .flatten()
        .and_then(as_f64)
        .unwrap_or(0.0) as u64
}

impl DocSession for LeanSession<'_> {
    fn insert(&mut self, coll: &str, docs: &[Document], ordered: bool) -> Count {
        let reply = self.write(|out| {
            out.str("insert", coll);
            out.array("documents", docs, |o, d| o.fields(d));
            out.bool("ordered", ordered);
        })?;
        Ok(count_of(reply, "n"))
    }

    fn find(&mut self, coll: &str, find: Find<'_>, visit: &mut DocVisit) -> Count {
        let first = {
            let rc = self.config.read_concern.as_ref();
            self.run(|out| {
                out.str("find", coll);
                out.document("filter", find.filter);
                if let Some(sort) = find.sort {
                    out.document("sort", sort);
                }
                if let Some(p) = find.projection {
                    out.document("projection", p);
                }
                if let Some(h) = find.hint {
                    out.document("hint", h);
                }
                if find.skip > 0 {
                    out.i64("skip", find.skip as i64);
                }
                if find.limit > 0 {
                    out.i64("limit", find.limit);
                }
                if let Some(c) = rc {
                    out.document("readConcern", c);
                }
            })?
        };
        self.read_cursor(coll, first, visit)
    }

    fn aggregate(&mut self, coll: &str, pipeline: &[Document], visit: &mut DocVisit) -> Count {
        let rc = self.config.read_concern.as_ref();
        let first = self.run(|out| {
            out.str("aggregate", coll);
            out.array("pipeline", pipeline, |o, stage| o.fields(stage));
            out.doc("cursor", |_| {});
            if let Some(c) = rc {
                out.document("readConcern", c);
            }
        })?;
        self.read_cursor(coll, first, visit)
    }

    fn distinct(&mut self, coll: &str, field: &str, filter: &Document) -> Count {
        let rc = self.config.read_concern.as_ref();
        let at = self.run(|out| {
            out.str("distinct", coll);
            out.str("key", field);
            out.document("query", filter);
            if let Some(c) = rc {
                out.document("readConcern", c);
            }
        })?;
        Ok(self.conn.reply(at).get_array("values")?.into_iter().count() as u64)
    }

    fn update(&mut self, coll: &str, u: Update<'_>) -> anyhow::Result<Updated> {
        self.update_each(coll, &[u])
    }

    fn update_each(&mut self, coll: &str, updates: &[Update<'_>]) -> anyhow::Result<Updated> {
        let reply = self.write(|out| {
            out.str("update", coll);
            out.array("updates", updates, |o, u| {
                o.document("q", u.filter);
                o.document("u", u.update);
                o.bool("upsert", u.upsert);
                o.bool("multi", u.many);
            });
            out.bool("ordered", true);
        })?;
        let upserted = reply
            .get_array("upserted")
            .map_or(0, |a| a.into_iter().count() as u64);
        // `n` counts upserted documents too; the driver's matched count leaves them out.
        let n = count_of(reply, "n");
        Ok(Updated {
            matched: n - upserted.min(n),
            modified: count_of(reply, "nModified"),
            upserted: upserted > 0,
        })
    }

    fn find_and_modify(&mut self, coll: &str, m: Modify<'_>, visit: &mut DocVisit) -> Count {
        let reply = self.write(|out| {
            out.str("findAndModify", coll);
            out.document("query", m.filter);
            if let Some(sort) = m.sort {
                out.document("sort", sort);
            }
            match m.update {
                Some(u) => out.document("update", u),
                None => out.bool("remove", true),
            }
            if let Some(p) = m.projection {
                out.document("fields", p);
            }
        })?;
        match reply.get_document("value") {
            Ok(d) => {
                visit(d);
                Ok(1)
            }
            Err(_) => Ok(0),
        }
    }

    fn delete(&mut self, coll: &str, filter: &Document, many: bool) -> Count {
        let reply = self.write(|out| {
            out.str("delete", coll);
            out.array("deletes", [filter], |o, f| {
                o.document("q", f);
                o.i32("limit", if many { 0 } else { 1 });
            });
            out.bool("ordered", true);
        })?;
        Ok(count_of(reply, "n"))
    }

    fn count(&mut self, coll: &str, filter: &Document) -> Count {
        let pipeline = [
            doc! {"$match": filter.clone()},
            doc! {"$group": {"_id": 1, "n": {"$sum": 1}}},
        ];
        let mut n = 0;
        self.aggregate(coll, &pipeline, &mut |d| {
            n = d.get("n").ok().flatten().and_then(as_f64).unwrap_or(0.0) as u64;
            false
        })?;
        Ok(n)
    }

    fn begin(&mut self) -> anyhow::Result<()> {
        anyhow::bail!("mongodb: fathom's own client runs no transactions (the engine uses the driver's where the server has them)")
    }

    fn commit(&mut self) -> anyhow::Result<()> {
        anyhow::bail!("commit without a transaction")
    }

    fn abort(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The wire's errors as every family's: a duplicate key is its own type, a write conflict or
/// a transient transaction error retryable, anything else ends the step with the message.
pub fn classify(e: WireError) -> anyhow::Error {
    let retryable = match &e {
        WireError::Server(ServerError { codes, labels, .. }) => {
            if codes.contains(&DUPLICATE_KEY) {
                return DuplicateKey(e.to_string()).into();
            }
            codes.contains(&WRITE_CONFLICT)
                || labels.iter().any(|l| l == "TransientTransactionError")
        }
        _ => false,
    };
    EngineError::classified(retryable, format!("mongodb: {e}"))
}
