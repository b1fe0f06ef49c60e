//! A declared workload's operations on a kv session, as YCSB's RocksDB binding runs them: a
//! record is one key whose value packs its fields; read is a get, update a get then a put of
//! the merged fields, insert a put, scan a seek and that many entries read, read-modify-write a
//! read then an update, delete a delete. With `kv_value = "raw"` the value is the one field's
//! bytes, as db_bench's.

use super::ops::{Carry, Core, Op};
use super::record::{each_field, pack_record, repack_one};
use super::YcsbKind;
use fathom_api::kind::Done;
use fathom_api::kv::{Direction, KvSession, Seek};

pub struct KvStore<'e> {
    session: Box<dyn KvSession + 'e>,
    value: Vec<u8>,
    read: Vec<u8>,
    scratch: Vec<u8>,
    /// A value is the one field's bytes, not the packed fields.
    raw: bool,
}

impl<'e> KvStore<'e> {
    pub fn new(session: Box<dyn KvSession + 'e>, raw: bool) -> KvStore<'e> {
        KvStore {
            session,
            value: Vec::new(),
            read: Vec::new(),
            scratch: Vec::new(),
            raw,
        }
    }

    /// Fresh bytes for every field of the record at hand into `self.value`.
    fn fresh_value(&mut self, core: &mut Core) {
        match self.raw {
            true => core.fresh(&mut self.value),
            false => pack_record(
                &mut core.fields,
                &mut core.rng,
                &mut self.scratch,
                &mut self.value,
            ),
        }
    }

    /// Puts the record at hand with fresh fields; its bytes.
    fn insert(&mut self, core: &mut Core) -> anyhow::Result<u64> {
        self.fresh_value(core);
        self.session.put(&core.key, &self.value)?;
        Ok((core.key.len() + self.value.len()) as u64)
    }

    /// Reads the record at hand: its value's bytes when it was there. Packed fields are read
    /// into `self.read` and decoded, as the binding does; a raw value is only looked up, as
    /// db_bench's readrandom does (no copy).
    fn get(&mut self, core: &Core) -> anyhow::Result<Option<usize>> {
        if self.raw {
            return self.session.get(&core.key);
        }
        if !self.session.read(&core.key, &mut self.read)? {
            return Ok(None);
        }
        each_field(&self.read, |n, v| {
            std::hint::black_box((n, v));
        });
        Ok(Some(self.read.len()))
    }

    /// Reads the record at hand, merges new bytes for `field` (or all fields) into it and
    /// writes it back (the binding's update; a raw value is looked up and overwritten, as
    /// db_bench's updaterandom): the bytes it read, `None` when it is not there.
    fn update(&mut self, core: &mut Core, field: Option<usize>) -> anyhow::Result<Option<usize>> {
        let found = match self.raw {
            true => self.session.get(&core.key)?,
            false => (self.session.read(&core.key, &mut self.read)?).then_some(self.read.len()),
        };
        if found.is_none() {
            return Ok(None);
        }
        match field {
            Some(f) if !self.raw => repack_one(
                &self.read,
                f,
                &mut core.fields,
                &mut core.rng,
                &mut self.scratch,
                &mut self.value,
            ),
            _ => self.fresh_value(core),
        }
        self.session.put(&core.key, &self.value)?;
        Ok(found)
    }

    fn scan(&mut self, core: &Core, length: usize, done: &mut Done) -> anyhow::Result<()> {
        let (mut rows, mut bytes) = (0u64, 0u64);
        let raw = self.raw;
        self.session.scan(
            Seek::new(&core.key, Direction::Forward, length),
            &mut |k, v| {
                rows += 1;
                bytes += (k.len() + v.len()) as u64;
                if !raw {
                    each_field(v, |n, v| {
                        std::hint::black_box((n, v));
                    });
                }
                true
            },
        )?;
        (done.rows, done.bytes) = (rows, bytes);
        Ok(())
    }
}

impl Carry for KvStore<'_> {
    #[inline(always)]
    fn carry_out(&mut self, core: &mut Core, op: Op) -> anyhow::Result<Done> {
        let mut done = Done::of(op.kind);
        let bytes = match op.kind {
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
            YcsbKind::ReadModifyWrite => match self.get(core)? {
                Some(_) => self.update(core, op.field)?,
                None => None,
            },
            YcsbKind::Delete => {
                self.session.delete(&core.key)?;
                Some(0)
            }
        };
        // A record that was not there reads 0 rows; YCSB reports it as `READ-FAILED` and counts
        // it in its throughput, as it is counted here.
        done.rows = bytes.is_some() as u64;
        done.bytes = bytes.unwrap_or(0) as u64;
        Ok(done)
    }
}
