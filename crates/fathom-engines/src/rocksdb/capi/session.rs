//! A client's session on a RocksDB library: point reads (pinned, no copy), writes, atomic
//! batches and scans, each through the C API with the session's own read and write options.

use super::api::{Api, Obj};
use super::cursor::{bytes, c, LibraryCursor};
use crate::rocksdb::scan::walk;
use fathom_api::kv::{BatchOp, KvSession, Seek, TxnBody, TxnEnd, Visit};
use std::ffi::c_char;

pub struct Session {
    api: &'static Api,
    db: Obj,
    /// The OptimisticTransactionDB `db` is the base of; NULL for a plain database.
    otxn: Obj,
    read: Obj,
    write: Obj,
}

// SAFETY: the session's options are its own; the database is thread-safe.
unsafe impl Send for Session {}

impl Session {
    pub fn new(api: &'static Api, db: (Obj, Obj), disable_wal: bool, sync: bool) -> Session {
        let (db, otxn) = db;
        // SAFETY: the library's constructors and setters.
        let (read, write) = unsafe {
            let write = (api.rocksdb_writeoptions_create)();
            (api.rocksdb_writeoptions_disable_WAL)(write, disable_wal as i32);
            (api.rocksdb_writeoptions_set_sync)(write, sync as u8);
            ((api.rocksdb_readoptions_create)(), write)
        };
        Session {
            api,
            db,
            otxn,
            read,
            write,
        }
    }
}

impl Session {
    /// Looks `key` up, handing its value (pinned, not copied) to `with`; false when absent.
    fn lookup(&mut self, key: &[u8], with: &mut dyn FnMut(&[u8])) -> anyhow::Result<bool> {
        let a = self.api;
        let (k, kn) = c(key);
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live database and options; the value is used before the pinned slice is
        // released, once.
        let found = unsafe {
            let pinned = (a.rocksdb_get_pinned)(self.db, self.read, k, kn, &mut err);
            if !pinned.is_null() {
                let mut n = 0;
                let v = (a.rocksdb_pinnableslice_value)(pinned, &mut n);
                with(bytes(v, n));
                (a.rocksdb_pinnableslice_destroy)(pinned);
            }
            !pinned.is_null()
        };
        a.check(err, "get")?;
        Ok(found)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: made in `new`, released once.
        unsafe {
            (self.api.rocksdb_readoptions_destroy)(self.read);
            (self.api.rocksdb_writeoptions_destroy)(self.write);
        }
    }
}

impl KvSession for Session {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        let mut n = 0;
        Ok(self.lookup(key, &mut |v| n = v.len())?.then_some(n))
    }

    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.lookup(key, &mut |v| {
            out.clear();
            out.extend_from_slice(v);
        })
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        let ((k, kn), (v, vn)) = (c(key), c(value));
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: live database and options, slices valid for the call.
        unsafe { (self.api.rocksdb_put)(self.db, self.write, k, kn, v, vn, &mut err) };
        self.api.check(err, "put")
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        let (k, kn) = c(key);
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: as `put`.
        unsafe { (self.api.rocksdb_delete)(self.db, self.write, k, kn, &mut err) };
        self.api.check(err, "delete")
    }

    fn write_batch(&mut self, ops: &[BatchOp<'_>]) -> anyhow::Result<()> {
        let a = self.api;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: the batch is made, filled, written and released here.
        unsafe {
            let batch = (a.rocksdb_writebatch_create)();
            for op in ops {
                match op {
                    BatchOp::Put(key, value) => {
                        let ((k, kn), (v, vn)) = (c(key), c(value));
                        (a.rocksdb_writebatch_put)(batch, k, kn, v, vn)
                    }
                    BatchOp::Delete(key) => {
                        let (k, kn) = c(key);
                        (a.rocksdb_writebatch_delete)(batch, k, kn)
                    }
                }
            }
            (a.rocksdb_write)(self.db, self.write, batch, &mut err);
            (a.rocksdb_writebatch_destroy)(batch);
        }
        a.check(err, "write batch")
    }

    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        if self.otxn.is_null() {
            anyhow::bail!(
                "RocksDB transactions need --set transactions=optimistic (an \
                 OptimisticTransactionDB keeps flushed memtables in memory for conflict checks, \
                 so it is not the default)"
            )
        }
        super::txn::run(self.api, (self.otxn, self.db), self.write, body)
    }

    /// A new iterator per scan, as db_bench's seekrandom makes one, so each sees current data.
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        // SAFETY: a live database and read options.
        let it = unsafe { (self.api.rocksdb_create_iterator)(self.db, self.read) };
        walk(&mut LibraryCursor::new(self.api, it), seek, visit)
    }
}
