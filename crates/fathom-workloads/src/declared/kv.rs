//! A declared workload's operations on a kv session, as YCSB's RocksDB binding runs them: a
//! record is one key whose value packs its fields; read is a get, update a get then a put of
//! the merged fields, insert a put, scan a seek and that many entries read, read-modify-write a
//! read then an update, delete a delete.

use super::ops::{Op, Shared, Work};
use super::record::{pack_record, repack_one, unpack, Fields, Keys};
use super::YcsbKind;
use fathom_core::driver::{Client, Done};
use fathom_core::kv::{Direction, KvSession, Seek};
use rand::rngs::SmallRng;
use std::sync::Arc;

pub struct KvClient<'e> {
    session: Box<dyn KvSession + 'e>,
    shared: Arc<Shared>,
    keys: Keys,
    fields: Fields,
    rng: SmallRng,
    work: Work,
    key: Vec<u8>,
    value: Vec<u8>,
    read: Vec<u8>,
    scratch: Vec<u8>,
}

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
            key: Vec::new(),
            value: Vec::new(),
            read: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Puts the record whose key is in `self.key` with fresh fields; its bytes.
    fn insert(&mut self) -> anyhow::Result<u64> {
        pack_record(
            &mut self.fields,
            &mut self.rng,
            &mut self.scratch,
            &mut self.value,
        );
        self.session.put(&self.key, &self.value)?;
        Ok((self.key.len() + self.value.len()) as u64)
    }

    /// Reads the record whose key is in `self.key` into `self.read`: whether it was there.
    fn get(&mut self) -> anyhow::Result<bool> {
        let found = self.session.read(&self.key, &mut self.read)?;
        // The binding decodes the fields it was asked for.
        if found {
            std::hint::black_box(unpack(&self.read));
        }
        Ok(found)
    }

    /// Reads the record in `self.key`, merges new bytes for `field` (or all fields) into it
    /// and writes it back (the binding's update); false when it is not there.
    fn update(&mut self, field: Option<usize>) -> anyhow::Result<bool> {
        if !self.session.read(&self.key, &mut self.read)? {
            return Ok(false);
        }
        match field {
            None => pack_record(
                &mut self.fields,
                &mut self.rng,
                &mut self.scratch,
                &mut self.value,
            ),
            Some(f) => {
                let name = self.fields.names[f].clone();
                repack_one(
                    &self.read,
                    &name,
                    &mut self.fields,
                    &mut self.rng,
                    &mut self.scratch,
                    &mut self.value,
                )
            }
        }
        self.session.put(&self.key, &self.value)?;
        Ok(true)
    }

    fn scan(&mut self, length: usize, done: &mut Done) -> anyhow::Result<()> {
        let (mut rows, mut bytes) = (0u64, 0u64);
        self.session.scan(
            Seek::new(&self.key, Direction::Forward, length),
            &mut |k, v| {
                rows += 1;
                bytes += (k.len() + v.len()) as u64;
                std::hint::black_box(unpack(v));
                true
            },
        )?;
        (done.rows, done.bytes) = (rows, bytes);
        Ok(())
    }

    fn carry_out(&mut self, op: Op) -> anyhow::Result<Done> {
        let mut done = Done::of(op.kind);
        self.keys.key(op.record, &mut self.key);
        let found = match op.kind {
            YcsbKind::Load | YcsbKind::Insert => {
                done.bytes = self.insert()?;
                done.rows = 1;
                if op.kind == YcsbKind::Insert {
                    self.shared.inserted();
                }
                return Ok(done);
            }
            YcsbKind::Scan => {
                self.scan(op.scan_length, &mut done)?;
                return Ok(done);
            }
            YcsbKind::Read => self.get()?,
            YcsbKind::Update => self.update(op.field)?,
            YcsbKind::ReadModifyWrite => self.get()? && self.update(op.field)?,
            YcsbKind::Delete => {
                self.session.delete(&self.key)?;
                true
            }
        };
        // A record that was not there reads 0 rows; YCSB reports it as `READ-FAILED` and counts
        // it in its throughput, as it is counted here.
        done.rows = found as u64;
        if found && op.kind != YcsbKind::Delete {
            done.bytes = self.read.len() as u64;
        }
        Ok(done)
    }
}

impl Client for KvClient<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let fields = self.fields.names.len();
        match self.work.next(&self.shared, &mut self.rng, fields) {
            Some(op) => self.carry_out(op).map(Some),
            None => Ok(None),
        }
    }
}
