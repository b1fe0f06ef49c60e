//! A template for a new family (docs/architecture.md, "A family"): the interface an engine of
//! it offers and a workload is written against, here an append-only log (what a queue or a
//! write-ahead log offers). `scripts/check-recipes.sh` adds it to a copy of the tree the way
//! the doc says, with an engine of it and a workload on it, and builds them.

use crate::target::Target;

/// An engine of the family: what the driver measures of it (`Target`) and a session a client.
pub trait MyFamilyEngine: Target {
    /// A client's own handle on the engine.
    fn session(&self) -> anyhow::Result<Box<dyn MyFamilySession + '_>>;
}

/// One client's handle: each call is one operation a workload records.
pub trait MyFamilySession: Send {
    /// Appends `record` at the end; returns its position, from 0.
    fn append(&mut self, record: &[u8]) -> anyhow::Result<u64>;
    /// The record at `position`, `None` past the end.
    fn read(&mut self, position: u64) -> anyhow::Result<Option<Vec<u8>>>;
}
