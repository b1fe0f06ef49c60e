//! A template for a new embedded kv engine (docs/architecture.md, "A kv engine"): an ordered
//! map in memory behind a mutex. `scripts/check-recipes.sh` adds it to a copy of the tree the
//! way the doc says and builds it, so the recipe cannot drift from the code.

use crate::settings::{self, specs};
use crate::{EngineConfig, EngineEntry};
use fathom_core::kv::{
    Direction, KvEngine, KvSession, KvTxn, Seek, SessionOptions, TxnBody, TxnEnd, Visit,
};
use fathom_core::target::{Identity, Target};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
    about: "an ordered map in memory (the recipe's template)",
    options_doc: "takes no options",
    settings: specs::<MyEngineSettings>,
    version: || Ok(env!("CARGO_PKG_VERSION").to_string()),
    ..EngineEntry::embedded_kv(open)
};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let s: MyEngineSettings = settings::read(&config.settings)?;
    if !config.options.trim().is_empty() {
        anyhow::bail!("engine `{}` takes no options string", ENTRY.name);
    }
    Ok(Box::new(MyEngine {
        id: Identity::new(ENTRY.name, (ENTRY.version)()?, vec![config.data_dir.clone()]),
        map: Arc::default(),
        max_keys: s.max_keys,
    }))
}

pub struct MyEngine {
    id: Identity,
    map: Arc<Mutex<Map>>,
    max_keys: u64,
}

impl Target for MyEngine {
    fn identity(&self) -> &Identity {
        &self.id
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
        Direction::PrevFromSeek => {
            let first = map.range(start..).next().map(|(k, _)| k.clone());
            match first {
                Some(k) => Box::new(map.range(..=k).rev()),
                None => Box::new(map.iter().rev()),
            }
        }
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
        Ok(self.map.get(key).map(|v| out.extend_from_slice(v)).is_some())
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
