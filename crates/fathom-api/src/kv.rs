//! The kv family: an ordered key-value engine handing out one session per client thread.
//! Workloads are written against these traits only, so every kv engine runs every workload.

use crate::target::Target;

/// Per-session choices a step makes (db_bench's fillseq runs with the WAL disabled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionOptions {
    pub disable_wal: bool,
}

/// Which way a scan goes from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the first key at or after the start, onwards.
    Forward,
    /// From the last key at or before the start, backwards (RocksDB's SeekForPrev).
    Reverse,
    /// From the first key at or after the start, backwards: a forward seek, then steps back,
    /// as db_bench's seekrandom with --reverse_iterator (which pays the change of direction).
    PrevFromSeek,
}

impl Direction {
    /// Whether the scan steps to smaller keys.
    pub fn backwards(self) -> bool {
        self != Direction::Forward
    }
}

/// Where a scan starts, which way it goes and how many entries it visits at most.
#[derive(Clone, Copy, Debug)]
pub struct Seek<'a> {
    pub start: &'a [u8],
    pub direction: Direction,
    pub limit: usize,
}

impl<'a> Seek<'a> {
    pub fn new(start: &'a [u8], direction: Direction, limit: usize) -> Seek<'a> {
        Seek {
            start,
            direction,
            limit,
        }
    }
}

/// What a scan calls with each entry's key and value; it returns false to stop.
pub type Visit<'a> = dyn FnMut(&[u8], &[u8]) -> bool + 'a;

/// A transaction's body: its reads and writes through the transaction, then how it ends.
pub type TxnBody<'a> = dyn FnMut(&mut dyn KvTxn) -> anyhow::Result<TxnEnd> + 'a;

/// One write of an atomic batch.
#[derive(Clone, Copy, Debug)]
pub enum BatchOp<'a> {
    Put(&'a [u8], &'a [u8]),
    Delete(&'a [u8]),
}

/// How a transaction's body asks it to end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnEnd {
    Commit,
    Rollback,
}

/// Reads and writes inside a transaction; reads see the transaction's own writes.
pub trait KvTxn {
    /// Reads a key to change it, as UPDATE reads a row: the latest committed value, checked for
    /// conflicts at commit (RocksDB's GetForUpdate).
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool>;
    /// Reads a key as a plain SELECT inside the transaction does: in the transaction's snapshot
    /// (taken at its first such read), with no lock and no conflict check. Returns the value's
    /// length when present.
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>>;
    /// Reads a key's value into `out` as `get` reads it (in the snapshot, no lock); false when
    /// the key is absent. By default a scan of one entry; engines with a plain read override it.
    fn read_plain(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        read_by_scan(key, out, |seek, visit| self.scan(seek, visit))
    }
    /// Scans as `KvSession::scan` does, in the transaction's snapshot (as `get`).
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize>;
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()>;
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()>;
}

/// Reads `key`'s value into `out` through a scan of one entry from it (`scan`): for engines
/// with no read of their own. False when the key is absent.
pub fn read_by_scan(
    key: &[u8],
    out: &mut Vec<u8>,
    scan: impl FnOnce(Seek, &mut Visit) -> anyhow::Result<usize>,
) -> anyhow::Result<bool> {
    let mut found = false;
    scan(Seek::new(key, Direction::Forward, 1), &mut |k, v| {
        found = k == key && fill(out, v);
        false
    })?;
    Ok(found)
}

/// A batch's writes in a transaction, to commit.
pub fn apply(t: &mut dyn KvTxn, ops: &[BatchOp<'_>]) -> anyhow::Result<TxnEnd> {
    for op in ops {
        match op {
            BatchOp::Put(k, v) => t.put(k, v)?,
            BatchOp::Delete(k) => t.delete(k)?,
        }
    }
    Ok(TxnEnd::Commit)
}

/// Replaces `out`'s bytes with `value`'s; true, for a read that found its value.
pub fn fill(out: &mut Vec<u8>, value: &[u8]) -> bool {
    out.clear();
    out.extend_from_slice(value);
    true
}

/// A client's connection to a kv engine.
pub trait KvSession: Send {
    /// Reads a key; returns the value's length when present (the fast path: no copy).
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>>;
    /// Reads a key's value into `out`; returns false when the key is absent.
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        read_by_scan(key, out, |seek, visit| self.scan(seek, visit))
    }
    /// Reads several keys in one call (db_bench's multireadrandom); returns how many were
    /// found and their values' bytes. By default one `get` after another; RocksDB overrides it
    /// with its batched MultiGet.
    fn multi_get(&mut self, keys: &[&[u8]]) -> anyhow::Result<(usize, u64)> {
        let (mut found, mut bytes) = (0, 0);
        for key in keys {
            if let Some(n) = self.get(key)? {
                found += 1;
                bytes += n as u64;
            }
        }
        Ok((found, bytes))
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()>;
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()>;
    /// Applies every write or none: by default a transaction over the writes; engines with a
    /// cheaper atomic batch (RocksDB's WriteBatch) override it.
    fn write_batch(&mut self, ops: &[BatchOp<'_>]) -> anyhow::Result<()> {
        self.transaction(&mut |t| apply(t, ops)).map(|_| ())
    }
    /// Runs `body` in a transaction: its writes are applied together when it returns
    /// `Commit`, and none of them when it returns `Rollback` or fails. A conflict with a
    /// concurrent transaction is an error (the caller may retry). Returns how it ended.
    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd>;
    /// Positions at the first key >= `start` (forward) or the last key <= `start` (reverse)
    /// and visits up to `limit` entries in that direction; `visit` returns false to stop.
    /// Returns the number of entries visited.
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize>;
}

/// An open kv database.
pub trait KvEngine: Target {
    fn session(&self, options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>>;
}
