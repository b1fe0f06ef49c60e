//! sysbench on the kv family through the row/index mapping (`crate::rows`): table `sbtestN`'s
//! rows under its primary index (id → k, c, pad) and its index on k as (k, id) keys with empty
//! values. A write event is one transaction, as between sysbench's BEGIN and COMMIT: its reads
//! in the transaction's snapshot, its writes reading the row they change as UPDATE does
//! (`kv_reads_in_trx=off` runs the reads on the session before it; with `skip_trx` each write is
//! its own transaction). A read-only event's reads run on the session, each at the latest data.

use super::events::{Event, Events, Query, Range, RangeKind};
use super::load::{Next, Plan};
use crate::rows::{decode_row, encode_row, index_id, key_int, Col, Key};
use fathom_api::kind::Done;
use fathom_api::kv::{BatchOp, Direction, KvSession, KvTxn, Seek, TxnEnd, Visit};
use fathom_api::retry::retrying;
use fathom_api::step::Client;

const ROW: &[bool] = &[true, false, false];

fn primary(key: &mut Key, table: u32, id: i64) -> &[u8] {
    key.start(index_id(table, 0)).int(id).as_slice()
}

fn secondary(key: &mut Key, table: u32, k: i64, id: i64) -> &[u8] {
    key.start(index_id(table, 1)).int(k).int(id).as_slice()
}

/// A row's (k, c, pad), decoded.
fn parse(row: &[u8]) -> Option<(i64, &[u8], &[u8])> {
    match decode_row(row, ROW)?[..] {
        [Col::Int(k), Col::Bytes(c), Col::Bytes(pad)] => Some((k, c, pad)),
        _ => None,
    }
}

pub struct KvEvents<'e> {
    events: Events,
    session: Box<dyn KvSession + 'e>,
    /// A write event's reads run in its transaction (`kv_reads_in_trx`).
    reads_in_trx: bool,
    run: Runner,
}

/// Where an event's reads run: on the session, each at the latest data, or in the event's
/// transaction, in its snapshot.
enum Reader<'a, 'e> {
    Session(&'a mut (dyn KvSession + 'e)),
    Txn(&'a mut dyn KvTxn),
}

impl Reader<'_, '_> {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        match self {
            Reader::Session(s) => s.get(key),
            Reader::Txn(t) => t.get(key),
        }
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        match self {
            Reader::Session(s) => s.scan(seek, visit),
            Reader::Txn(t) => t.scan(seek, visit),
        }
    }
}

/// What the queries know of the tables, and the buffers events reuse.
struct Runner {
    /// The tables have their index on k (`create_secondary`): writes keep it, and
    /// select_random_points reads through it; without it they scan the rows, as a server would.
    indexed: bool,
    key: Key,
    key2: Key,
    value: Vec<u8>,
    cs: Vec<Vec<u8>>,
}

impl<'e> KvEvents<'e> {
    pub fn new(
        session: Box<dyn KvSession + 'e>,
        events: Events,
        indexed: bool,
        reads_in_trx: bool,
    ) -> KvEvents<'e> {
        KvEvents {
            events,
            session,
            reads_in_trx,
            run: Runner {
                indexed,
                key: Key::default(),
                key2: Key::default(),
                value: Vec::new(),
                cs: Vec::new(),
            },
        }
    }
}

impl Runner {
    /// Reads the event's queries; returns the bytes read.
    fn reads(&mut self, r: &mut Reader, ev: &Event) -> anyhow::Result<u64> {
        let mut bytes = 0u64;
        for q in &ev.queries {
            match *q {
                Query::Point { table, id } => {
                    let k = primary(&mut self.key, table, id);
                    bytes += r.get(k)?.unwrap_or(0) as u64;
                }
                Query::Range(range) => bytes += self.range(r, range)?,
                Query::Points { table } if !self.indexed => {
                    bytes += self.rows_with_k(r, table, &ev.points)?;
                }
                Query::Points { table } => bytes += self.points(r, table, &ev.points)?,
                _ => {}
            }
        }
        Ok(bytes)
    }

    /// `SELECT ... WHERE k IN (points)` through the index on k: each k's ids, then their rows.
    fn points(&mut self, r: &mut Reader, table: u32, points: &[i64]) -> anyhow::Result<u64> {
        let mut bytes = 0u64;
        for &kv in points {
            let mut ids = Vec::new();
            let prefix = self.key.start(index_id(table, 1)).int(kv).as_slice();
            r.scan(
                Seek::new(prefix, Direction::Forward, usize::MAX),
                &mut |k, _| {
                    if !k.starts_with(prefix) {
                        return false;
                    }
                    ids.extend(key_int(k, 12));
                    true
                },
            )?;
            for id in ids {
                let k = primary(&mut self.key2, table, id);
                bytes += r.get(k)?.unwrap_or(0) as u64;
            }
        }
        Ok(bytes)
    }

    /// `SELECT ... WHERE k IN (points)` without an index on k: every row of the table read,
    /// the matching ones kept; returns the bytes of the matching rows.
    fn rows_with_k(&mut self, r: &mut Reader, table: u32, points: &[i64]) -> anyhow::Result<u64> {
        let mut bytes = 0u64;
        let prefix = index_id(table, 0).to_be_bytes();
        let from = self.key.start(index_id(table, 0)).as_slice();
        r.scan(
            Seek::new(from, Direction::Forward, usize::MAX),
            &mut |k, v| {
                if !k.starts_with(&prefix) {
                    return false;
                }
                if parse(v).is_some_and(|(kv, _, _)| points.contains(&kv)) {
                    bytes += v.len() as u64;
                }
                true
            },
        )?;
        Ok(bytes)
    }

    /// Runs one range query as the server would: scan, sum, sort or deduplicate; returns the
    /// bytes read.
    fn range(&mut self, reader: &mut Reader, r: Range) -> anyhow::Result<u64> {
        let mut bytes = 0u64;
        self.cs.clear();
        let mut sum = 0i64;
        let limit = (r.end - r.start + 1).max(0) as usize;
        let cs = &mut self.cs;
        let from = primary(&mut self.key, r.table, r.start);
        reader.scan(Seek::new(from, Direction::Forward, limit), &mut |k, v| {
            if key_int(k, 4).is_none_or(|id| id > r.end) {
                return false;
            }
            bytes += v.len() as u64;
            if let Some((kv, c, _)) = parse(v) {
                sum += kv;
                if r.kind != RangeKind::Sum {
                    cs.push(c.to_vec());
                }
            }
            true
        })?;
        // ORDER BY c and DISTINCT are the client's work here, as the server's there.
        match r.kind {
            RangeKind::Order => cs.sort_unstable(),
            RangeKind::Distinct => {
                cs.sort_unstable();
                cs.dedup();
            }
            _ => {}
        }
        std::hint::black_box((sum, &cs));
        Ok(bytes)
    }

    /// Performs one write query inside `txn`, keeping the index on k when the tables have it.
    fn write(&mut self, txn: &mut dyn KvTxn, q: &Query, ev: &Event) -> anyhow::Result<()> {
        let (table, id) = match *q {
            Query::IndexUpdate { table, id }
            | Query::NonIndexUpdate { table, id }
            | Query::DeleteInsert { table, id, .. } => (table, id),
            _ => return Ok(()),
        };
        let (key2, value, indexed) = (&mut self.key2, &mut self.value, self.indexed);
        let pk = primary(&mut self.key, table, id).to_vec();
        let mut row = Vec::new();
        let found = txn.read(&pk, &mut row)?;
        let old = if found { parse(&row) } else { None };
        match *q {
            Query::IndexUpdate { .. } => {
                if let Some((k, c, pad)) = old {
                    if indexed {
                        txn.delete(secondary(key2, table, k, id))?;
                        txn.put(secondary(key2, table, k + 1, id), b"")?;
                    }
                    encode_row(&[Col::Int(k + 1), Col::Bytes(c), Col::Bytes(pad)], value);
                    txn.put(&pk, value)?;
                }
            }
            Query::NonIndexUpdate { .. } => {
                if let Some((k, _, pad)) = old {
                    encode_row(
                        &[Col::Int(k), Col::Bytes(ev.c.as_bytes()), Col::Bytes(pad)],
                        value,
                    );
                    txn.put(&pk, value)?;
                }
            }
            Query::DeleteInsert { k: new_k, .. } => {
                if let Some((k, _, _)) = old {
                    txn.delete(&pk)?;
                    if indexed {
                        txn.delete(secondary(key2, table, k, id))?;
                    }
                }
                encode_row(
                    &[
                        Col::Int(new_k),
                        Col::Bytes(ev.c.as_bytes()),
                        Col::Bytes(ev.pad.as_bytes()),
                    ],
                    value,
                );
                txn.put(&pk, value)?;
                if indexed {
                    txn.put(secondary(key2, table, new_k, id), b"")?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Runs the event's `queries` in one transaction (its reads too when `with_reads`), again after
/// a conflict; returns the bytes read and how many times it ran again.
fn transact<'q, I: Iterator<Item = &'q Query>>(
    session: &mut dyn KvSession,
    run: &mut Runner,
    ev: &Event,
    queries: impl Fn() -> I,
    with_reads: bool,
) -> anyhow::Result<(u64, u32)> {
    let mut bytes = 0;
    let (_, retries) = retrying(|| {
        session.transaction(&mut |t| {
            if with_reads {
                bytes = run.reads(&mut Reader::Txn(t), ev)?;
            }
            for q in queries().filter(|q| q.is_write()) {
                run.write(t, q, ev)?;
            }
            Ok(TxnEnd::Commit)
        })
    })?;
    Ok((bytes, retries))
}

impl Client for KvEvents<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let ev = self.events.next_event();
        let (session, run) = (self.session.as_mut(), &mut self.run);
        let writes = || ev.queries.iter().filter(|q| q.is_write());
        let has_writes = writes().next().is_some();
        let (bytes, retries) = if ev.trx && self.reads_in_trx && has_writes {
            // BEGIN; the reads; the writes; COMMIT: one transaction, reads in its snapshot.
            transact(session, run, ev, || ev.queries.iter(), true)?
        } else {
            let bytes = run.reads(&mut Reader::Session(session), ev)?;
            let mut retries = 0;
            if ev.trx && has_writes {
                retries = transact(session, run, ev, writes, false)?.1;
            } else {
                // Without BEGIN each write is its own transaction.
                for q in writes() {
                    retries += transact(session, run, ev, || std::iter::once(q), false)?.1;
                }
            }
            (bytes, retries)
        };
        Ok(Some(self.events.done(bytes, retries)))
    }
}

/// The prepare step on a kv engine: each table's rows with their index entries, `batch` rows
/// to an atomic batch (the index is written with the rows: a blind put per row).
pub struct KvLoad<'e> {
    session: Box<dyn KvSession + 'e>,
    plan: Plan,
}

impl<'e> KvLoad<'e> {
    pub fn new(session: Box<dyn KvSession + 'e>, plan: Plan) -> KvLoad<'e> {
        KvLoad { session, plan }
    }
}

impl Client for KvLoad<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        loop {
            match self.plan.next() {
                Next::Finished => return Ok(None),
                Next::Table(_) | Next::TableDone(_) => {}
                Next::Batch { table, first, n } => return self.insert(table, first, n).map(Some),
            }
        }
    }
}

impl KvLoad<'_> {
    /// Writes rows `first..first + n` of `table` with their index entries in one batch.
    fn insert(&mut self, table: u32, first: i64, n: i64) -> anyhow::Result<Done> {
        let create_secondary = self.plan.create_secondary;
        let rows = &mut self.plan.rows;
        let mut keys: Vec<Vec<u8>> = Vec::with_capacity(2 * n as usize);
        let mut values: Vec<Vec<u8>> = Vec::with_capacity(n as usize);
        let mut key = Key::default();
        for i in 0..n {
            let id = first + i;
            let k = rows.next_row();
            let mut v = Vec::new();
            encode_row(
                &[
                    Col::Int(k),
                    Col::Bytes(rows.c.as_bytes()),
                    Col::Bytes(rows.pad.as_bytes()),
                ],
                &mut v,
            );
            keys.push(primary(&mut key, table, id).to_vec());
            values.push(v);
            if create_secondary {
                keys.push(secondary(&mut key, table, k, id).to_vec());
            }
        }
        let per_row = if create_secondary { 2 } else { 1 };
        let ops: Vec<BatchOp> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                if i % per_row == 0 {
                    BatchOp::Put(k, &values[i / per_row])
                } else {
                    BatchOp::Put(k, b"")
                }
            })
            .collect();
        if n > 0 {
            self.session.write_batch(&ops)?;
        }
        let bytes = keys.iter().map(|k| k.len()).sum::<usize>()
            + values.iter().map(|v| v.len()).sum::<usize>();
        Ok(Done {
            bytes: bytes as u64,
            ..super::load::rows_done(n)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::events::{Rows, Shape, Test};
    use super::super::rand::{RandType, SbRand};
    use super::*;
    use fathom_api::family::Engine;
    use fathom_api::kv::SessionOptions;
    use std::collections::BTreeSet;

    /// (k, id) pairs.
    type Pairs = BTreeSet<(i64, i64)>;

    /// Every (k, id) of the rows, and every (k, id) of the index on k.
    fn rows_and_index(s: &mut dyn KvSession) -> (Pairs, Pairs) {
        let rows = pairs(s, 0, |k, v| (parse(v).unwrap().0, key_int(k, 4).unwrap()));
        let index = pairs(s, 1, |k, _| {
            (key_int(k, 4).unwrap(), key_int(k, 12).unwrap())
        });
        (rows, index)
    }

    /// A pair from every entry of table 1's index `index` (0: the rows).
    fn pairs(
        s: &mut dyn KvSession,
        index: u32,
        pair: impl Fn(&[u8], &[u8]) -> (i64, i64),
    ) -> Pairs {
        let mut out = BTreeSet::new();
        let id = index_id(1, index);
        let start = Key::default().start(id).as_slice().to_vec();
        let seek = Seek::new(&start, Direction::Forward, usize::MAX);
        s.scan(seek, &mut |k, v| {
            let inside = k.starts_with(&id.to_be_bytes());
            if inside {
                out.insert(pair(k, v));
            }
            inside
        })
        .unwrap();
        out
    }

    /// sysbench's read_write on one table of 500 rows, with every kind of statement.
    fn read_write(seed: u64) -> Events {
        let shape = Shape {
            tables: 1,
            table_size: 500,
            range_size: 10,
            point_selects: 2,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            range_selects: true,
            index_updates: 2,
            non_index_updates: 1,
            delete_inserts: 2,
            random_points: 3,
            skip_trx: false,
        };
        Events::new(
            Test::ReadWrite,
            shape,
            SbRand::new(RandType::Uniform, seed),
            0,
            1,
        )
    }

    /// Loads table 1 (with its index on k when `indexed`) on kv SQLite in `dir`, runs 400
    /// read_write events, and returns the rows' and the index's (k, id) pairs.
    fn load_and_write(dir: &std::path::Path, indexed: bool) -> (Pairs, Pairs) {
        let entry = fathom_engines::find("sqlite").unwrap();
        let config = fathom_engines::EngineConfig {
            data_dir: dir.to_path_buf(),
            ..Default::default()
        };
        let Engine::Kv(engine) = fathom_engines::open(entry, &config).unwrap() else {
            panic!("sqlite is a kv engine");
        };
        let rows = Rows {
            rand: SbRand::new(RandType::Uniform, 1),
            table_size: 500,
            c: String::new(),
            pad: String::new(),
        };
        let session = || engine.session(SessionOptions::default()).unwrap();
        let mut load = KvLoad::new(session(), Plan::new(vec![1], rows, 64, indexed));
        while load.next().unwrap().is_some() {}
        let mut client = KvEvents::new(session(), read_write(2), indexed, true);
        for _ in 0..400 {
            assert!(client.next().unwrap().unwrap().bytes > 0);
        }
        let pairs = rows_and_index(session().as_mut());
        pairs
    }

    #[test]
    fn writes_keep_the_index_on_k_consistent_with_the_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (r, i) = load_and_write(dir.path(), true);
        assert_eq!(r.len(), 500, "delete+insert keeps every id");
        assert_eq!(r, i, "every row has its index entry and no entry is stale");
        let before: BTreeSet<i64> = (1..=500).collect();
        assert_eq!(r.iter().map(|(_, id)| *id).collect::<BTreeSet<_>>(), before);
    }

    /// With create_secondary=off the tables have no index on k, as on a server: writes add
    /// no entries to one.
    #[test]
    fn without_the_index_on_k_writes_keep_none() {
        let dir = tempfile::tempdir().unwrap();
        let (r, i) = load_and_write(dir.path(), false);
        assert_eq!((r.len(), i.len()), (500, 0));
    }
}
