//! An opened engine of either family, so the driver, samplers and workloads can hold one
//! without caring whether it is a kv engine or a SQL database.

use crate::kv::KvEngine;
use crate::sql::SqlEngine;
use crate::target::Target;

/// An engine as opened, owning it.
pub enum Engine {
    Kv(Box<dyn KvEngine>),
    Sql(Box<dyn SqlEngine>),
}

/// A borrowed engine of either family, handed to workloads.
#[derive(Clone, Copy)]
pub enum Db<'e> {
    Kv(&'e dyn KvEngine),
    Sql(&'e dyn SqlEngine),
}

impl Engine {
    pub fn db(&self) -> Db<'_> {
        match self {
            Engine::Kv(e) => Db::Kv(e.as_ref()),
            Engine::Sql(e) => Db::Sql(e.as_ref()),
        }
    }

    pub fn target(&self) -> &dyn Target {
        match self {
            Engine::Kv(e) => e.as_ref(),
            Engine::Sql(e) => e.as_ref(),
        }
    }
}

impl Db<'_> {
    /// The family's name, for errors (`kv`, `sql`).
    pub fn family(&self) -> &'static str {
        match self {
            Db::Kv(_) => "kv",
            Db::Sql(_) => "sql",
        }
    }
}
