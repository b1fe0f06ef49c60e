//! A client's WiredTiger session and its cursor on the table: point reads and writes,
//! transactions in snapshot isolation, and scans positioned with search_near.

use super::api::{Cur, Sess};
use super::Lib;
use fathom_api::kv::{BatchOp, Direction, KvSession, KvTxn, Seek, TxnBody, TxnEnd, Visit};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;

pub struct Session {
    lib: Lib,
    session: Sess,
    cursor: Cur,
}

// SAFETY: the session and its cursor are used by one thread at a time.
unsafe impl Send for Session {}

/// A cursor's entry, (key, value), valid until the cursor moves or resets.
type Entry<'a> = Option<(&'a [u8], &'a [u8])>;

/// Bytes WiredTiger returned, valid until the cursor moves or resets.
fn bytes<'a>(data: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: WiredTiger returns items valid until the cursor moves or resets.
    unsafe { std::slice::from_raw_parts(data.cast(), len) }
}

impl Session {
    /// Takes over `session` (closed on drop, or here on error) with a cursor on `uri`.
    pub fn open(lib: Lib, session: Sess, uri: &CStr) -> anyhow::Result<Session> {
        let mut cursor: Cur = ptr::null_mut();
        // SAFETY: the session is live; the table exists (created at open).
        let rc = unsafe { (lib.api.fwt_open_cursor)(session, uri.as_ptr(), &mut cursor) };
        let made = Session {
            lib,
            session,
            cursor,
        };
        lib.check(rc, "open_cursor")?;
        Ok(made)
    }

    /// `key`'s value, or None when absent; the cursor stays on it until reset.
    fn lookup(&self, key: &[u8]) -> anyhow::Result<Option<&[u8]>> {
        super::work::used_here(self.session);
        let (mut data, mut len) = (ptr::null(), 0);
        // SAFETY: the cursor is live; the key is read during the call.
        let rc = unsafe {
            (self.lib.api.fwt_get)(
                self.cursor,
                key.as_ptr().cast(),
                key.len(),
                &mut data,
                &mut len,
            )
        };
        Ok(self.lib.found(rc, "search")?.then(|| bytes(data, len)))
    }

    fn read_into(&self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        let found = match self.lookup(key)? {
            Some(value) => {
                out.clear();
                out.extend_from_slice(value);
                true
            }
            None => false,
        };
        self.reset()?;
        Ok(found)
    }

    /// A key's value length, or None when absent.
    fn value_len(&self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        let len = self.lookup(key)?.map(<[u8]>::len);
        self.reset()?;
        Ok(len)
    }

    /// The entry a cursor call (`call` fills the four out-pointers) leaves it on; None when
    /// there is none.
    fn entry(
        &self,
        what: &str,
        call: impl FnOnce(&mut *const c_void, &mut usize, &mut *const c_void, &mut usize) -> c_int,
    ) -> anyhow::Result<Entry<'_>> {
        let (mut k, mut kl, mut v, mut vl) = (ptr::null(), 0, ptr::null(), 0);
        let rc = call(&mut k, &mut kl, &mut v, &mut vl);
        Ok(self
            .lib
            .found(rc, what)?
            .then(|| (bytes(k, kl), bytes(v, vl))))
    }

    /// The entry the cursor is on.
    fn current(&self) -> anyhow::Result<Entry<'_>> {
        // SAFETY: the cursor is positioned.
        self.entry("get_key", |k, kl, v, vl| unsafe {
            (self.lib.api.fwt_entry)(self.cursor, k, kl, v, vl)
        })
    }

    /// Moves one entry (back when `backwards`) and returns it.
    fn step_to(&self, backwards: bool) -> anyhow::Result<Entry<'_>> {
        // SAFETY: the cursor is live.
        self.entry("next", |k, kl, v, vl| unsafe {
            (self.lib.api.fwt_step)(self.cursor, c_int::from(backwards), k, kl, v, vl)
        })
    }

    /// Releases the cursor's position.
    fn reset(&self) -> anyhow::Result<()> {
        // SAFETY: the cursor is live.
        let rc = unsafe { (self.lib.api.fwt_reset)(self.cursor) };
        self.lib.check(rc, "reset")
    }

    fn write(&self, op: &BatchOp<'_>) -> anyhow::Result<()> {
        super::work::used_here(self.session);
        let api = self.lib.api;
        // SAFETY: the cursor is live; keys and values are read during the call.
        match op {
            BatchOp::Put(k, v) => {
                let rc = unsafe {
                    (api.fwt_insert)(
                        self.cursor,
                        k.as_ptr().cast(),
                        k.len(),
                        v.as_ptr().cast(),
                        v.len(),
                    )
                };
                self.lib.check(rc, "insert")
            }
            // An absent key is not an error.
            BatchOp::Delete(k) => {
                let rc = unsafe { (api.fwt_remove)(self.cursor, k.as_ptr().cast(), k.len()) };
                self.lib.found(rc, "remove").map(|_| ())
            }
        }
    }

    /// Positions the cursor at the seek's start and visits from there.
    fn seek_and_walk(&self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        super::work::used_here(self.session);
        let (start, direction, limit) = (seek.start, seek.direction, seek.limit);
        let backwards = direction.backwards();
        // WiredTiger has no empty key: from "" a forward scan starts at the first key, and a
        // reverse one finds nothing.
        if start.is_empty() {
            return match direction {
                Direction::Reverse => Ok(0),
                Direction::Forward | Direction::PrevFromSeek => {
                    let first = self.step_to(false)?;
                    self.walk(first, backwards, limit, visit)
                }
            };
        }
        let mut exact: c_int = 0;
        // SAFETY: the cursor is live; search_near reports where it landed in `exact`.
        let rc = unsafe {
            (self.lib.api.fwt_search_near)(
                self.cursor,
                start.as_ptr().cast(),
                start.len(),
                &mut exact,
            )
        };
        if !self.lib.found(rc, "search_near")? {
            return Ok(0);
        }
        // search_near lands on a neighbour: step once if it is on the wrong side of `start`.
        let first = match direction {
            Direction::Forward | Direction::PrevFromSeek if exact < 0 => self.step_to(false)?,
            Direction::Reverse if exact > 0 => self.step_to(true)?,
            _ => self.current()?,
        };
        self.walk(first, backwards, limit, visit)
    }

    /// Visits up to `limit` entries from `first`, then releases the cursor's position.
    fn walk(
        &self,
        first: Entry<'_>,
        backwards: bool,
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> anyhow::Result<usize> {
        let mut n = 0;
        let mut entry = first;
        while let Some((key, value)) = entry {
            if n == limit {
                break;
            }
            n += 1;
            if !visit(key, value) || n == limit {
                break;
            }
            entry = self.step_to(backwards)?;
        }
        self.reset()?;
        Ok(n)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        super::work::closed_here(self.session);
        // SAFETY: closing the session closes its cursors.
        unsafe { (self.lib.api.fwt_session_close)(self.session) };
    }
}

impl KvSession for Session {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        self.value_len(key)
    }

    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.read_into(key, out)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.write(&BatchOp::Put(key, value))
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.write(&BatchOp::Delete(key))
    }

    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        let api = self.lib.api;
        // Snapshot isolation: WiredTiger detects write-write conflicts only there (a session's
        // default, read-committed, lets two transactions update one key and lose an update).
        // SAFETY: the session is live.
        let rc = unsafe { (api.fwt_begin)(self.session, c"isolation=snapshot".as_ptr()) };
        self.lib.check(rc, "begin_transaction")?;
        let outcome = body(&mut WtTxn { session: self });
        // SAFETY: the session is live and in a transaction.
        let rc = unsafe {
            match outcome {
                Ok(TxnEnd::Commit) => (api.fwt_commit)(self.session),
                _ => (api.fwt_rollback)(self.session),
            }
        };
        let end = outcome?;
        self.lib.check(rc, "ending a transaction")?;
        Ok(end)
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        self.seek_and_walk(seek, visit)
    }
}

/// Reads and writes through the session's cursor while its transaction is open.
struct WtTxn<'s> {
    session: &'s Session,
}

impl KvTxn for WtTxn<'_> {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.session.read_into(key, out)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.session.write(&BatchOp::Put(key, value))
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.session.write(&BatchOp::Delete(key))
    }

    /// The cursor reads in the transaction's snapshot (isolation=snapshot).
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        self.session.value_len(key)
    }

    /// Its reads take no lock: `read` is the plain read.
    fn read_plain(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.read(key, out)
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        self.session.seek_and_walk(seek, visit)
    }
}
