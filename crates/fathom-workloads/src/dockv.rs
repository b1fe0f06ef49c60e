//! Keys and values on a document server, as a kv session: one collection (`kv`) keyed by
//! `_id`, the key as its hex string (which sorts as the bytes do, and which FerretDB hands to
//! PostgreSQL where a binary `_id` would be filtered document by document) and the value as
//! BSON binary (`{_id: "0000…", v: BinData(value)}`), so the dbbench sequence runs on the
//! document family as it does on every kv engine. A put is
//! an upserting `update`, a get a `find` by `_id`, a scan a `find` on a range of `_id` sorted
//! by it, a transaction the server's own (where it has them).

use fathom_api::doc::bson::{doc, spec::BinarySubtype, Binary, Bson, Document, RawDocument};
use fathom_api::doc::{DocSession, DuplicateKey, Find, Update};
use fathom_api::kv::{
    apply, fill, BatchOp, Direction, KvSession, KvTxn, Seek, TxnBody, TxnEnd, Visit,
};

/// The collection the kv mapping keeps its keys in.
pub const COLLECTION: &str = "kv";

fn bin(bytes: &[u8]) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Generic,
        bytes: bytes.to_vec(),
    })
}

/// A key as its `_id`: lowercase hex, two digits a byte.
fn id(key: &[u8]) -> Bson {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * key.len());
    for b in key {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    Bson::String(s)
}

/// The key an `_id` holds.
fn key_of(id: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16);
    id.as_bytes()
        .chunks(2)
        .map(|p| match p {
            [h, l] => Some((digit(*h)? * 16 + digit(*l)?) as u8),
            _ => None,
        })
        .collect()
}

fn by_id(key: &[u8]) -> Document {
    doc! {"_id": id(key)}
}

/// The key and value of a stored document (a document of another shape has neither).
fn entry(d: &RawDocument) -> Option<(Vec<u8>, &[u8])> {
    let key = key_of(d.get_str("_id").ok()?)?;
    let value = d.get_binary("v").ok()?.bytes;
    Some((key, value))
}

/// A kv session over a document session.
pub struct DocKv<'e> {
    session: Box<dyn DocSession + 'e>,
    /// Whether the server has multi-document transactions (FerretDB 1.x has none).
    transactions: bool,
}

impl<'e> DocKv<'e> {
    pub fn new(session: Box<dyn DocSession + 'e>, transactions: bool) -> DocKv<'e> {
        DocKv {
            session,
            transactions,
        }
    }
}

fn get(s: &mut dyn DocSession, key: &[u8]) -> anyhow::Result<Option<usize>> {
    let filter = by_id(key);
    let mut len = None;
    s.find(COLLECTION, Find::new(&filter).limit(1), &mut |d| {
        len = entry(d).map(|(_, v)| v.len());
        false
    })?;
    Ok(len)
}

/// Reads a key's value into `out` with one `find` by `_id`; false when it is absent.
fn read(s: &mut dyn DocSession, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
    let filter = by_id(key);
    let mut found = false;
    s.find(COLLECTION, Find::new(&filter).limit(1), &mut |d| {
        found = entry(d).is_some_and(|(_, v)| fill(out, v));
        false
    })?;
    Ok(found)
}

fn put(s: &mut dyn DocSession, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
    let filter = by_id(key);
    let set = doc! {"$set": {"v": bin(value)}};
    s.update(
        COLLECTION,
        Update {
            filter: &filter,
            update: &set,
            upsert: true,
            many: false,
        },
    )?;
    Ok(())
}

fn delete(s: &mut dyn DocSession, key: &[u8]) -> anyhow::Result<()> {
    s.delete(COLLECTION, &by_id(key), false).map(|_| ())
}

fn scan(s: &mut dyn DocSession, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
    // A PrevFromSeek scan starts at the first key at or after the start, then goes back: the
    // same keys as a reverse scan from the start, but with that first key, so its bound is
    // the first key at or after the start.
    let start = id(seek.start);
    let (filter, sort) = match seek.direction {
        Direction::Forward => (doc! {"_id": {"$gte": start}}, doc! {"_id": 1}),
        Direction::Reverse => (doc! {"_id": {"$lte": start}}, doc! {"_id": -1}),
        Direction::PrevFromSeek => {
            let mut first = None;
            let from = doc! {"_id": {"$gte": start.clone()}};
            let sort = doc! {"_id": 1};
            s.find(
                COLLECTION,
                Find::new(&from).sort(&sort).limit(1),
                &mut |d| {
                    first = d.get_str("_id").ok().map(|k| Bson::String(k.to_string()));
                    false
                },
            )?;
            let bound = first.unwrap_or(start);
            (doc! {"_id": {"$lte": bound}}, doc! {"_id": -1})
        }
    };
    let mut seen = 0;
    let find = Find::new(&filter).sort(&sort).limit(seek.limit as i64);
    s.find(COLLECTION, find, &mut |d| match entry(d) {
        Some((k, v)) => {
            seen += 1;
            visit(&k, v)
        }
        None => true,
    })?;
    Ok(seen)
}

impl KvSession for DocKv<'_> {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        get(self.session.as_mut(), key)
    }
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        read(self.session.as_mut(), key, out)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        put(self.session.as_mut(), key, value)
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        delete(self.session.as_mut(), key)
    }
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        scan(self.session.as_mut(), seek, visit)
    }
    /// A batch of puts alone is one ordered `insert` of their documents (one round trip: the
    /// loads write new keys); a key already there, or a delete among them, makes it the puts
    /// and deletes one after another, in a transaction where the server has them.
    fn write_batch(&mut self, ops: &[BatchOp<'_>]) -> anyhow::Result<()> {
        let docs: Option<Vec<Document>> = (ops.iter())
            .map(|op| match op {
                BatchOp::Put(k, v) => Some(doc! {"_id": id(k), "v": bin(v)}),
                BatchOp::Delete(_) => None,
            })
            .collect();
        if let Some(docs) = docs {
            match self.session.insert(COLLECTION, &docs, true) {
                Err(e) if e.downcast_ref::<DuplicateKey>().is_some() => {}
                done => return done.map(|_| ()),
            }
        }
        self.transaction(&mut |t| apply(t, ops)).map(|_| ())
    }

    /// The server's transaction; on a server without them the body's operations one after
    /// another, and a rollback after a write an error (nothing can undo it).
    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        if !self.transactions {
            let mut alone = Alone {
                session: self.session.as_mut(),
                wrote: false,
            };
            let ended = body(&mut alone)?;
            if ended == TxnEnd::Rollback && alone.wrote {
                anyhow::bail!(
                    "a transaction rolled back after writing, on a document server without \
                     transactions: its writes stay"
                );
            }
            return Ok(ended);
        }
        self.session.begin()?;
        let ended = body(&mut InTxn(self.session.as_mut()));
        match ended {
            Ok(TxnEnd::Commit) => self.session.commit().map(|_| TxnEnd::Commit),
            Ok(TxnEnd::Rollback) => self.session.abort().map(|_| TxnEnd::Rollback),
            Err(e) => {
                let _ = self.session.abort();
                Err(e)
            }
        }
    }
}

/// The session inside its transaction.
struct InTxn<'a, 'e>(&'a mut (dyn DocSession + 'e));

impl KvTxn for InTxn<'_, '_> {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        read(self.0, key, out)
    }
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        get(self.0, key)
    }

    /// Its reads take no lock: `read` is the plain read.
    fn read_plain(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.read(key, out)
    }
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        scan(self.0, seek, visit)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        put(self.0, key, value)
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        delete(self.0, key)
    }
}

/// The session running a transaction's operations alone (no transactions on the server),
/// noting whether one wrote.
struct Alone<'a, 'e> {
    session: &'a mut (dyn DocSession + 'e),
    wrote: bool,
}

impl KvTxn for Alone<'_, '_> {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        read(self.session, key, out)
    }
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        get(self.session, key)
    }
    fn read_plain(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        read(self.session, key, out)
    }
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        scan(self.session, seek, visit)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.wrote = true;
        put(self.session, key, value)
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.wrote = true;
        delete(self.session, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_as_their_keys_and_give_them_back() {
        let keys: [&[u8]; 4] = [b"", b"\x00\xff", b"\x01", b"\x01\x00"];
        let ids: Vec<String> = keys
            .iter()
            .map(|k| id(k).as_str().unwrap().to_string())
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        for (k, i) in keys.iter().zip(&ids) {
            assert_eq!(key_of(i).as_deref(), Some(*k));
        }
        assert_eq!(key_of("0g"), None);
        assert_eq!(key_of("abc"), None);
    }
}
