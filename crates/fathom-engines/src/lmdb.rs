//! Embedded LMDB through `heed`: a memory-mapped B+tree with one writer at a time. Every put is
//! its own write transaction, so concurrent writers queue on LMDB's writer lock; that is a
//! property of the engine, and the reports show it rather than hide it.

use crate::settings::{self, Size, Switch};
use crate::{EngineConfig, EngineEntry};
use fathom_api::kv::{
    BatchOp, Direction, KvEngine, KvSession, KvTxn, Seek, SessionOptions, TxnBody, TxnEnd, Visit,
};
use fathom_api::options::Syntax;
use fathom_api::stats::EngineStats;
use fathom_api::target::{pages_grown, Counters, Identity, Maintenance, Target};
use heed::types::Bytes;
use heed::{Database, Env, EnvFlags, EnvOpenOptions, RoTxn, RwTxn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Bound;

/// fathom's LMDB settings (`--set`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LmdbSettings {
    /// the memory map's size: the largest the database can grow
    map_size: Size,
    /// fsync at every commit (false sets MDB_NOSYNC)
    sync: Switch,
}

impl Default for LmdbSettings {
    fn default() -> Self {
        LmdbSettings {
            map_size: Size::new("64g"),
            sync: Switch::new("false"),
        }
    }
}

/// The environment flags `--setup` may name, comma-separated, as lmdb.h spells them.
const FLAGS: &[(&str, EnvFlags)] = &[
    ("MDB_NOSYNC", EnvFlags::NO_SYNC),
    ("MDB_NOMETASYNC", EnvFlags::NO_META_SYNC),
    ("MDB_NORDAHEAD", EnvFlags::NO_READ_AHEAD),
    ("MDB_WRITEMAP", EnvFlags::WRITE_MAP),
    ("MDB_MAPASYNC", EnvFlags::MAP_ASYNC),
    ("MDB_NOMEMINIT", EnvFlags::NO_MEM_INIT),
];

pub const ENTRY: EngineEntry = EngineEntry {
    name: "lmdb",
    about: "embedded LMDB (heed's bundled mdb.master); one writer at a time",
    options_doc: "LMDB environment flags, comma-separated as lmdb.h names them: MDB_NOSYNC, MDB_NOMETASYNC, \
                  MDB_NORDAHEAD, MDB_WRITEMAP, MDB_MAPASYNC, MDB_NOMEMINIT (LMDB docs: mdb_env_open)",
    syntax: Syntax::LmdbFlags,
    settings: settings::of::<LmdbSettings>(),
    version,
    code: &["mdb_", "heed::"],
    ..EngineEntry::embedded_kv(open)
};

fn version() -> anyhow::Result<String> {
    let v = heed::lmdb_version();
    Ok(format!("{}.{}.{}", v.major, v.minor, v.patch))
}

pub struct Lmdb {
    env: Env,
    db: Database<Bytes, Bytes>,
    id: Identity,
    flags: String,
}

fn parse_flags(text: &str) -> anyhow::Result<EnvFlags> {
    let mut flags = EnvFlags::empty();
    for name in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (_, f) = FLAGS.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let names: Vec<_> = FLAGS.iter().map(|(n, _)| *n).collect();
            anyhow::anyhow!(
                "LMDB has no flag `{name}` fathom can set; flags: {}",
                names.join(", ")
            )
        })?;
        flags |= *f;
    }
    Ok(flags)
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let s: LmdbSettings = settings::read(&config.settings)?;
    let mut flags = parse_flags(&config.options)?;
    if !s.sync.value {
        flags |= EnvFlags::NO_SYNC;
    }
    let mut options = EnvOpenOptions::new();
    options.map_size(s.map_size.value as usize).max_dbs(1);
    // SAFETY: the flags weaken durability only (NO_SYNC and friends), which is the user's
    // choice; the environment is opened once per process and directory.
    let env = unsafe {
        options.flags(flags);
        options.open(&config.data_dir)
    }
    .map_err(|e| anyhow::anyhow!("opening LMDB in {}: {e}", config.data_dir.display()))?;
    let mut wtxn = env.write_txn()?;
    let db = env.create_database(&mut wtxn, Some("fathom"))?;
    wtxn.commit()?;
    let names: Vec<_> = FLAGS
        .iter()
        .filter(|(_, f)| flags.contains(*f))
        .map(|(n, _)| *n)
        .collect();
    Ok(Box::new(Lmdb {
        env,
        db,
        id: Identity::new(
            ENTRY.name,
            version().unwrap_or_default(),
            vec![config.data_dir.clone()],
        ),
        flags: names.join(","),
    }))
}

impl Target for Lmdb {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        let mut c = Counters::new();
        if let Ok(stat) = self.env.read_txn().and_then(|t| self.db.stat(&t)) {
            c.insert("entries".into(), stat.entries as f64);
            c.insert("depth".into(), f64::from(stat.depth));
            c.insert("branch_pages".into(), stat.branch_pages as f64);
            c.insert("leaf_pages".into(), stat.leaf_pages as f64);
            c.insert("overflow_pages".into(), stat.overflow_pages as f64);
        }
        let info = self.env.info();
        c.insert("last_page".into(), info.last_page_number as f64);
        c
    }

    /// Tree shape at the end of the step, and the growth of the file in pages.
    fn step_stats(&self, before: &Counters, after: &Counters, _seconds: f64) -> EngineStats {
        pages_grown(before, after, "last_page")
    }

    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        match action {
            Maintenance::Flush => Ok(self.env.force_sync()?),
            Maintenance::WaitForCompaction | Maintenance::CompactLevel0 => Ok(()),
        }
    }

    fn effective_options(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("flags".to_string(), self.flags.clone()),
            ("map_size".to_string(), self.env.info().map_size.to_string()),
        ])
    }
}

struct Session<'e> {
    engine: &'e Lmdb,
}

impl KvSession for Session<'_> {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        let txn = self.engine.env.read_txn()?;
        Ok(self.engine.db.get(&txn, key)?.map(<[u8]>::len))
    }

    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        let txn = self.engine.env.read_txn()?;
        let found = self.engine.db.get(&txn, key)?;
        if let Some(v) = found {
            out.clear();
            out.extend_from_slice(v);
        }
        Ok(found.is_some())
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.write_batch(&[BatchOp::Put(key, value)])
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.write_batch(&[BatchOp::Delete(key)])
    }

    /// A write transaction: LMDB runs one at a time, so transactions never conflict.
    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        let mut txn = self.engine.env.write_txn()?;
        // On an error the transaction is dropped, which aborts it.
        let end = body(&mut LmdbTxn {
            db: &self.engine.db,
            txn: &mut txn,
        })?;
        match end {
            TxnEnd::Commit => txn.commit()?,
            TxnEnd::Rollback => txn.abort(),
        }
        Ok(end)
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        let txn = self.engine.env.read_txn()?;
        scan_in(&self.engine.db, &txn, seek, visit)
    }
}

/// Visits up to the seek's limit entries from its start, in `txn`'s view.
fn scan_in(
    db: &Database<Bytes, Bytes>,
    txn: &RoTxn,
    seek: Seek,
    visit: &mut Visit,
) -> anyhow::Result<usize> {
    let (start, direction, limit) = (seek.start, seek.direction, seek.limit);
    let mut n = 0;
    let mut each = |item: heed::Result<(&[u8], &[u8])>| -> anyhow::Result<bool> {
        let (k, v) = item?;
        n += 1;
        Ok(visit(k, v) && n < limit)
    };
    // LMDB has no empty key: from "" a forward scan starts at the first key, and a reverse
    // one finds nothing.
    if limit == 0 || (start.is_empty() && direction == Direction::Reverse) {
        return Ok(0);
    }
    let from = if start.is_empty() {
        Bound::Unbounded
    } else {
        Bound::Included(start)
    };
    match direction {
        Direction::Forward => {
            let range = (from, Bound::Unbounded);
            for item in db.range(txn, &range)? {
                if !each(item)? {
                    break;
                }
            }
        }
        Direction::Reverse => {
            let range = (Bound::Unbounded, Bound::Included(start));
            for item in db.rev_range(txn, &range)? {
                if !each(item)? {
                    break;
                }
            }
        }
        // Two positionings through heed's ranges: the first key at or after the start,
        // then backwards from it.
        Direction::PrevFromSeek => {
            let mut found = db.range(txn, &(from, Bound::Unbounded))?;
            let Some(first) = found.next().transpose()? else {
                return Ok(0);
            };
            let range = (Bound::Unbounded, Bound::Included(first.0));
            for item in db.rev_range(txn, &range)? {
                if !each(item)? {
                    break;
                }
            }
        }
    }
    Ok(n)
}

struct LmdbTxn<'a, 'e> {
    db: &'a Database<Bytes, Bytes>,
    txn: &'a mut RwTxn<'e>,
}

impl KvTxn for LmdbTxn<'_, '_> {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        let found = self.db.get(self.txn, key)?;
        if let Some(v) = found {
            out.clear();
            out.extend_from_slice(v);
        }
        Ok(found.is_some())
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        Ok(self.db.put(self.txn, key, value)?)
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.db.delete(self.txn, key)?;
        Ok(())
    }

    /// The write transaction's view: LMDB has one writer at a time, which sees the latest data.
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        Ok(self.db.get(self.txn, key)?.map(<[u8]>::len))
    }

    /// Its reads take no lock: `read` is the plain read.
    fn read_plain(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.read(key, out)
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        scan_in(self.db, self.txn, seek, visit)
    }
}

impl KvEngine for Lmdb {
    fn session(&self, _options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        Ok(Box::new(Session { engine: self }))
    }
}
