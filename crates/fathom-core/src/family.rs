//! An opened engine of any family, so the driver, samplers and workloads can hold one
//! without caring whether it is a kv engine, a SQL database or a document server.

use crate::doc::DocEngine;
use crate::kv::KvEngine;
use crate::sql::SqlEngine;
use crate::target::Target;

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
    /// The family's name, for errors (`kv`, `sql`, `doc`).
    pub fn family(&self) -> &'static str {
        match self {
            Db::Kv(_) => "kv",
            Db::Sql(_) => "sql",
            Db::Doc(_) => "doc",
        }
    }
}
