//! A client's WiredTiger session and its cursor on the table: point reads and writes,
//! transactions in snapshot isolation, and scans positioned with search_near.

use super::api::{Cur, Sess};
use super::Lib;
use fathom_core::kv::{BatchOp, Direction, KvSession, KvTxn, Seek, TxnBody, TxnEnd, Visit};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;

pub struct Session {
    lib: Lib,
    session: Sess,
    cursor: Cur,
}

// SAFETY: the session and its cursor are used by one thread at a time.
unsafe impl Send for Session {}

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

    /// Calls a cursor method that takes only the cursor; false for WT_NOTFOUND.
    fn step(&self, f: unsafe extern "C" fn(Cur) -> c_int, what: &str) -> anyhow::Result<bool> {
        // SAFETY: the cursor is live.
        self.lib.found(unsafe { f(self.cursor) }, what)
    }

    fn value(&self) -> anyhow::Result<&[u8]> {
        let (mut data, mut len) = (ptr::null(), 0);
        // SAFETY: the cursor is positioned; value_format=u.
        let rc = unsafe { (self.lib.api.fwt_value)(self.cursor, &mut data, &mut len) };
        self.lib.check(rc, "get_value")?;
        Ok(bytes(data, len))
    }

    fn key(&self) -> anyhow::Result<&[u8]> {
        let (mut data, mut len) = (ptr::null(), 0);
        // SAFETY: as for `value`.
        let rc = unsafe { (self.lib.api.fwt_key)(self.cursor, &mut data, &mut len) };
        self.lib.check(rc, "get_key")?;
        Ok(bytes(data, len))
    }

    /// Positions the cursor on `key`; false when absent.
    fn search(&self, key: &[u8]) -> anyhow::Result<bool> {
        // SAFETY: the cursor is live; the key is read during the call.
        let rc = unsafe { (self.lib.api.fwt_search)(self.cursor, key.as_ptr().cast(), key.len()) };
        self.lib.found(rc, "search")
    }

    fn read_into(&self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        let found = self.search(key)?;
        if found {
            out.clear();
            out.extend_from_slice(self.value()?);
        }
        self.reset()?;
        Ok(found)
    }

    /// A key's value length, or None when absent.
    fn value_len(&self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        let len = match self.search(key)? {
            true => Some(self.value()?.len()),
            false => None,
        };
        self.reset()?;
        Ok(len)
    }

    fn reset(&self) -> anyhow::Result<()> {
        self.step(self.lib.api.fwt_reset, "reset").map(|_| ())
    }

    fn write(&self, op: &BatchOp<'_>) -> anyhow::Result<()> {
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
        let (start, direction, limit) = (seek.start, seek.direction, seek.limit);
        let api = self.lib.api;
        // WiredTiger has no empty key: from "" a forward scan starts at the first key, and a
        // reverse one finds nothing.
        if start.is_empty() {
            return match direction {
                Direction::Reverse => Ok(0),
                Direction::Forward | Direction::PrevFromSeek => {
                    let first = self.step(api.fwt_next, "next")?;
                    self.walk(first, direction, limit, visit)
                }
            };
        }
        let mut exact: c_int = 0;
        // SAFETY: the cursor is live; search_near reports where it landed in `exact`.
        let rc = unsafe {
            (api.fwt_search_near)(self.cursor, start.as_ptr().cast(), start.len(), &mut exact)
        };
        if !self.lib.found(rc, "search_near")? {
            return Ok(0);
        }
        // search_near lands on a neighbour: step once if it is on the wrong side of `start`.
        let positioned = match direction {
            Direction::Forward | Direction::PrevFromSeek if exact < 0 => {
                self.step(api.fwt_next, "next")?
            }
            Direction::Reverse if exact > 0 => self.step(api.fwt_prev, "prev")?,
            _ => true,
        };
        self.walk(positioned, direction, limit, visit)
    }

    /// Visits up to `limit` entries from the cursor's position, then releases the position.
    fn walk(
        &self,
        mut positioned: bool,
        direction: Direction,
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> anyhow::Result<usize> {
        let (next, name) = match direction.backwards() {
            true => (self.lib.api.fwt_prev, "prev"),
            false => (self.lib.api.fwt_next, "next"),
        };
        let mut n = 0;
        while positioned && n < limit {
            n += 1;
            if !visit(self.key()?, self.value()?) {
                break;
            }
            positioned = self.step(next, name)?;
        }
        self.reset()?;
        Ok(n)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: closing the session closes its cursor.
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

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        self.session.seek_and_walk(seek, visit)
    }
}
