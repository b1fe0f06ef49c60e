//! A client's RocksDB session: point reads and writes, batches, scans, the batched MultiGet,
//! and optimistic transactions whose plain reads see a snapshot taken at their first.

use super::Handle;
use crate::rocksdb::scan::{walk, Cursor};
use fathom_api::kv::{fill, BatchOp, KvSession, KvTxn, Seek, TxnBody, TxnEnd, Visit};
use fathom_api::retry::EngineError;
use rocksdb::{
    DBAccess, DBRawIteratorWithThreadMode, OptimisticTransactionDB, OptimisticTransactionOptions,
    ReadOptions, SnapshotWithThreadMode, WriteBatchWithTransaction, WriteOptions,
    DEFAULT_COLUMN_FAMILY_NAME,
};
use std::sync::Arc;

pub(super) struct Session {
    db: Arc<Handle>,
    write: WriteOptions,
    /// Kept for the session: the crate's `get_pinned` allocates a new one per call.
    read: ReadOptions,
}

impl Session {
    pub(super) fn new(db: Arc<Handle>, write: WriteOptions) -> Session {
        Session {
            db,
            write,
            read: ReadOptions::default(),
        }
    }
}

impl KvSession for Session {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        Ok(on_db!(self.db, d => d.get_pinned_opt(key, &self.read)?.map(|v| v.len())))
    }

    /// The batched MultiGet db_bench's `--multiread_batched` calls (keys not sorted).
    fn multi_get(&mut self, keys: &[&[u8]]) -> anyhow::Result<(usize, u64)> {
        let values = on_db!(self.db, d => {
            let cf = d
                .cf_handle(DEFAULT_COLUMN_FAMILY_NAME)
                .ok_or_else(|| anyhow::anyhow!("RocksDB has no default column family"))?;
            d.batched_multi_get_cf_opt(cf, keys.iter(), false, &self.read)
        });
        let (mut found, mut bytes) = (0, 0);
        for value in values {
            if let Some(v) = value? {
                found += 1;
                bytes += v.len() as u64;
            }
        }
        Ok((found, bytes))
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        Ok(on_db!(self.db, d => d.put_opt(key, value, &self.write))?)
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        Ok(on_db!(self.db, d => d.delete_opt(key, &self.write))?)
    }

    fn write_batch(&mut self, ops: &[BatchOp<'_>]) -> anyhow::Result<()> {
        match &*self.db {
            Handle::Plain(d) => d.write_opt(batch(ops), &self.write)?,
            Handle::Optimistic(d) => d.write_opt(batch(ops), &self.write)?,
        }
        Ok(())
    }

    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        let Handle::Optimistic(db) = &*self.db else {
            anyhow::bail!(
                "RocksDB transactions need --set transactions=optimistic (an OptimisticTransactionDB \
                 keeps flushed memtables in memory for conflict checks, so it is not the default)"
            )
        };
        let txn = db.transaction_opt(&self.write, &OptimisticTransactionOptions::default());
        // The body's view (and its snapshot, if it took one) ends before the commit.
        let outcome = body(&mut Txn {
            txn: &txn,
            db,
            snapshot: None,
        });
        match outcome {
            Ok(TxnEnd::Commit) => {
                txn.commit().map_err(|e| {
                    let retryable = matches!(
                        e.kind(),
                        rocksdb::ErrorKind::Busy | rocksdb::ErrorKind::TryAgain
                    );
                    EngineError::classified(retryable, format!("RocksDB commit: {e}"))
                })?;
                Ok(TxnEnd::Commit)
            }
            Ok(TxnEnd::Rollback) => {
                txn.rollback()?;
                Ok(TxnEnd::Rollback)
            }
            Err(e) => {
                txn.rollback()?;
                Err(e)
            }
        }
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        // A new iterator per scan, as db_bench's seekrandom does, so each sees current data.
        on_db!(self.db, d => walk(&mut d.raw_iterator(), seek, visit))
    }
}

fn batch<const T: bool>(ops: &[BatchOp<'_>]) -> WriteBatchWithTransaction<T> {
    let mut batch = WriteBatchWithTransaction::<T>::default();
    for op in ops {
        match op {
            BatchOp::Put(k, v) => batch.put(k, v),
            BatchOp::Delete(k) => batch.delete(k),
        }
    }
    batch
}

impl<D: DBAccess> Cursor for DBRawIteratorWithThreadMode<'_, D> {
    fn seek(&mut self, key: &[u8]) {
        DBRawIteratorWithThreadMode::seek(self, key)
    }
    fn seek_for_prev(&mut self, key: &[u8]) {
        DBRawIteratorWithThreadMode::seek_for_prev(self, key)
    }
    fn entry(&self) -> Option<(&[u8], &[u8])> {
        self.item()
    }
    fn next(&mut self) {
        DBRawIteratorWithThreadMode::next(self)
    }
    fn prev(&mut self) {
        DBRawIteratorWithThreadMode::prev(self)
    }
    fn status(&self) -> anyhow::Result<()> {
        Ok(DBRawIteratorWithThreadMode::status(self)?)
    }
}

struct Txn<'a, 't> {
    txn: &'a rocksdb::Transaction<'t, OptimisticTransactionDB>,
    db: &'t OptimisticTransactionDB,
    /// The snapshot plain reads see, taken at the first (as MyRocks' REPEATABLE READ does).
    snapshot: Option<SnapshotWithThreadMode<'t, OptimisticTransactionDB>>,
}

impl Txn<'_, '_> {
    /// Read options at the transaction's snapshot, taking it on first use.
    fn at_snapshot(&mut self) -> ReadOptions {
        let snapshot = self
            .snapshot
            .get_or_insert_with(|| SnapshotWithThreadMode::new(self.db));
        let mut read = ReadOptions::default();
        read.set_snapshot(snapshot);
        read
    }
}

impl KvTxn for Txn<'_, '_> {
    /// Reads for update: the commit then fails if another transaction wrote the key after this
    /// read. A plain read is not checked, and a read-modify-write of a shared row (a count)
    /// could lose an update (the consistency check of LinkBench found one in 74570 pairs).
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        match self.txn.get_pinned_for_update(key, true)? {
            Some(v) => {
                out.clear();
                out.extend_from_slice(&v);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        Ok(self.txn.put(key, value)?)
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        Ok(self.txn.delete(key)?)
    }

    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        let read = self.at_snapshot();
        Ok(self.txn.get_pinned_opt(key, &read)?.map(|v| v.len()))
    }

    fn read_plain(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        let read = self.at_snapshot();
        Ok(match self.txn.get_pinned_opt(key, &read)? {
            Some(v) => fill(out, &v),
            None => false,
        })
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        let read = self.at_snapshot();
        walk(&mut self.txn.raw_iterator_opt(read), seek, visit)
    }
}
