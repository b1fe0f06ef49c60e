//! The run's engine: opened once as the run starts, and closed and opened again before a step
//! that asks (db_bench runs each step of benchmark.sh as a process of its own).

use anyhow::Context;
use fathom_core::family::Engine;
use fathom_engines::{EngineConfig, EngineEntry};

pub struct OpenEngine {
    entry: &'static EngineEntry,
    config: EngineConfig,
    /// `None` only after a reopen failed to open it again.
    engine: Option<Engine>,
}

impl OpenEngine {
    pub fn open(entry: &'static EngineEntry, config: EngineConfig) -> anyhow::Result<Self> {
        let engine = fathom_engines::open(entry, &config)?;
        Ok(OpenEngine {
            entry,
            config,
            engine: Some(engine),
        })
    }

    /// The open engine; `None` after a failed reopen.
    pub fn get(&self) -> Option<&Engine> {
        self.engine.as_ref()
    }

    /// Closes the database (an embedded engine's close flushes what its WAL does not hold)
    /// and opens it again on the same data directory, options and settings.
    pub fn reopen(&mut self) -> anyhow::Result<()> {
        self.engine = None;
        let engine = fathom_engines::open(self.entry, &self.config)
            .with_context(|| format!("opening {} again", self.entry.name))?;
        self.engine = Some(engine);
        Ok(())
    }

    /// Closes the engine (a server stops).
    pub fn close(&mut self) {
        self.engine = None;
    }
}
