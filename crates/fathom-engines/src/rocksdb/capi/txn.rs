//! Optimistic transactions on a RocksDB library, as the bundled build runs them: reads for
//! update checked for conflicts at commit, plain reads in a snapshot taken at the first.

use super::api::{Api, Obj};
use super::cursor::{bytes, c, LibraryCursor};
use crate::rocksdb::scan::walk;
use fathom_api::kv::{KvTxn, Seek, TxnBody, TxnEnd, Visit};
use fathom_api::retry::EngineError;
use std::ffi::c_char;

/// Runs `body` in a new transaction of the OptimisticTransactionDB `db.0` (base `db.1`).
pub fn run(api: &Api, db: (Obj, Obj), write: Obj, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
    let (otxn, base) = db;
    // SAFETY: the library's constructors; everything made here is released below.
    let mut t = unsafe {
        let options = (api.rocksdb_optimistictransaction_options_create)();
        let txn =
            (api.rocksdb_optimistictransaction_begin)(otxn, write, options, std::ptr::null_mut());
        (api.rocksdb_optimistictransaction_options_destroy)(options);
        Txn {
            api,
            txn,
            base,
            latest: (api.rocksdb_readoptions_create)(),
            at_snapshot: (api.rocksdb_readoptions_create)(),
            snapshot: std::ptr::null_mut(),
        }
    };
    let outcome = body(&mut t);
    let mut err: *mut c_char = std::ptr::null_mut();
    // The body's snapshot is released before the commit, as the bundled build's view ends.
    t.release_snapshot();
    // SAFETY: a live transaction, ended once.
    unsafe {
        if matches!(outcome, Ok(TxnEnd::Commit)) {
            (api.rocksdb_transaction_commit)(t.txn, &mut err)
        } else {
            (api.rocksdb_transaction_rollback)(t.txn, &mut err)
        }
    }
    drop(t);
    match outcome {
        Ok(TxnEnd::Commit) => {
            api.check(err, "commit").map_err(|e| {
                let message = e.to_string();
                // Status::ToString of kBusy and kTryAgain: a conflict the caller may retry.
                let retryable = message.contains("Resource busy")
                    || message.contains("Operation failed. Try again");
                EngineError::classified(retryable, message)
            })?;
            Ok(TxnEnd::Commit)
        }
        Ok(TxnEnd::Rollback) => {
            api.check(err, "rollback")?;
            Ok(TxnEnd::Rollback)
        }
        Err(e) => {
            api.check(err, "rollback")?;
            Err(e)
        }
    }
}

struct Txn<'a> {
    api: &'a Api,
    txn: Obj,
    base: Obj,
    /// Read options of reads for update (the latest committed value).
    latest: Obj,
    /// Read options of plain reads: at `snapshot` once it is taken.
    at_snapshot: Obj,
    /// Taken at the first plain read, as MyRocks' REPEATABLE READ does; NULL before.
    snapshot: Obj,
}

impl Drop for Txn<'_> {
    fn drop(&mut self) {
        let a = self.api;
        self.release_snapshot();
        // SAFETY: each made in `run`, released once, the transaction last.
        unsafe {
            (a.rocksdb_readoptions_destroy)(self.latest);
            (a.rocksdb_readoptions_destroy)(self.at_snapshot);
            (a.rocksdb_transaction_destroy)(self.txn);
        }
    }
}

impl Txn<'_> {
    fn release_snapshot(&mut self) {
        if !self.snapshot.is_null() {
            // SAFETY: taken in `plain` from this base database, released once.
            unsafe { (self.api.rocksdb_release_snapshot)(self.base, self.snapshot) };
            self.snapshot = std::ptr::null_mut();
        }
    }

    /// Read options at the transaction's snapshot, taking it on first use.
    fn plain(&mut self) -> Obj {
        if self.snapshot.is_null() {
            // SAFETY: a live base database and read options.
            unsafe {
                self.snapshot = (self.api.rocksdb_create_snapshot)(self.base);
                (self.api.rocksdb_readoptions_set_snapshot)(self.at_snapshot, self.snapshot);
            }
        }
        self.at_snapshot
    }

    /// Reads a key in the transaction's snapshot, its value copied into `out` when given;
    /// returns the value's length when present.
    fn get_at_snapshot(
        &mut self,
        key: &[u8],
        out: Option<&mut Vec<u8>>,
    ) -> anyhow::Result<Option<usize>> {
        let read = self.plain();
        let (k, kn) = c(key);
        let (mut n, mut err) = (0, std::ptr::null_mut());
        // SAFETY: a live transaction and read options; the value is taken below.
        let v =
            unsafe { (self.api.rocksdb_transaction_get)(self.txn, read, k, kn, &mut n, &mut err) };
        self.api.check(err, "get")?;
        Ok(self.take(v, n, out).then_some(n))
    }

    /// Takes a value the library allocated (NULL when absent), copying it into `out`.
    fn take(&self, value: *mut c_char, n: usize, out: Option<&mut Vec<u8>>) -> bool {
        if value.is_null() {
            return false;
        }
        if let Some(out) = out {
            out.clear();
            // SAFETY: `n` bytes the library allocated.
            out.extend_from_slice(unsafe { bytes(value, n) });
        }
        // SAFETY: allocated by the library, freed once.
        unsafe { (self.api.rocksdb_free)(value.cast()) };
        true
    }
}

impl KvTxn for Txn<'_> {
    /// Reads for update: the commit then fails if another transaction wrote the key after.
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        let (k, kn) = c(key);
        let (mut n, mut err) = (0, std::ptr::null_mut());
        // SAFETY: a live transaction and read options; the value is taken below.
        let v = unsafe {
            (self.api.rocksdb_transaction_get_for_update)(
                self.txn,
                self.latest,
                k,
                kn,
                &mut n,
                1,
                &mut err,
            )
        };
        self.api.check(err, "get for update")?;
        Ok(self.take(v, n, Some(out)))
    }

    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        self.get_at_snapshot(key, None)
    }

    fn read_plain(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        Ok(self.get_at_snapshot(key, Some(out))?.is_some())
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        let read = self.plain();
        // SAFETY: a live transaction and read options.
        let it = unsafe { (self.api.rocksdb_transaction_create_iterator)(self.txn, read) };
        walk(&mut LibraryCursor::new(self.api, it), seek, visit)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        let ((k, kn), (v, vn)) = (c(key), c(value));
        let mut err = std::ptr::null_mut();
        // SAFETY: a live transaction, slices valid for the call.
        unsafe { (self.api.rocksdb_transaction_put)(self.txn, k, kn, v, vn, &mut err) };
        self.api.check(err, "put")
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        let (k, kn) = c(key);
        let mut err = std::ptr::null_mut();
        // SAFETY: as `put`.
        unsafe { (self.api.rocksdb_transaction_delete)(self.txn, k, kn, &mut err) };
        self.api.check(err, "delete")
    }
}
