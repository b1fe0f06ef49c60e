//! fathom-engines: the engines fathom can open (kv, sql and document), each one module plus one line in
//! `ENGINES`, with the typed settings each accepts and where its options syntax is documented.

pub mod dynlib;
pub mod failure;
pub mod fetched;
pub mod lmdb;
#[cfg(feature = "lmdb")]
mod logtime;
pub mod mariadb;
pub mod mongodb;
pub mod netbuf;
pub mod null;
pub mod postgres;
pub mod rocksdb;
pub mod server;
pub mod settings;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(feature = "sqlite")]
pub mod sqlite_sql;
#[cfg(feature = "wiredtiger")]
pub mod wiredtiger;

use fathom_api::capability::{Need, Offer};
use fathom_api::doc::DocEngine;
use fathom_api::family::{Engine, Family};
use fathom_api::kv::KvEngine;
use fathom_api::options::Syntax;
use fathom_api::sql::SqlEngine;
use fathom_api::stop::Stop;
use settings::{Settings, SettingsOf};
use std::path::PathBuf;

/// What opening an engine takes.
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    /// Directory the database lives in (created if missing).
    pub data_dir: PathBuf,
    /// The engine's own options string, in its own syntax.
    pub options: String,
    /// fathom's typed settings for the engine, validated against its `settings` list.
    pub settings: Settings,
    /// The `cgroup.procs` files of the run's groups (its memory limit, its device profile): a
    /// server fathom starts joins them, so they hold the server's processes rather than fathom.
    pub groups: Vec<PathBuf>,
    /// Asked to stop: an engine's long waits (for compaction) end early.
    pub stop: Stop,
    /// Where a server fathom starts takes the workloads' connections (`--network`): over TCP
    /// instead of its unix socket. None for the unix socket (and for embedded engines).
    pub network: Option<server::TcpPath>,
}

/// Opens a kv engine.
pub type KvOpen = fn(&EngineConfig) -> anyhow::Result<Box<dyn KvEngine>>;
/// Opens a sql engine.
pub type SqlOpen = fn(&EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>>;
/// Opens a document server.
pub type DocOpen = fn(&EngineConfig) -> anyhow::Result<Box<dyn DocEngine>>;

/// How an engine opens, which says its family.
pub enum Opener {
    Kv(KvOpen),
    Sql(SqlOpen),
    Doc(DocOpen),
}

/// One engine fathom can run.
pub struct EngineEntry {
    pub name: &'static str,
    pub about: &'static str,
    /// Where the syntax of the engine's options string is documented.
    pub options_doc: &'static str,
    /// How the options string is written: what separates its items (a `--setup @FILE` holds
    /// one item per line, joined with it), and which options a step may add to it.
    pub syntax: Syntax,
    /// Its settings with their defaults and help, checked where a setup is resolved
    /// (`settings::of` its settings struct).
    pub settings: SettingsOf,
    /// The exact version of the engine this build links.
    pub version: fn() -> anyhow::Result<String>,
    pub open: Opener,
    /// True for a server fathom starts (or is pointed at): the memory limit then applies to
    /// the server's processes, and fathom's own CPU is measured apart.
    pub server: bool,
    /// How the engine, with the settings given, meets what a workload needs.
    pub offers: fn(Need, &Settings) -> Offer,
    /// Function-name prefixes of the engine's own code in fathom's process (an embedded
    /// engine's, its compression libraries included), for a profile's engine share. A
    /// server's code is told by its process.
    pub code: &'static [&'static str],
    /// The memory the engine is configured to hold, with the settings and options string
    /// given: each part's name and bytes (a block cache, write buffers). A memory limit below
    /// their sum is refused before anything runs. None known: empty.
    pub memory: fn(&Settings, &str) -> anyhow::Result<MemoryParts>,
}

/// What an engine is configured to hold in memory: each part's name and bytes.
pub type MemoryParts = Vec<(String, u64)>;

/// An entry that says nothing of its memory.
fn no_memory(_: &Settings, _: &str) -> anyhow::Result<MemoryParts> {
    Ok(Vec::new())
}

/// The size an options string gives `key` (its last mention wins, as when the engine reads
/// it), items split at any of `separators`.
pub(crate) fn option_size(options: &str, separators: &[char], key: &str) -> Option<u64> {
    options
        .split(separators)
        .filter_map(|item| item.split_once('='))
        .filter(|(k, _)| k.trim() == key)
        .filter_map(|(_, v)| fathom_api::units::parse_size(v.trim()).ok())
        .next_back()
}

impl std::fmt::Debug for EngineEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl EngineEntry {
    /// What an embedded kv engine's entry starts from: options items separated by `;`, no
    /// settings, every need met. An entry names itself and says what differs.
    pub const fn embedded_kv(open: KvOpen) -> EngineEntry {
        EngineEntry::embedded(Opener::Kv(open))
    }

    /// The same for an embedded sql engine.
    pub const fn embedded_sql(open: SqlOpen) -> EngineEntry {
        EngineEntry::embedded(Opener::Sql(open))
    }

    const fn embedded(open: Opener) -> EngineEntry {
        EngineEntry {
            name: "",
            about: "",
            options_doc: "",
            syntax: Syntax::None,
            settings: SettingsOf::NONE,
            version: unnamed_version,
            open,
            server: false,
            offers: fathom_api::capability::offers_everything,
            code: &[],
            memory: no_memory,
        }
    }

    /// The same for a SQL server fathom starts: its setup holds config-file lines, one per
    /// line.
    pub const fn sql_server(open: SqlOpen) -> EngineEntry {
        EngineEntry {
            syntax: Syntax::ConfigLines,
            server: true,
            ..EngineEntry::embedded_sql(open)
        }
    }

    /// The same for a document server fathom starts or is pointed at: its setup holds
    /// config-file lines, one per line.
    pub const fn doc_server(open: DocOpen) -> EngineEntry {
        EngineEntry {
            syntax: Syntax::ConfigLines,
            server: true,
            ..EngineEntry::embedded(Opener::Doc(open))
        }
    }

    /// The interface it opens as.
    pub fn family(&self) -> Family {
        match self.open {
            Opener::Kv(_) => Family::Kv,
            Opener::Sql(_) => Family::Sql,
            Opener::Doc(_) => Family::Doc,
        }
    }
}

fn unnamed_version() -> anyhow::Result<String> {
    anyhow::bail!("the engine's entry names no version function")
}

/// Every engine this build has.
pub static ENGINES: &[EngineEntry] = &[
    rocksdb::ENTRY,
    #[cfg(feature = "wiredtiger")]
    wiredtiger::ENTRY,
    #[cfg(feature = "lmdb")]
    lmdb::ENTRY,
    #[cfg(feature = "sqlite")]
    sqlite::ENTRY,
    mariadb::INNODB,
    mariadb::MYROCKS,
    postgres::ENTRY,
    mongodb::ENTRY,
    #[cfg(feature = "sqlite")]
    sqlite_sql::ENTRY,
    null::ENTRY,
];

/// The names of the servers fathom starts (or is pointed at), in the registry's order.
pub fn servers() -> Vec<&'static str> {
    ENGINES
        .iter()
        .filter(|e| e.server)
        .map(|e| e.name)
        .collect()
}

/// Looks an engine up by name.
pub fn find(name: &str) -> anyhow::Result<&'static EngineEntry> {
    ENGINES.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<_> = ENGINES.iter().map(|e| e.name).collect();
        anyhow::anyhow!(
            "unknown engine `{name}`; this build has: {}",
            names.join(", ")
        )
    })
}

/// Validates settings and opens the engine.
pub fn open(entry: &EngineEntry, config: &EngineConfig) -> anyhow::Result<Engine> {
    (entry.settings.check)(entry.name, &config.settings)?;
    std::fs::create_dir_all(&config.data_dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot create data directory {}: {e}",
            config.data_dir.display()
        )
    })?;
    Ok(match entry.open {
        Opener::Kv(open) => Engine::Kv(open(config)?),
        Opener::Sql(open) => Engine::Sql(open(config)?),
        Opener::Doc(open) => Engine::Doc(open(config)?),
    })
}
