//! An opened engine of any family, so the driver, samplers and workloads can hold one
//! without caring whether it is a kv engine, a SQL database or a document server.
//!
//! The three enums are `#[non_exhaustive]`: outside this crate every `match` on them ends in
//! an arm for a family it does not know (`Db::refused`), so a family added here compiles
//! without touching a workload or the driver, and a workload runs on it once it has a file
//! for it (docs/architecture.md, "A family").

use crate::doc::DocEngine;
use crate::kv::KvEngine;
use crate::sql::SqlEngine;
use crate::target::Target;

/// The three interfaces an engine can offer, and a workload can be written against.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Ordered keys and values (`kv.rs`).
    Kv,
    /// SQL statements (`sql.rs`).
    Sql,
    /// BSON documents (`doc.rs`).
    Doc,
}

impl Family {
    /// The family's name, as errors and `fathom engines` print it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Kv => "kv",
            Family::Sql => "sql",
            Family::Doc => "doc",
        }
    }

    /// Names joined with `and`, for errors (`kv and sql`).
    pub fn list(families: &[Family]) -> String {
        let names: Vec<&str> = families.iter().map(|f| f.name()).collect();
        names.join(" and ")
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine as opened, owning it.
#[non_exhaustive]
pub enum Engine {
    Kv(Box<dyn KvEngine>),
    Sql(Box<dyn SqlEngine>),
    Doc(Box<dyn DocEngine>),
}

/// A borrowed engine of any family, handed to workloads.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum Db<'e> {
    Kv(&'e dyn KvEngine),
    Sql(&'e dyn SqlEngine),
    Doc(&'e dyn DocEngine),
}

impl Engine {
    pub fn db(&self) -> Db<'_> {
        match self {
            Engine::Kv(e) => Db::Kv(e.as_ref()),
            Engine::Sql(e) => Db::Sql(e.as_ref()),
            Engine::Doc(e) => Db::Doc(e.as_ref()),
        }
    }

    /// How another client reaches the engine (a server's URL); none for an embedded one.
    pub fn url(&self) -> Option<String> {
        self.target().url()
    }

    pub fn target(&self) -> &dyn Target {
        self.db().target()
    }
}

impl<'e> Db<'e> {
    /// The family of the engine.
    pub fn family(&self) -> Family {
        match self {
            Db::Kv(_) => Family::Kv,
            Db::Sql(_) => Family::Sql,
            Db::Doc(_) => Family::Doc,
        }
    }

    /// What the driver measures of the engine.
    pub fn target(&self) -> &'e dyn Target {
        match *self {
            Db::Kv(e) => e,
            Db::Sql(e) => e,
            Db::Doc(e) => e,
        }
    }

    /// The error for a family `who` has no implementation on: the last arm of a `match` on
    /// `Db` outside this crate. A workload's entry lists its families, so a run is refused
    /// before it starts; this is what a caller that skipped that check meets.
    pub fn refused(&self, who: &str) -> anyhow::Error {
        anyhow::anyhow!("{who} has no implementation on {} engines", self.family())
    }
}
