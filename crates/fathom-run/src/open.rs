//! The run's engine: opened once as the run starts, and closed and opened again before a step
//! that asks (db_bench runs each step of benchmark.sh as a process of its own) or that runs
//! with options of its own.

use anyhow::Context;
use fathom_api::family::Engine;
use fathom_api::step::StepPlan;
use fathom_engines::{EngineConfig, EngineEntry};

pub struct OpenEngine {
    entry: &'static EngineEntry,
    config: EngineConfig,
    /// `None` only after a reopen failed to open it again.
    engine: Option<Engine>,
    /// The options the engine is open with beyond the setup's: the last step's own.
    added: Option<String>,
}

impl OpenEngine {
    pub fn open(entry: &'static EngineEntry, config: EngineConfig) -> anyhow::Result<Self> {
        let engine = fathom_engines::open(entry, &config)?;
        Ok(OpenEngine {
            entry,
            config,
            engine: Some(engine),
            added: None,
        })
    }

    /// The open engine; `None` after a failed reopen.
    pub fn get(&self) -> Option<&Engine> {
        self.engine.as_ref()
    }

    /// Opens the engine as a step needs it: closed and opened again when the step asks
    /// (`reopen`), or when the options it adds in the engine's syntax differ from those it is
    /// open with. Neither is timed. Returns the options added, for the step's record.
    pub fn prepare(&mut self, plan: &StepPlan) -> anyhow::Result<Option<String>> {
        let added = plan.options_for(self.entry.syntax);
        if plan.reopen || added != self.added.as_deref() {
            self.reopen(added.map(str::to_string))?;
        }
        Ok(self.added.clone())
    }

    /// Closes the database (an embedded engine's close flushes what its WAL does not hold)
    /// and opens it again on the same data directory and settings, with the setup's options
    /// and `added` after them.
    fn reopen(&mut self, added: Option<String>) -> anyhow::Result<()> {
        self.engine = None;
        let mut config = self.config.clone();
        if let Some(extra) = &added {
            config.options = join(&config.options, extra, self.entry.syntax.separator());
        }
        let engine = fathom_engines::open(self.entry, &config)
            .with_context(|| format!("opening {} again", self.entry.name))?;
        self.engine = Some(engine);
        self.added = added;
        Ok(())
    }

    /// Closes the engine (a server stops).
    pub fn close(&mut self) {
        self.engine = None;
    }
}

/// The setup's options string with `extra` after it, so that the step's own win.
fn join(options: &str, extra: &str, separator: &str) -> String {
    let options = options.trim().trim_end_matches(separator.trim());
    if options.is_empty() {
        extra.to_string()
    } else {
        format!("{options}{separator}{extra}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_steps_options_come_after_the_setups() {
        assert_eq!(super::join("", "a=1", ";"), "a=1");
        assert_eq!(super::join("b=2;", "a=1", ";"), "b=2;a=1");
        assert_eq!(super::join("b=2", "a=1", ","), "b=2,a=1");
    }
}
