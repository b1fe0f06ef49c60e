//! A declared workload's operations on a kv session, as YCSB's RocksDB binding runs them: a
//! record is one key whose value packs its fields; read is a get, update a get then a put of
//! the merged fields, insert a put, scan a seek and that many entries read, read-modify-write a
//! read then an update, delete a delete.

use super::ops::{Carry, Core, Op};
use super::record::{each_field, pack_record, repack_one};
use super::YcsbKind;
use fathom_core::driver::Done;
use fathom_core::kv::{Direction, KvSession, Seek};

pub struct KvStore<'e> {
    session: Box<dyn KvSession + 'e>,
    value: Vec<u8>,
    read: Vec<u8>,
    scratch: Vec<u8>,
}

impl<'e> KvStore<'e> {
    pub fn new(session: Box<dyn KvSession + 'e>) -> KvStore<'e> {
        KvStore {
            session,
            value: Vec::new(),
            read: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Puts the record at hand with fresh fields; its bytes.
    fn insert(&mut self, core: &mut Core) -> anyhow::Result<u64> {
        pack_record(
            &mut core.fields,
            &mut core.rng,
            &mut self.scratch,
            &mut self.value,
        );
        self.session.put(&core.key, &self.value)?;
        Ok((core.key.len() + self.value.len()) as u64)
    }

    /// Reads the record at hand into `self.read`: whether it was there.
    fn get(&mut self, core: &Core) -> anyhow::Result<bool> {
        let found = self.session.read(&core.key, &mut self.read)?;
        // The binding decodes the fields it was asked for.
        if found {
            each_field(&self.read, |n, v| {
                std::hint::black_box((n, v));
            });
        }
        Ok(found)
    }

    /// Reads the record at hand, merges new bytes for `field` (or all fields) into it and
    /// writes it back (the binding's update); false when it is not there.
    fn update(&mut self, core: &mut Core, field: Option<usize>) -> anyhow::Result<bool> {
        if !self.session.read(&core.key, &mut self.read)? {
            return Ok(false);
        }
        match field {
            None => pack_record(
                &mut core.fields,
                &mut core.rng,
                &mut self.scratch,
                &mut self.value,
            ),
            Some(f) => repack_one(
                &self.read,
                f,
                &mut core.fields,
                &mut core.rng,
                &mut self.scratch,
                &mut self.value,
            ),
        }
        self.session.put(&core.key, &self.value)?;
        Ok(true)
    }

    fn scan(&mut self, core: &Core, length: usize, done: &mut Done) -> anyhow::Result<()> {
        let (mut rows, mut bytes) = (0u64, 0u64);
        self.session.scan(
            Seek::new(&core.key, Direction::Forward, length),
            &mut |k, v| {
                rows += 1;
                bytes += (k.len() + v.len()) as u64;
                each_field(v, |n, v| {
                    std::hint::black_box((n, v));
                });
                true
            },
        )?;
        (done.rows, done.bytes) = (rows, bytes);
        Ok(())
    }
}

impl Carry for KvStore<'_> {
    fn carry_out(&mut self, core: &mut Core, op: Op) -> anyhow::Result<Done> {
        let mut done = Done::of(op.kind);
        let found = match op.kind {
            YcsbKind::Load | YcsbKind::Insert => {
                done.bytes = self.insert(core)?;
                done.rows = 1;
                return Ok(done);
            }
            YcsbKind::Scan => {
                self.scan(core, op.scan_length, &mut done)?;
                return Ok(done);
            }
            YcsbKind::Read => self.get(core)?,
            YcsbKind::Update => self.update(core, op.field)?,
            YcsbKind::ReadModifyWrite => self.get(core)? && self.update(core, op.field)?,
            YcsbKind::Delete => {
                self.session.delete(&core.key)?;
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
