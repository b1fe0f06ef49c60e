//! Embedded SQLite (rusqlite's bundled build) as a kv engine: one `WITHOUT ROWID` table with a
//! BLOB primary key, WAL mode, a connection per client, and any PRAGMA from the setup. Writes
//! serialize on SQLite's database lock; readers run beside them in WAL mode.

use crate::settings::{self, Size, Switch};
use crate::{EngineConfig, EngineEntry};
use fathom_api::kv::{
    BatchOp, Direction, KvEngine, KvSession, KvTxn, Seek, SessionOptions, TxnBody, TxnEnd, Visit,
};
use fathom_api::options::Syntax;
use fathom_api::stats::EngineStats;
use fathom_api::target::{pages_grown, Counters, Identity, Maintenance, Target};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// fathom's SQLite settings (`--set`), for `sqlite` and `sqlite-sql`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct SqliteSettings {
    /// page cache per connection (PRAGMA cache_size)
    cache_size: Size,
    /// journal_mode=WAL (false: the rollback journal)
    wal: Switch,
    /// synchronous=FULL (false: OFF)
    sync: Switch,
}

impl Default for SqliteSettings {
    fn default() -> Self {
        SqliteSettings {
            cache_size: Size::new("256m"),
            wal: Switch::new("true"),
            sync: Switch::new("false"),
        }
    }
}

pub const ENTRY: EngineEntry = EngineEntry {
    syntax: Syntax::Pragmas,
    name: "sqlite",
    about: "embedded SQLite (rusqlite's bundled build), one WITHOUT ROWID table",
    options_doc: "PRAGMAs, `;`-separated, e.g. `mmap_size=1073741824;page_size=8192;synchronous=NORMAL` \
                  (SQLite docs: PRAGMA statements); run on every connection after fathom's settings, so they win",
    settings: settings::of::<SqliteSettings>(),
    version,
    code: &["sqlite3", "rusqlite::"],
    ..EngineEntry::embedded_kv(open)
};

fn version() -> anyhow::Result<String> {
    Ok(rusqlite::version().to_string())
}

const FILE: &str = "fathom.sqlite";

pub struct Sqlite {
    dir: PathBuf,
    id: Identity,
    pragmas: Vec<String>,
    /// A connection of the engine's own, for statistics and checkpoints.
    admin: Mutex<Connection>,
}

/// The PRAGMA statements for a setup: fathom's settings first, the user's after them.
pub(crate) fn pragmas(config: &EngineConfig) -> anyhow::Result<Vec<String>> {
    let s: SqliteSettings = settings::read(&config.settings)?;
    let cache_kib = s.cache_size.value / 1024;
    let journal = if s.wal.value { "WAL" } else { "DELETE" };
    let sync = if s.sync.value { "FULL" } else { "OFF" };
    let mut list = vec![
        format!("cache_size=-{cache_kib}"),
        format!("journal_mode={journal}"),
        format!("synchronous={sync}"),
    ];
    for item in config
        .options
        .split(';')
        .map(str::trim)
        .filter(|i| !i.is_empty())
    {
        let name = item.split('=').next().unwrap_or("").trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            anyhow::bail!("SQLite setup: `{item}` is not a PRAGMA (expected name=value, e.g. synchronous=NORMAL)");
        }
        // The file's layout takes effect only before the database has content or is in WAL
        // mode: these go before fathom's journal_mode.
        if ["page_size", "auto_vacuum"].contains(&name.to_ascii_lowercase().as_str()) {
            list.insert(0, item.to_string());
        } else {
            list.push(item.to_string());
        }
    }
    Ok(list)
}

/// A PRAGMA's value as SQLite reads it back: keywords as the numbers SQLite stores them as,
/// the rest lower case.
fn normalized(name: &str, value: &str) -> String {
    let v = value.trim().trim_matches(['\'', '"']).to_ascii_lowercase();
    let keyword = match (name, v.as_str()) {
        ("synchronous", "off") | ("temp_store", "default") | ("auto_vacuum", "none") => "0",
        ("synchronous", "normal") | ("temp_store", "file") | ("auto_vacuum", "full") => "1",
        ("synchronous", "full") | ("temp_store", "memory") | ("auto_vacuum", "incremental") => "2",
        ("synchronous", "extra") => "3",
        (_, "on" | "true" | "yes") => "1",
        (_, "off" | "false" | "no") => "0",
        _ => return v,
    };
    keyword.to_string()
}

/// Reads each `name=value` PRAGMA back and refuses one SQLite did not take (a mode it does not
/// know, a size past its limit): SQLite ignores what it cannot do, and the run would measure
/// another setup than the one named.
fn check_taken(conn: &Connection, pragmas: &[String]) -> anyhow::Result<()> {
    // A PRAGMA set twice (fathom's setting, then the setup's) holds the last value.
    let mut last: Vec<(String, &str)> = Vec::new();
    for p in pragmas {
        let Some((name, asked)) = p.split_once('=') else {
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        last.retain(|(n, _)| *n != name);
        last.push((name, asked));
    }
    for (name, asked) in last {
        let read = conn
            .query_row(&format!("PRAGMA {name}"), [], |r| {
                r.get_ref(0).map(|v| match v {
                    rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    other => format!("{other:?}"),
                })
            })
            .optional()
            .map_err(|e| anyhow::anyhow!("PRAGMA {name}: {e}"))?;
        let Some(read) = read else {
            continue; // a PRAGMA that only acts (optimize) reads nothing back
        };
        if normalized(&name, &read) != normalized(&name, asked) {
            anyhow::bail!(
                "SQLite kept PRAGMA {name} at `{read}` where the setup asked `{}`: it ignores a \
                 value it cannot take",
                asked.trim()
            );
        }
    }
    Ok(())
}

pub(crate) fn connect(path: &std::path::Path, pragmas: &[String]) -> anyhow::Result<Connection> {
    let conn = Connection::open(path)
        .map_err(|e| anyhow::anyhow!("opening SQLite database {}: {e}", path.display()))?;
    conn.busy_timeout(Duration::from_secs(60))?;
    for p in pragmas {
        // Some PRAGMAs answer with a row (journal_mode), others with none.
        conn.query_row(&format!("PRAGMA {p}"), [], |_| Ok(()))
            .optional()
            .map_err(|e| anyhow::anyhow!("PRAGMA {p}: {e}"))?;
    }
    Ok(conn)
}

/// The engine's own connection to the database at `path`, with every PRAGMA of the setup
/// checked: one SQLite does not know, or a value it did not take, is refused.
pub(crate) fn open_admin(
    path: &std::path::Path,
    pragmas: &[String],
    config: &EngineConfig,
) -> anyhow::Result<Connection> {
    let admin = connect(path, pragmas)?;
    // SQLite ignores a PRAGMA it does not know; fathom does not.
    let known: Vec<String> = admin
        .prepare("SELECT name FROM pragma_pragma_list")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for p in pragmas {
        let name = p
            .split('=')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if !known.contains(&name) {
            anyhow::bail!(
                "SQLite has no PRAGMA `{name}` (from the setup `{}`)",
                config.options
            );
        }
    }
    check_taken(&admin, pragmas)?;
    Ok(admin)
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let pragmas = pragmas(config)?;
    let path = config.data_dir.join(FILE);
    let admin = open_admin(&path, &pragmas, config)?;
    admin.execute_batch(
        "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID",
    )?;
    Ok(Box::new(Sqlite {
        dir: config.data_dir.clone(),
        id: Identity::new(
            ENTRY.name,
            version().unwrap_or_default(),
            vec![config.data_dir.clone()],
        ),
        pragmas,
        admin: Mutex::new(admin),
    }))
}

impl Sqlite {
    fn pragma_int(&self, name: &str) -> Option<f64> {
        let admin = self.admin.lock().unwrap_or_else(|e| e.into_inner());
        admin
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
            .ok()
            .map(|v| v as f64)
    }
}

impl Target for Sqlite {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        ["page_count", "freelist_count", "page_size"]
            .iter()
            .filter_map(|p| self.pragma_int(p).map(|v| (p.to_string(), v)))
            .collect()
    }

    fn step_stats(&self, before: &Counters, after: &Counters, _seconds: f64) -> EngineStats {
        pages_grown(before, after, "page_count")
    }

    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        match action {
            Maintenance::Flush => {
                let admin = self.admin.lock().unwrap_or_else(|e| e.into_inner());
                admin.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
                Ok(())
            }
            Maintenance::WaitForCompaction | Maintenance::CompactLevel0 => Ok(()),
        }
    }

    fn effective_options(&self) -> BTreeMap<String, String> {
        let admin = self.admin.lock().unwrap_or_else(|e| e.into_inner());
        [
            "journal_mode",
            "synchronous",
            "cache_size",
            "page_size",
            "mmap_size",
        ]
        .iter()
        .filter_map(|p| {
            let v = admin
                .query_row(&format!("PRAGMA {p}"), [], |r| {
                    r.get_ref(0).map(|v| format!("{v:?}"))
                })
                .ok()?;
            Some((p.to_string(), v))
        })
        .chain([("pragmas".to_string(), self.pragmas.join(";"))])
        .collect()
    }
}

struct Session {
    conn: Connection,
}

const GET: &str = "SELECT v FROM kv WHERE k = ?1";
const PUT: &str =
    "INSERT INTO kv (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = excluded.v";
const DELETE: &str = "DELETE FROM kv WHERE k = ?1";
const FORWARD: &str = "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k LIMIT ?2";
const REVERSE: &str = "SELECT k, v FROM kv WHERE k <= ?1 ORDER BY k DESC LIMIT ?2";
/// Backwards from the first key at or after the start.
const PREV_FROM_SEEK: &str =
    "SELECT k, v FROM kv WHERE k <= (SELECT min(k) FROM kv WHERE k >= ?1) \
                              ORDER BY k DESC LIMIT ?2";

fn write(conn: &Connection, op: &BatchOp<'_>) -> rusqlite::Result<()> {
    match op {
        BatchOp::Put(k, v) => conn.prepare_cached(PUT)?.execute(params![k, v]).map(|_| ()),
        BatchOp::Delete(k) => conn.prepare_cached(DELETE)?.execute(params![k]).map(|_| ()),
    }
}

fn len_of(conn: &Connection, key: &[u8]) -> anyhow::Result<Option<usize>> {
    let mut stmt = conn.prepare_cached(GET)?;
    Ok(stmt
        .query_row(params![key], |r| Ok(r.get_ref(0)?.as_blob()?.len()))
        .optional()?)
}

fn scan_on(conn: &Connection, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
    let (start, direction, limit) = (seek.start, seek.direction, seek.limit);
    let sql = match direction {
        Direction::Forward => FORWARD,
        Direction::Reverse => REVERSE,
        Direction::PrevFromSeek => PREV_FROM_SEEK,
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(params![start, limit as i64])?;
    let mut n = 0;
    while let Some(row) = rows.next()? {
        n += 1;
        if !visit(row.get_ref(0)?.as_blob()?, row.get_ref(1)?.as_blob()?) {
            break;
        }
    }
    Ok(n)
}

fn read_into(conn: &Connection, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
    let mut stmt = conn.prepare_cached(GET)?;
    let found = stmt
        .query_row(params![key], |r| {
            out.clear();
            out.extend_from_slice(r.get_ref(0)?.as_blob()?);
            Ok(())
        })
        .optional()?;
    Ok(found.is_some())
}

struct SqlTxn<'c> {
    conn: &'c Connection,
}

/// The transaction's reads: SQLite's transaction is IMMEDIATE (it holds the write lock from
/// its start), so every read sees the latest data, which nothing else can change meanwhile.
impl KvTxn for SqlTxn<'_> {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        read_into(self.conn, key, out)
    }

    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        len_of(self.conn, key)
    }

    /// Its reads take no lock: `read` is the plain read.
    fn read_plain(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.read(key, out)
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        scan_on(self.conn, seek, visit)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        Ok(write(self.conn, &BatchOp::Put(key, value))?)
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        Ok(write(self.conn, &BatchOp::Delete(key))?)
    }
}

impl KvSession for Session {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        len_of(&self.conn, key)
    }

    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        read_into(&self.conn, key, out)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        Ok(write(&self.conn, &BatchOp::Put(key, value))?)
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        Ok(write(&self.conn, &BatchOp::Delete(key))?)
    }

    /// `BEGIN IMMEDIATE`: the write lock is taken at the start, so transactions wait for each
    /// other (busy_timeout) instead of failing at commit.
    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        let txn = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // On an error the transaction is dropped, which rolls it back.
        let end = body(&mut SqlTxn { conn: &txn })?;
        match end {
            TxnEnd::Commit => txn.commit()?,
            TxnEnd::Rollback => txn.rollback()?,
        }
        Ok(end)
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        scan_on(&self.conn, seek, visit)
    }
}

impl KvEngine for Sqlite {
    fn session(&self, _options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        Ok(Box::new(Session {
            conn: connect(&self.dir.join(FILE), &self.pragmas)?,
        }))
    }
}
