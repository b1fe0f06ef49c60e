//! MongoDB's wire protocol at the message level, for fathom's own client: each command written
//! as one OP_MSG into one reused buffer (BSON encoded in place, no document built per command)
//! and sent in one write; the reply read into the connection's one reused buffer and looked at
//! where it lies, as a raw BSON document.

use crate::netbuf::{Endpoint, NetBuf};
use fathom_api::doc::bson::{self, Bson, Document, RawDocument};

use std::ops::Range;

/// OP_MSG, the only opcode of servers since MongoDB 3.6 (wire version 6).
const OP_MSG: i32 = 2013;
/// OP_MSG flag: a CRC-32C ends the message.
const CHECKSUM_PRESENT: u32 = 1;
/// OP_MSG flag: another reply follows without a request (exhaust cursors; never asked for).
const MORE_TO_COME: u32 = 2;
/// Larger than any reply a server sends (48 MB, its maxMessageSizeBytes).
const MAX_MESSAGE: usize = 48_000_000;

/// A server's error answer: `ok: 0`, a failed write (`writeErrors`) or a write concern that
/// was not met.
#[derive(Debug)]
pub struct ServerError {
    /// Every error code in the reply (one per failed write of an unordered insert).
    pub codes: Vec<i32>,
    pub code_name: String,
    pub message: String,
    pub labels: Vec<String>,
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = self.codes.first().copied().unwrap_or(0);
        write!(
            f,
            "Command failed ({}, code {code}): {}",
            self.code_name, self.message
        )
    }
}

/// A server's error answer, or a failure of the connection or the protocol.
pub type WireError = crate::netbuf::WireError<ServerError>;
pub type WireResult<T> = Result<T, WireError>;
use crate::netbuf::protocol;

/// One connection: its socket and read buffer, the reused write buffer, the last request id.
pub struct MsgConn {
    net: NetBuf,
    out: Vec<u8>,
    request: i32,
}

impl MsgConn {
    pub fn connect(endpoint: &Endpoint) -> WireResult<MsgConn> {
        Ok(MsgConn {
            net: NetBuf::connect(endpoint)?,
            out: Vec::with_capacity(16 * 1024),
            request: 0,
        })
    }

    /// Sends one command, its body written by `body` into a document already opened (the
    /// command's name must come first; `$db` is added after), and reads the reply. The
    /// reply's document is `self.reply(range)` until the next command. A reply with `ok: 0`,
    /// write errors or a write concern error is an error.
    pub fn command(
        &mut self,
        db: &str,
        body: impl FnOnce(&mut BsonOut),
    ) -> WireResult<Range<usize>> {
        self.request = self.request.wrapping_add(1);
        self.out.clear();
        // Header: length (patched below), request id, response to, opcode; then the flags and
        // one body section (kind 0).
        self.out.extend_from_slice(&[0; 4]);
        self.out.extend_from_slice(&self.request.to_le_bytes());
        self.out.extend_from_slice(&0i32.to_le_bytes());
        self.out.extend_from_slice(&OP_MSG.to_le_bytes());
        self.out.extend_from_slice(&0u32.to_le_bytes());
        self.out.push(0);
        let mut doc = BsonOut::open(&mut self.out);
        body(&mut doc);
        doc.str("$db", db);
        doc.close();
        let len = self.out.len() as i32;
        self.out[..4].copy_from_slice(&len.to_le_bytes());
        self.net.write_all(&self.out)?;
        let range = self.read_reply()?;
        check(self.reply(range.clone()))?;
        Ok(range)
    }

    /// The reply document `command` returned the range of.
    pub fn reply(&self, range: Range<usize>) -> &RawDocument {
        RawDocument::from_bytes(self.net.at(range)).expect("checked when read")
    }

    /// Reads one OP_MSG answering the last request; the range of its body document.
    fn read_reply(&mut self) -> WireResult<Range<usize>> {
        self.net.fill(16)?;
        let head = self.net.unread();
        let word = |at: usize| i32::from_le_bytes(head[at..at + 4].try_into().expect("4 bytes"));
        let (len, responds_to, opcode) = (word(0), word(8), word(12));
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| (21..=MAX_MESSAGE).contains(&l));
        let Some(len) = len else {
            return protocol(format!("a message length of {}", word(0)));
        };
        self.net.fill(len)?;
        let whole = self.net.take(len);
        if opcode != OP_MSG || responds_to != self.request {
            return protocol(format!(
                "opcode {opcode} answering request {responds_to}, expected OP_MSG answering {}",
                self.request
            ));
        }
        let msg = self.net.at(whole.clone());
        let flags = u32::from_le_bytes(msg[16..20].try_into().expect("4 bytes"));
        if flags & MORE_TO_COME != 0 {
            return protocol("moreToCome, which fathom never asks for");
        }
        let end = whole.end - if flags & CHECKSUM_PRESENT != 0 { 4 } else { 0 };
        if msg[20] != 0 {
            return protocol(format!("a first section of kind {}", msg[20]));
        }
        let body = whole.start + 21..end;
        let doc_len = self
            .net
            .at(body.clone())
            .get(..4)
            .map(|b| i32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
        let body = match doc_len {
            Some(n) if n <= body.len() => body.start..body.start + n,
            _ => return protocol("a body document longer than its message"),
        };
        if let Err(e) = RawDocument::from_bytes(self.net.at(body.clone())) {
            return protocol(format!("a body that is not BSON: {e}"));
        }
        Ok(body)
    }
}

/// Fails on a reply that says the command, a write or its write concern failed.
fn check(reply: &RawDocument) -> WireResult<()> {
    let number = |key: &str| reply.get(key).ok().flatten().and_then(as_f64);
    let text = |d: &RawDocument, key: &str| d.get_str(key).unwrap_or("").to_string();
    if number("ok") != Some(1.0) {
        let labels = reply
            .get_array("errorLabels")
            .map(|a| a.into_iter().flatten().filter_map(|l| l.as_str()))
            .into_iter()
            .flatten()
            .map(str::to_string)
            .collect();
        return Err(WireError::Server(ServerError {
            codes: vec![number("code").unwrap_or(0.0) as i32],
            code_name: text(reply, "codeName"),
            message: text(reply, "errmsg"),
            labels,
        }));
    }
    let failed: Vec<&RawDocument> = match reply.get_array("writeErrors") {
        Ok(a) => a
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_document())
            .collect(),
        Err(_) => Vec::new(),
    };
    let concern = reply.get_document("writeConcernError").ok();
    let Some(first) = failed.first().copied().or(concern) else {
        return Ok(());
    };
    let code = |d: &RawDocument| d.get("code").ok().flatten().and_then(as_f64).unwrap_or(0.0);
    Err(WireError::Server(ServerError {
        codes: failed
            .iter()
            .chain(concern.iter())
            .map(|d| code(d) as i32)
            .collect(),
        code_name: text(first, "codeName"),
        message: text(first, "errmsg"),
        labels: Vec::new(),
    }))
}

/// A number in any of BSON's numeric types (`ok`, `n` and codes come as any of them).
pub fn as_f64(v: bson::RawBsonRef<'_>) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_i32().map(f64::from))
        .or_else(|| v.as_i64().map(|n| n as f64))
        .or_else(|| v.as_bool().map(|b| if b { 1.0 } else { 0.0 }))
}

/// A BSON document being written at the end of a buffer: elements appended, its length
/// patched when it is closed.
pub struct BsonOut<'b> {
    buf: &'b mut Vec<u8>,
    start: usize,
}

impl<'b> BsonOut<'b> {
    pub fn open(buf: &'b mut Vec<u8>) -> BsonOut<'b> {
        let start = buf.len();
        buf.extend_from_slice(&[0; 4]);
        BsonOut { buf, start }
    }

    pub fn close(self) {
        self.buf.push(0);
        let len = (self.buf.len() - self.start) as i32;
        self.buf[self.start..self.start + 4].copy_from_slice(&len.to_le_bytes());
    }

    fn key(&mut self, kind: u8, name: &str) {
        self.buf.push(kind);
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(0);
    }

    pub fn str(&mut self, name: &str, v: &str) {
        self.key(0x02, name);
        self.buf
            .extend_from_slice(&(v.len() as i32 + 1).to_le_bytes());
        self.buf.extend_from_slice(v.as_bytes());
        self.buf.push(0);
    }

    pub fn i64(&mut self, name: &str, v: i64) {
        self.key(0x12, name);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn i32(&mut self, name: &str, v: i32) {
        self.key(0x10, name);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn bool(&mut self, name: &str, v: bool) {
        self.key(0x08, name);
        self.buf.push(u8::from(v));
    }

    /// A sub-document written by `body`.
    pub fn doc(&mut self, name: &str, body: impl FnOnce(&mut BsonOut)) {
        self.key(0x03, name);
        let mut d = BsonOut::open(self.buf);
        body(&mut d);
        d.close();
    }

    /// An array of sub-documents, each written by `body` from one item.
    pub fn array<T>(
        &mut self,
        name: &str,
        items: impl IntoIterator<Item = T>,
        mut body: impl FnMut(&mut BsonOut, T),
    ) {
        self.key(0x04, name);
        let mut a = BsonOut::open(self.buf);
        for (i, item) in items.into_iter().enumerate() {
            a.key(0x03, itoa::Buffer::new().format(i));
            let mut d = BsonOut::open(a.buf);
            body(&mut d, item);
            d.close();
        }
        a.close();
    }

    /// A document's fields, in order, into this one.
    pub fn fields(&mut self, d: &Document) {
        for (k, v) in d {
            self.value(k, v);
        }
    }

    /// A document as a sub-document.
    pub fn document(&mut self, name: &str, d: &Document) {
        self.doc(name, |out| out.fields(d));
    }

    /// One value of any type: the common ones encoded here, the rest by the bson crate.
    pub fn value(&mut self, name: &str, v: &Bson) {
        match v {
            Bson::Double(x) => {
                self.key(0x01, name);
                self.buf.extend_from_slice(&x.to_le_bytes());
            }
            Bson::String(s) => self.str(name, s),
            Bson::Document(d) => self.document(name, d),
            Bson::Array(items) => {
                self.key(0x04, name);
                let mut a = BsonOut::open(self.buf);
                for (i, item) in items.iter().enumerate() {
                    a.value(itoa::Buffer::new().format(i), item);
                }
                a.close();
            }
            Bson::Binary(b) => {
                self.key(0x05, name);
                self.buf
                    .extend_from_slice(&(b.bytes.len() as i32).to_le_bytes());
                self.buf.push(u8::from(b.subtype));
                self.buf.extend_from_slice(&b.bytes);
            }
            Bson::Boolean(x) => self.bool(name, *x),
            Bson::Null => self.key(0x0A, name),
            Bson::Int32(x) => self.i32(name, *x),
            Bson::Int64(x) => self.i64(name, *x),
            Bson::DateTime(t) => {
                self.key(0x09, name);
                self.buf
                    .extend_from_slice(&t.timestamp_millis().to_le_bytes());
            }
            Bson::ObjectId(id) => {
                self.key(0x07, name);
                self.buf.extend_from_slice(&id.bytes());
            }
            other => self.by_crate(name, other),
        }
    }

    /// A value of a type not encoded here: the bson crate encodes a one-field document holding
    /// it, whose element is copied.
    fn by_crate(&mut self, name: &str, v: &Bson) {
        let mut one = Document::new();
        one.insert(name, v.clone());
        let bytes = bson::to_vec(&one).expect("a BSON value encodes");
        // The document's length (4) before its one element, its terminating NUL after.
        self.buf.extend_from_slice(&bytes[4..bytes.len() - 1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_api::doc::bson::{doc, spec::BinarySubtype, Binary, DateTime, Decimal128};

    /// What BsonOut writes is what the bson crate writes, for every type the workloads send.
    #[test]
    fn encodes_as_the_bson_crate() {
        let d = doc! {
            "s": "text", "i": 7, "l": 1_i64 << 40, "f": 2.5, "b": true, "n": Bson::Null,
            "bin": Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2, 3] },
            "t": DateTime::from_millis(1_700_000_000_000),
            "o": bson::oid::ObjectId::from_bytes([7; 12]),
            "d": { "$gte": 3, "$lte": [1, "x", { "y": 0 }] },
            "a": (0..12).map(Bson::from).collect::<Vec<_>>(),
            "dec": Decimal128::from_bytes([1; 16]),
        };
        let mut buf = Vec::new();
        let mut out = BsonOut::open(&mut buf);
        out.fields(&d);
        out.close();
        assert_eq!(buf, bson::to_vec(&d).unwrap());
    }

    #[test]
    fn arrays_of_documents_are_keyed_by_position() {
        let docs = [doc! {"a": 1}, doc! {"b": 2}];
        let mut buf = Vec::new();
        let mut out = BsonOut::open(&mut buf);
        out.array("documents", &docs, |o, d| o.fields(d));
        out.close();
        assert_eq!(
            buf,
            bson::to_vec(&doc! {"documents": [{"a": 1}, {"b": 2}]}).unwrap()
        );
    }

    fn raw(d: Document) -> bson::RawDocumentBuf {
        bson::RawDocumentBuf::from_document(&d).unwrap()
    }

    #[test]
    fn failures_in_a_reply_are_errors() {
        assert!(check(&raw(doc! {"ok": 1.0, "n": 1})).is_ok());
        let e = check(&raw(
            doc! {"ok": 0.0, "code": 59, "codeName": "CommandNotFound",
            "errmsg": "no such command", "errorLabels": ["TransientTransactionError"]},
        ))
        .unwrap_err();
        match e {
            WireError::Server(ServerError { codes, labels, .. }) => {
                assert_eq!(codes, [59]);
                assert_eq!(labels, ["TransientTransactionError"]);
            }
            other => panic!("{other}"),
        }
        let e = check(&raw(doc! {"ok": 1, "n": 1, "writeErrors": [
        {"index": 1, "code": 11000, "errmsg": "E11000 duplicate key"},
        {"index": 2, "code": 11000, "errmsg": "E11000 duplicate key"}]}))
        .unwrap_err();
        assert!(matches!(e, WireError::Server(ref s) if s.codes == [11000, 11000]));
        assert!(e.to_string().contains("E11000"), "{e}");
        let e = check(&raw(
            doc! {"ok": 1, "writeConcernError": {"code": 64, "errmsg": "waiting"}},
        ));
        assert!(matches!(e, Err(WireError::Server(s)) if s.codes == [64]));
    }
}
