//! The insert benchmark on the kv family through the shared row/index mapping: a row under
//! its transactionid, each secondary index entry a blind put of its columns and the id, and a
//! delete that reads the rows first so it can remove their index entries too. Which indexes a
//! table has is recorded in a catalog key, as a database's dictionary would.

use super::clients::Store;
use super::gen::{Batch, Row, Shape, Table};
use crate::rows::{decode_row, encode_row, index_id, key_int, Col as V, Key};
use fathom_api::kv::{BatchOp, Direction, KvEngine, KvSession, Seek, SessionOptions};
use fathom_api::target::Maintenance;
use std::collections::HashMap;
use std::sync::Arc;

/// The catalog entry of table `t`: how many secondary indexes it has.
const CATALOG: u32 = 15;
/// Stored row: dateandtime, cashregisterid, customerid, productid, price, data.
const ROW: &[bool] = &[true, true, true, true, true, false];
/// Rows read per batch while building an index.
const BUILD_CHUNK: usize = 1000;

pub struct KvStore<'e> {
    engine: &'e dyn KvEngine,
    session: Box<dyn KvSession + 'e>,
    shape: Arc<Shape>,
    /// Secondary indexes per table, read from the catalog at first use.
    indexes: HashMap<u32, usize>,
    keys: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
    key: Key,
}

impl<'e> KvStore<'e> {
    pub fn new(engine: &'e dyn KvEngine, shape: Arc<Shape>) -> anyhow::Result<Self> {
        Ok(KvStore {
            engine,
            session: engine.session(SessionOptions::default())?,
            shape,
            indexes: HashMap::new(),
            keys: Vec::new(),
            values: Vec::new(),
            key: Key::default(),
        })
    }

    fn indexes(&mut self, t: u32) -> anyhow::Result<usize> {
        if let Some(&n) = self.indexes.get(&t) {
            return Ok(n);
        }
        let mut v = Vec::new();
        let key = Key::default()
            .start(index_id(t, CATALOG))
            .as_slice()
            .to_vec();
        let n = if self.session.read(&key, &mut v)? {
            v.first().copied().unwrap_or(0) as usize
        } else {
            0
        };
        self.indexes.insert(t, n);
        Ok(n)
    }

    /// Appends the key of secondary index `i` for a row with id `id` to `keys`.
    fn index_key(&mut self, t: u32, i: usize, row: &Row, dateandtime: i64, id: i64) -> Vec<u8> {
        self.key.start(index_id(t, i as u32 + 1));
        for &c in self.shape.indexes[i].cols {
            self.key.int(row.col(c, dateandtime));
        }
        self.key.int(id).as_slice().to_vec()
    }

    /// The rows of `t` with ids from `from`, up to `limit`: (id, row, dateandtime, bytes).
    fn rows_from(&mut self, t: u32, from: i64, limit: usize) -> anyhow::Result<Vec<Stored>> {
        let start = Key::default()
            .start(index_id(t, 0))
            .int(from)
            .as_slice()
            .to_vec();
        let prefix = index_id(t, 0).to_be_bytes();
        let mut out = Vec::new();
        let mut bad = None;
        self.session
            .scan(Seek::new(&start, Direction::Forward, limit), &mut |k, v| {
                if !k.starts_with(&prefix) {
                    return false;
                }
                match (key_int(k, 4), decode_row(v, ROW)) {
                    (Some(id), Some(cols)) => {
                        let int = |i: usize| match cols[i] {
                            V::Int(x) => x,
                            V::Bytes(_) => 0,
                        };
                        out.push(Stored {
                            id,
                            dateandtime: int(0),
                            row: Row {
                                cashregisterid: int(1),
                                customerid: int(2),
                                productid: int(3),
                                price: int(4),
                            },
                            key: k.to_vec(),
                        });
                        true
                    }
                    _ => {
                        bad = Some(k.to_vec());
                        false
                    }
                }
            })?;
        if let Some(k) = bad {
            anyhow::bail!("table pi{t}: the row under key {k:02x?} does not decode");
        }
        Ok(out)
    }

    fn write(&mut self, deletes: usize) -> anyhow::Result<()> {
        let ops: Vec<BatchOp<'_>> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                if i < deletes {
                    BatchOp::Delete(k)
                } else {
                    BatchOp::Put(k, &self.values[i - deletes])
                }
            })
            .collect();
        self.session.write_batch(&ops)
    }
}

/// A row read back for a delete or an index build.
struct Stored {
    id: i64,
    dateandtime: i64,
    row: Row,
    key: Vec<u8>,
}

impl Store for KvStore<'_> {
    fn create_table(&mut self, t: u32) -> anyhow::Result<()> {
        // A fresh database per run: nothing to drop, and no secondary indexes yet.
        self.indexes.insert(t, 0);
        Ok(())
    }

    fn insert(&mut self, t: &Table, batch: &Batch) -> anyhow::Result<()> {
        let first = t.claim_insert(batch.len());
        let indexes = self.indexes(t.n)?;
        self.keys.clear();
        self.values.clear();
        for (i, (row, data)) in batch.rows.iter().enumerate() {
            let id = first + i as i64;
            self.keys.push(
                Key::default()
                    .start(index_id(t.n, 0))
                    .int(id)
                    .as_slice()
                    .to_vec(),
            );
            let mut value = Vec::with_capacity(48 + data.len());
            encode_row(
                &[
                    V::Int(batch.dateandtime),
                    V::Int(row.cashregisterid),
                    V::Int(row.customerid),
                    V::Int(row.productid),
                    V::Int(row.price),
                    V::Bytes(data.as_bytes()),
                ],
                &mut value,
            );
            self.values.push(value);
            for ix in 0..indexes {
                let k = self.index_key(t.n, ix, row, batch.dateandtime, id);
                self.keys.push(k);
                self.values.push(Vec::new());
            }
        }
        self.write(0)
    }

    fn delete(&mut self, t: u32, from: i64, n: usize) -> anyhow::Result<u64> {
        let rows = self.rows_from(t, from, n)?;
        let indexes = self.indexes(t)?;
        self.keys.clear();
        self.values.clear();
        for r in &rows {
            self.keys.push(r.key.clone());
            for ix in 0..indexes {
                let k = self.index_key(t, ix, &r.row, r.dateandtime, r.id);
                self.keys.push(k);
            }
        }
        let deletes = self.keys.len();
        self.write(deletes)?;
        Ok(rows.len() as u64)
    }

    /// The table's smallest id, or with `last` its largest.
    fn end_id(&mut self, t: u32, last: bool) -> anyhow::Result<Option<i64>> {
        let (index, direction) = if last {
            (index_id(t, 1), Direction::Reverse)
        } else {
            (index_id(t, 0), Direction::Forward)
        };
        let start = Key::default().start(index).as_slice().to_vec();
        let prefix = index_id(t, 0).to_be_bytes();
        let mut id = None;
        self.session
            .scan(Seek::new(&start, direction, 1), &mut |k, _| {
                if k.starts_with(&prefix) {
                    id = key_int(k, 4);
                }
                false
            })?;
        Ok(id)
    }

    fn create_indexes(&mut self, t: u32, positions: &[usize]) -> anyhow::Result<()> {
        for &ix in positions {
            let mut from = i64::MIN;
            loop {
                let rows = self.rows_from(t, from, BUILD_CHUNK)?;
                let Some(last) = rows.last() else { break };
                from = last.id + 1;
                self.keys.clear();
                self.values.clear();
                for r in &rows {
                    let k = self.index_key(t, ix, &r.row, r.dateandtime, r.id);
                    self.keys.push(k);
                    self.values.push(Vec::new());
                }
                self.write(0)?;
            }
            let built = ix + 1;
            let catalog = Key::default()
                .start(index_id(t, CATALOG))
                .as_slice()
                .to_vec();
            self.session.put(&catalog, &[built as u8])?;
            self.indexes.insert(t, built);
        }
        Ok(())
    }

    fn range_query(&mut self, t: u32, index: usize, from: i64) -> anyhow::Result<u64> {
        // The register query starts strictly after its cash register.
        let strict = self.shape.indexes[index].strict();
        let id = index_id(t, index as u32 + 1);
        let start = Key::default()
            .start(id)
            .int(if strict { from + 1 } else { from })
            .as_slice()
            .to_vec();
        let prefix = id.to_be_bytes();
        let mut bytes = 0u64;
        self.session.scan(
            Seek::new(&start, Direction::Forward, self.shape.rows_per_query),
            &mut |k, _| {
                if !k.starts_with(&prefix) {
                    return false;
                }
                bytes += k.len() as u64;
                true
            },
        )?;
        Ok(bytes)
    }

    fn point_query(&mut self, t: u32, ids: &[i64]) -> anyhow::Result<u64> {
        let mut bytes = 0;
        for &id in ids {
            let k = self.key.start(index_id(t, 0)).int(id).as_slice();
            bytes += self.session.get(k)?.unwrap_or(0) as u64;
        }
        Ok(bytes)
    }

    fn analyze(&mut self, _t: u32) -> anyhow::Result<()> {
        Ok(())
    }

    fn maintain(&mut self, action: Maintenance) -> anyhow::Result<()> {
        self.engine.maintain(action)
    }
}
