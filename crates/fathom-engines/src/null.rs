//! The null engine stores nothing and answers every read with "not found": running a workload
//! on it measures what the harness itself costs per operation.

use crate::{EngineConfig, EngineEntry};
use fathom_core::doc::bson::Document;
use fathom_core::doc::{Count, DocVisit, Find, Update, Updated};
use fathom_core::kv::{KvEngine, KvSession, KvTxn, Seek, SessionOptions, TxnBody, TxnEnd, Visit};
use fathom_core::target::{Identity, Target};
use std::path::PathBuf;

pub const ENTRY: EngineEntry = EngineEntry {
    name: "null",
    about: "stores nothing; measures the harness's own cost per operation",
    options_doc: "takes no options",
    version,
    ..EngineEntry::embedded_kv(open)
};

fn version() -> anyhow::Result<String> {
    Ok(env!("CARGO_PKG_VERSION").to_string())
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    if !config.options.trim().is_empty() {
        anyhow::bail!(
            "engine `null` takes no options string (got `{}`)",
            config.options
        );
    }
    Ok(Box::new(Null::new(config.data_dir.clone())))
}

pub struct Null {
    id: Identity,
}

impl Null {
    /// A null engine for calibration, outside the registry's validation.
    pub fn new(dir: PathBuf) -> Null {
        Null {
            id: Identity::new(ENTRY.name, version().unwrap_or_default(), vec![dir]),
        }
    }
}

impl Target for Null {
    fn identity(&self) -> &Identity {
        &self.id
    }
}

struct NullSession;

impl KvTxn for NullSession {
    fn read(&mut self, key: &[u8], _out: &mut Vec<u8>) -> anyhow::Result<bool> {
        std::hint::black_box(key);
        Ok(false)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        std::hint::black_box((key, value));
        Ok(())
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        std::hint::black_box(key);
        Ok(())
    }
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        KvSession::get(self, key)
    }
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        KvSession::scan(self, seek, visit)
    }
}

impl KvSession for NullSession {
    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        body(&mut NullSession)
    }
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        std::hint::black_box(key);
        Ok(None)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        KvTxn::put(self, key, value)
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        KvTxn::delete(self, key)
    }
    fn scan(&mut self, seek: Seek, _visit: &mut Visit) -> anyhow::Result<usize> {
        std::hint::black_box(seek);
        Ok(0)
    }
}

impl KvEngine for Null {
    fn session(&self, _options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        Ok(Box::new(NullSession))
    }
}

/// The null engine as a SQL database: statements prepare and run, return no rows and change
/// none, so a sql workload's own cost can be calibrated on it.
impl fathom_core::sql::SqlEngine for Null {
    fn dialect(&self) -> fathom_core::sql::Dialect {
        fathom_core::sql::Dialect::MariaDb
    }
    fn connect(&self) -> anyhow::Result<Box<dyn fathom_core::sql::SqlConn + '_>> {
        Ok(Box::new(NullConn(0)))
    }
}

struct NullConn(usize);

impl fathom_core::sql::SqlConn for NullConn {
    fn exec(&mut self, _sql: &str) -> anyhow::Result<()> {
        Ok(())
    }
    fn prepare(&mut self, _sql: &str) -> anyhow::Result<fathom_core::sql::Stmt> {
        self.0 += 1;
        Ok(fathom_core::sql::Stmt(self.0 - 1))
    }
    /// Text statements cost the harness nothing more here: the writing-in of values is the
    /// server client's (measured on the real engine).
    fn prepare_text(&mut self, sql: &str) -> anyhow::Result<fathom_core::sql::Stmt> {
        self.prepare(sql)
    }
    fn run_with(
        &mut self,
        _stmt: fathom_core::sql::Stmt,
        params: &[fathom_core::sql::Value<'_>],
        _keep: fathom_core::sql::Keep,
    ) -> fathom_core::sql::Ran {
        std::hint::black_box(params);
        Ok(fathom_core::sql::Outcome::default())
    }
}

/// The null engine as a document server: every statement is taken and does nothing, reads
/// return no documents, so a doc workload's own cost (building its BSON) can be calibrated.
impl fathom_core::doc::DocEngine for Null {
    fn session(&self) -> anyhow::Result<Box<dyn fathom_core::doc::DocSession + '_>> {
        Ok(Box::new(NullDocs))
    }
    fn transactions(&self) -> bool {
        true
    }
    fn drop_collections(&self, _colls: &[&str]) -> anyhow::Result<()> {
        Ok(())
    }
    fn create_indexes(
        &self,
        _coll: &str,
        _indexes: &[fathom_core::doc::Index],
    ) -> anyhow::Result<()> {
        Ok(())
    }
}

struct NullDocs;

impl fathom_core::doc::DocSession for NullDocs {
    fn insert(&mut self, _coll: &str, docs: &[Document], _ordered: bool) -> Count {
        std::hint::black_box(docs);
        Ok(docs.len() as u64)
    }
    fn find(&mut self, _coll: &str, find: Find<'_>, _visit: &mut DocVisit) -> Count {
        std::hint::black_box(find);
        Ok(0)
    }
    fn aggregate(&mut self, _coll: &str, pipeline: &[Document], _visit: &mut DocVisit) -> Count {
        std::hint::black_box(pipeline);
        Ok(0)
    }
    fn distinct(&mut self, _coll: &str, _field: &str, filter: &Document) -> Count {
        std::hint::black_box(filter);
        Ok(0)
    }
    fn update(&mut self, _coll: &str, update: Update<'_>) -> anyhow::Result<Updated> {
        std::hint::black_box(update);
        Ok(Updated::default())
    }
    fn delete(&mut self, _coll: &str, filter: &Document, _many: bool) -> Count {
        std::hint::black_box(filter);
        Ok(0)
    }
    fn count(&mut self, _coll: &str, filter: &Document) -> Count {
        std::hint::black_box(filter);
        Ok(0)
    }
    fn begin(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn commit(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn abort(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}
