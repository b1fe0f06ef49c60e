//! A template for a new embedded kv engine (docs/architecture.md, "A kv engine"): an ordered
//! map in memory behind a mutex, written to a file in its data directory on flush and close
//! and read back on open, with two counters as its statistics. `scripts/check-recipes.sh` adds
//! it to a copy of the tree the way the doc says and runs the conformance suite on it, so the
//! recipe cannot drift from the code.

use crate::settings;
use crate::{EngineConfig, EngineEntry};
use fathom_api::kv::{
    Direction, KvEngine, KvSession, KvTxn, Seek, SessionOptions, TxnBody, TxnEnd, Visit,
};
use fathom_api::target::{Counters, Identity, Maintenance, Target};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Its settings (`--set`): each field a knob, its doc comment the help `fathom engines` prints.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MyEngineSettings {
    /// refuse puts beyond this many keys (0: no limit)
    max_keys: u64,
}

impl Default for MyEngineSettings {
    fn default() -> Self {
        MyEngineSettings { max_keys: 0 }
    }
}

pub const ENTRY: EngineEntry = EngineEntry {
    name: "myengine",
    about: "an ordered map in memory, saved to its data directory (the recipe's template)",
    options_doc: "takes no options",
    settings: settings::of::<MyEngineSettings>(),
    version: || Ok(env!("CARGO_PKG_VERSION").to_string()),
    ..EngineEntry::embedded_kv(open)
};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let s: MyEngineSettings = settings::read(&config.settings)?;
    if !config.options.trim().is_empty() {
        anyhow::bail!("engine `{}` takes no options string", ENTRY.name);
    }
    let file = config.data_dir.join("map.bin");
    Ok(Box::new(MyEngine {
        id: Identity::new(
            ENTRY.name,
            (ENTRY.version)()?,
            vec![config.data_dir.clone()],
        ),
        map: Arc::new(Mutex::new(load(&file)?)),
        max_keys: s.max_keys,
        puts: AtomicU64::new(0),
        file,
    }))
}

pub struct MyEngine {
    id: Identity,
    map: Arc<Mutex<Map>>,
    max_keys: u64,
    /// Puts since it opened, a statistic.
    puts: AtomicU64,
    /// Where the map is saved.
    file: PathBuf,
}

/// The map saved in `file` (each entry a key and a value, each after its length as 4 bytes),
/// or an empty one when there is no file yet.
fn load(file: &Path) -> anyhow::Result<Map> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => anyhow::bail!("reading {}: {e}", file.display()),
    };
    let mut map = Map::new();
    let mut rest = bytes.as_slice();
    let take = |rest: &mut &[u8]| -> anyhow::Result<Vec<u8>> {
        let (len, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| anyhow::anyhow!("{}: cut short", file.display()))?;
        let len = u32::from_le_bytes(*len) as usize;
        anyhow::ensure!(tail.len() >= len, "{}: cut short", file.display());
        let (item, tail) = tail.split_at(len);
        *rest = tail;
        Ok(item.to_vec())
    };
    while !rest.is_empty() {
        let key = take(&mut rest)?;
        map.insert(key, take(&mut rest)?);
    }
    Ok(map)
}

impl MyEngine {
    /// Writes the map to its file, through a temporary one so a crash leaves the old.
    fn save(&self) -> anyhow::Result<()> {
        let mut bytes = Vec::new();
        for (k, v) in self.map.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            for item in [k, v] {
                bytes.extend_from_slice(&(item.len() as u32).to_le_bytes());
                bytes.extend_from_slice(item);
            }
        }
        let tmp = self.file.with_extension("tmp");
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &self.file)?;
        Ok(())
    }
}

impl Drop for MyEngine {
    fn drop(&mut self) {
        if let Err(e) = self.save() {
            eprintln!("myengine: saving {}: {e:#}", self.file.display());
        }
    }
}

impl Target for MyEngine {
    fn identity(&self) -> &Identity {
        &self.id
    }

    /// Its statistics: the keys it holds and the puts since it opened (a step's figures are
    /// their changes over the step).
    fn counters(&self) -> Counters {
        let keys = self.map.lock().unwrap_or_else(|p| p.into_inner()).len();
        Counters::from([
            ("myengine.keys".to_string(), keys as f64),
            (
                "myengine.puts".to_string(),
                self.puts.load(Ordering::Relaxed) as f64,
            ),
        ])
    }

    /// A flush saves the map; there is nothing to compact.
    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        match action {
            Maintenance::Flush => self.save(),
            Maintenance::WaitForCompaction | Maintenance::CompactLevel0 => Ok(()),
        }
    }
}

impl KvEngine for MyEngine {
    fn session(&self, _: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        Ok(Box::new(Session { engine: self }))
    }
}

struct Session<'e> {
    engine: &'e MyEngine,
}

impl Session<'_> {
    fn map(&self) -> MutexGuard<'_, Map> {
        self.engine.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Visits up to `seek.limit` entries of `map` from `seek.start` in its direction.
fn scan(map: &Map, seek: Seek, visit: &mut Visit) -> usize {
    let start = seek.start.to_vec();
    let entries: Box<dyn Iterator<Item = (&Vec<u8>, &Vec<u8>)>> = match seek.direction {
        Direction::Forward => Box::new(map.range(start..)),
        Direction::Reverse => Box::new(map.range(..=start).rev()),
        // A forward seek, then backwards: a seek past the last key finds nothing to step
        // back from.
        Direction::PrevFromSeek => match map.range(start..).next().map(|(k, _)| k.clone()) {
            Some(k) => Box::new(map.range(..=k).rev()),
            None => Box::new(std::iter::empty()),
        },
    };
    let mut n = 0;
    for (k, v) in entries.take(seek.limit) {
        n += 1;
        if !visit(k, v) {
            break;
        }
    }
    n
}

impl KvSession for Session<'_> {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        Ok(self.map().get(key).map(Vec::len))
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        let mut map = self.map();
        if self.engine.max_keys > 0 && map.len() as u64 >= self.engine.max_keys {
            anyhow::bail!("{} keys: the engine's max_keys", map.len());
        }
        map.insert(key.to_vec(), value.to_vec());
        self.engine.puts.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.map().remove(key);
        Ok(())
    }
    /// Transactions run one at a time under the map's lock, on a copy applied at commit.
    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        let mut map = self.map();
        let mut txn = Txn { map: map.clone() };
        let end = body(&mut txn)?;
        if end == TxnEnd::Commit {
            *map = txn.map;
        }
        Ok(end)
    }
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        Ok(scan(&self.map(), seek, visit))
    }
}

/// A transaction's view: the map as it will be if it commits.
struct Txn {
    map: Map,
}

impl KvTxn for Txn {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        out.clear();
        Ok(self
            .map
            .get(key)
            .map(|v| out.extend_from_slice(v))
            .is_some())
    }
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        Ok(self.map.get(key).map(Vec::len))
    }
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        Ok(scan(&self.map, seek, visit))
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.map.insert(key.to_vec(), value.to_vec());
        Ok(())
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.map.remove(key);
        Ok(())
    }
}
