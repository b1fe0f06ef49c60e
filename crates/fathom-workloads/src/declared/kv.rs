//! A declared workload's operations on a kv session, as YCSB's RocksDB binding runs them: a
//! record is one key whose value packs its fields; read is a get, update a get then a put of
//! the merged fields, insert a put, scan a seek and that many entries read, read-modify-write a
//! read then an update, delete a delete.

use super::gen::{Chooser, Length};
use super::record::{pack_record, repack_one, unpack, Fields, Keys};
use super::YcsbKind;
use fathom_core::driver::{Client, Done};
use fathom_core::kv::{Direction, KvSession, Seek};
use rand::rngs::SmallRng;
use rand::Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a step's clients share: the next record the load inserts, the next a phase's insert
/// takes, and how many of those are done (the newest record `latest` and every chooser may
/// draw, as YCSB's acknowledged insert counter).
#[derive(Debug)]
pub struct Shared {
    pub records: u64,
    pub load_next: AtomicU64,
    pub insert_next: AtomicU64,
    pub inserted: AtomicU64,
}

impl Shared {
    pub fn new(records: u64) -> Arc<Shared> {
        Arc::new(Shared {
            records,
            load_next: AtomicU64::new(0),
            insert_next: AtomicU64::new(records),
            inserted: AtomicU64::new(0),
        })
    }

    /// The highest record number inserted so far.
    #[inline]
    fn newest(&self) -> u64 {
        self.records - 1 + self.inserted.load(Ordering::Relaxed)
    }
}

/// One phase's operation choices for one client.
pub struct Plan {
    /// Cumulative shares of read, update, insert, scan, read-modify-write, delete.
    pub cumulative: [f64; 6],
    pub chooser: Chooser,
    pub scan_length: Length,
    /// An update writes every field (YCSB's `writeallfields`), else one chosen uniformly. (A
    /// read gets the whole value on a kv engine either way: `readallfields` changes only what
    /// the binding decodes.)
    pub write_all_fields: bool,
    /// Operations this client performs; `None` until the step's time is up.
    pub quota: Option<u64>,
}

/// What the client does: load its share of the records, or run a phase's mix.
pub enum Work {
    Load,
    Run(Box<Plan>),
}

pub struct KvClient<'e> {
    pub session: Box<dyn KvSession + 'e>,
    pub shared: Arc<Shared>,
    pub keys: Keys,
    pub fields: Fields,
    pub rng: SmallRng,
    pub work: Work,
    key: String,
    value: Vec<u8>,
    read: Vec<u8>,
    scratch: Vec<u8>,
}

const KINDS: [YcsbKind; 6] = [
    YcsbKind::Read,
    YcsbKind::Update,
    YcsbKind::Insert,
    YcsbKind::Scan,
    YcsbKind::ReadModifyWrite,
    YcsbKind::Delete,
];

impl<'e> KvClient<'e> {
    pub fn new(
        session: Box<dyn KvSession + 'e>,
        shared: Arc<Shared>,
        keys: Keys,
        fields: Fields,
        rng: SmallRng,
        work: Work,
    ) -> KvClient<'e> {
        KvClient {
            session,
            shared,
            keys,
            fields,
            rng,
            work,
            key: String::new(),
            value: Vec::new(),
            read: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Puts record `n` with fresh fields; its bytes.
    fn insert(&mut self, n: u64) -> anyhow::Result<u64> {
        self.keys.key(n, &mut self.key);
        pack_record(
            &mut self.fields,
            &mut self.rng,
            &mut self.scratch,
            &mut self.value,
        );
        self.session.put(self.key.as_bytes(), &self.value)?;
        Ok((self.key.len() + self.value.len()) as u64)
    }

    /// Reads the record whose key is in `self.key` into `self.read`: whether it was there.
    fn get(&mut self) -> anyhow::Result<bool> {
        let found = self.session.read(self.key.as_bytes(), &mut self.read)?;
        // The binding decodes the fields it was asked for.
        if found {
            std::hint::black_box(unpack(&self.read));
        }
        Ok(found)
    }

    /// Reads the record in `self.key`, merges new fields into it and writes it back (the
    /// binding's update); false when it is not there.
    fn update(&mut self, all: bool) -> anyhow::Result<bool> {
        if !self.session.read(self.key.as_bytes(), &mut self.read)? {
            return Ok(false);
        }
        if all {
            pack_record(
                &mut self.fields,
                &mut self.rng,
                &mut self.scratch,
                &mut self.value,
            );
        } else {
            let field = self.rng.gen_range(0..self.fields.names.len());
            let name = self.fields.names[field].clone();
            repack_one(
                &self.read,
                &name,
                &mut self.fields,
                &mut self.rng,
                &mut self.scratch,
                &mut self.value,
            );
        }
        self.session.put(self.key.as_bytes(), &self.value)?;
        Ok(true)
    }

    fn run(&mut self) -> anyhow::Result<Option<Done>> {
        let Work::Run(plan) = &mut self.work else {
            unreachable!("run on a load client")
        };
        if let Some(q) = &mut plan.quota {
            if *q == 0 {
                return Ok(None);
            }
            *q -= 1;
        }
        let u: f64 = self.rng.gen();
        let op = plan
            .cumulative
            .iter()
            .position(|&c| u < c)
            .unwrap_or(plan.cumulative.len() - 1);
        let kind = KINDS[op];
        let mut done = Done::of(kind);
        if kind == YcsbKind::Insert {
            let n = self.shared.insert_next.fetch_add(1, Ordering::Relaxed);
            done.bytes = self.insert(n)?;
            self.shared.inserted.fetch_add(1, Ordering::Relaxed);
            return Ok(Some(done));
        }
        let newest = self.shared.newest();
        let n = plan.chooser.next(&mut self.rng, newest);
        let write_all = plan.write_all_fields;
        let scan_len = if kind == YcsbKind::Scan {
            plan.scan_length.next(&mut self.rng) as usize
        } else {
            0
        };
        self.keys.key(n, &mut self.key);
        let found = match kind {
            YcsbKind::Read => self.get()?,
            YcsbKind::Update => self.update(write_all)?,
            YcsbKind::ReadModifyWrite => self.get()? && self.update(write_all)?,
            YcsbKind::Delete => {
                self.session.delete(self.key.as_bytes())?;
                true
            }
            YcsbKind::Scan => {
                let mut rows = 0u64;
                let mut bytes = 0u64;
                self.session.scan(
                    Seek::new(self.key.as_bytes(), Direction::Forward, scan_len),
                    &mut |k, v| {
                        rows += 1;
                        bytes += (k.len() + v.len()) as u64;
                        std::hint::black_box(unpack(v));
                        true
                    },
                )?;
                done.rows = rows;
                done.bytes = bytes;
                true
            }
            YcsbKind::Insert | YcsbKind::Load => unreachable!("inserts return above"),
        };
        if kind != YcsbKind::Scan {
            done.rows = found as u64;
            done.bytes = if found { self.read.len() as u64 } else { 0 };
        }
        // A record that was not there reads 0 rows; YCSB reports it as `READ-FAILED` and counts it
        // in its throughput, as it is counted here.
        Ok(Some(done))
    }
}

impl Client for KvClient<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        match self.work {
            Work::Load => {
                let n = self.shared.load_next.fetch_add(1, Ordering::Relaxed);
                if n >= self.shared.records {
                    return Ok(None);
                }
                let mut done = Done::of(YcsbKind::Load);
                done.bytes = self.insert(n)?;
                done.rows = 1;
                Ok(Some(done))
            }
            Work::Run(_) => self.run(),
        }
    }
}
