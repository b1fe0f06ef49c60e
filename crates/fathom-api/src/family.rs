//! An opened engine of any family, so the driver, samplers and workloads can hold one
//! without caring whether it is a kv engine, a SQL database or a document server.

use crate::doc::DocEngine;
use crate::kv::KvEngine;
use crate::sql::SqlEngine;
use crate::target::Target;

/// The three interfaces an engine can offer, and a workload can be written against.
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
pub enum Engine {
    Kv(Box<dyn KvEngine>),
    Sql(Box<dyn SqlEngine>),
    Doc(Box<dyn DocEngine>),
}

/// A borrowed engine of any family, handed to workloads.
#[derive(Clone, Copy)]
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
        match self {
            Engine::Kv(_) => None,
            Engine::Sql(e) => e.url(),
            Engine::Doc(e) => e.url(),
        }
    }

    pub fn target(&self) -> &dyn Target {
        match self {
            Engine::Kv(e) => e.as_ref(),
            Engine::Sql(e) => e.as_ref(),
            Engine::Doc(e) => e.as_ref(),
        }
    }
}

impl Db<'_> {
    /// The family of the engine.
    pub fn family(&self) -> Family {
        match self {
            Db::Kv(_) => Family::Kv,
            Db::Sql(_) => Family::Sql,
            Db::Doc(_) => Family::Doc,
        }
    }
}
