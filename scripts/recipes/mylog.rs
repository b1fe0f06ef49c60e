//! A template for an engine of a new family (docs/architecture.md, "A family"): a log in
//! memory behind a mutex, with its appends as a statistic. `scripts/check-recipes.sh` adds it
//! to a copy of the tree with its family and runs a workload on it.

use crate::{EngineConfig, EngineEntry, Opener};
use fathom_api::myfamily::{MyFamilyEngine, MyFamilySession};
use fathom_api::target::{Counters, Identity, Target};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub const ENTRY: EngineEntry = EngineEntry {
    name: "mylog",
    about: "a log in memory (the family recipe's template)",
    options_doc: "takes no options",
    version: || Ok(env!("CARGO_PKG_VERSION").to_string()),
    ..EngineEntry::embedded(Opener::MyFamily(open))
};

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn MyFamilyEngine>> {
    if !config.options.trim().is_empty() {
        anyhow::bail!("engine `{}` takes no options string", ENTRY.name);
    }
    Ok(Box::new(MyLog {
        id: Identity::new(
            ENTRY.name,
            (ENTRY.version)()?,
            vec![config.data_dir.clone()],
        ),
        records: Mutex::new(Vec::new()),
        appends: AtomicU64::new(0),
    }))
}

pub struct MyLog {
    id: Identity,
    records: Mutex<Vec<Vec<u8>>>,
    /// Appends since it opened, a statistic.
    appends: AtomicU64,
}

impl Target for MyLog {
    fn identity(&self) -> &Identity {
        &self.id
    }
    fn counters(&self) -> Counters {
        let mut c = Counters::new();
        c.insert("appends".into(), self.appends.load(Ordering::Relaxed) as f64);
        c
    }
}

impl MyFamilyEngine for MyLog {
    fn session(&self) -> anyhow::Result<Box<dyn MyFamilySession + '_>> {
        Ok(Box::new(MyLogSession { log: self }))
    }
}

struct MyLogSession<'e> {
    log: &'e MyLog,
}

impl MyFamilySession for MyLogSession<'_> {
    fn append(&mut self, record: &[u8]) -> anyhow::Result<u64> {
        let mut records = self.log.records.lock().expect("the log's lock");
        records.push(record.to_vec());
        self.log.appends.fetch_add(1, Ordering::Relaxed);
        Ok(records.len() as u64 - 1)
    }
    fn read(&mut self, position: u64) -> anyhow::Result<Option<Vec<u8>>> {
        let records = self.log.records.lock().expect("the log's lock");
        Ok(records.get(position as usize).cloned())
    }
}
