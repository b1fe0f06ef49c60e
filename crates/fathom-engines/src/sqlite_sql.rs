//! Embedded SQLite through SQL (engine `sqlite-sql`): the sql workloads' own tables,
//! statements and secondary indexes on rusqlite's bundled build, so the embedded B-tree joins
//! the same comparisons as the servers. Settings and PRAGMAs are those of the kv `sqlite`.

use crate::settings;
use crate::sqlite::{connect, open_admin, pragmas, SqliteSettings};
use crate::{EngineConfig, EngineEntry};
use fathom_api::options::Syntax;
use fathom_api::retry::Failure;
use fathom_api::sql::{
    Dialect, Keep, Outcome, Ran, Row, SqlConn, SqlEngine, SqlError, Stmt, Value,
};
use fathom_api::target::{Counters, Identity, Maintenance, Target};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};
use std::path::PathBuf;
use std::sync::Mutex;

pub const ENTRY: EngineEntry = EngineEntry {
    syntax: Syntax::Pragmas,
    name: "sqlite-sql",
    about: "embedded SQLite through SQL: the workload's own tables and indexes (rather than the kv mapping)",
    options_doc: "PRAGMAs, `;`-separated, as for `sqlite`",
    settings: settings::of::<SqliteSettings>(),
    version,
    code: &["sqlite3", "rusqlite::"],
    ..EngineEntry::embedded_sql(open)
};

const FILE: &str = "fathom-sql.sqlite";

fn version() -> anyhow::Result<String> {
    Ok(rusqlite::version().to_string())
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    let pragmas = pragmas(config)?;
    let path = config.data_dir.join(FILE);
    let admin = open_admin(&path, &pragmas, config)?;
    Ok(Box::new(SqliteSql {
        id: Identity::new(
            ENTRY.name,
            version().unwrap_or_default(),
            vec![config.data_dir.clone()],
        ),
        path,
        pragmas,
        admin: Mutex::new(admin),
    }))
}

pub struct SqliteSql {
    id: Identity,
    path: PathBuf,
    pragmas: Vec<String>,
    admin: Mutex<Connection>,
}

impl Target for SqliteSql {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        let admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        admin
            .query_row("PRAGMA page_count", [], |r| r.get::<_, i64>(0))
            .map(|n| Counters::from([("page_count".to_string(), n as f64)]))
            .unwrap_or_default()
    }
    /// A flush checkpoints the write-ahead log into the database file, as far as readers
    /// allow: PASSIVE, because a connection that ran ANALYZE was seen to hold back a TRUNCATE
    /// checkpoint for the whole busy timeout.
    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        if action == Maintenance::Flush {
            let admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
            admin.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        }
        Ok(())
    }
}

impl SqlEngine for SqliteSql {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
    fn connect(&self) -> anyhow::Result<Box<dyn SqlConn + '_>> {
        let conn = connect(&self.path, &self.pragmas)?;
        conn.set_prepared_statement_cache_capacity(64);
        Ok(Box::new(SqliteConn {
            conn,
            sqls: Vec::new(),
        }))
    }
}

struct SqliteConn {
    conn: Connection,
    sqls: Vec<String>,
}

/// A parameter borrowed into SQLite without a copy.
struct Param<'a>(Value<'a>);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Value::Int(i) => ValueRef::Integer(i),
            Value::Text(t) => ValueRef::Text(t.as_bytes()),
            Value::Bytes(b) => ValueRef::Blob(b),
            // A number as SQLite stores one: an integer or a real.
            Value::Number(n) => match (n.parse::<i64>(), n.parse::<f64>()) {
                (Ok(i), _) => ValueRef::Integer(i),
                (_, Ok(f)) => ValueRef::Real(f),
                _ => ValueRef::Text(n.as_bytes()),
            },
        }))
    }
}

/// A busy or locked database is retried (a write transaction lost the race to upgrade).
fn error(e: rusqlite::Error) -> anyhow::Error {
    let failure = match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            Failure::Retryable
        }
        Some(rusqlite::ErrorCode::DiskFull) => Failure::OutOfSpace,
        _ => Failure::Fatal,
    };
    SqlError::of(failure, e.to_string())
}

impl SqlConn for SqliteConn {
    fn exec(&mut self, sql: &str) -> anyhow::Result<()> {
        self.conn.execute_batch(sql).map_err(error)
    }

    fn prepare(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        self.conn
            .prepare_cached(sql)
            .map_err(|e| anyhow::anyhow!("preparing `{sql}`: {e}"))?;
        Ok(Stmt::keep(&mut self.sqls, sql.to_string()))
    }

    fn run_with(&mut self, stmt: Stmt, params: &[Value<'_>], keep: Keep) -> Ran {
        self.each_row(stmt, params, keep.first, |row, columns, out| {
            out.rows += 1;
            if let Some(c) = keep.column {
                keep.row(out, row.get::<_, Option<i64>>(c)?);
            }
            // A scalar reads its first row only.
            if keep.first {
                return Ok(false);
            }
            count_bytes(row, columns, out)?;
            Ok(true)
        })
    }

    fn run_row(&mut self, stmt: Stmt, params: &[Value<'_>], n: u64, row: &mut Row) -> Ran {
        row.0.clear();
        self.each_row(stmt, params, false, |r, columns, out| {
            if out.rows == n {
                for i in 0..columns {
                    row.0.push(match r.get_ref(i)? {
                        ValueRef::Null => None,
                        ValueRef::Integer(v) => Some(v.to_string()),
                        ValueRef::Real(v) => Some(v.to_string()),
                        ValueRef::Text(b) | ValueRef::Blob(b) => {
                            Some(String::from_utf8_lossy(b).into_owned())
                        }
                    });
                }
            }
            out.rows += 1;
            count_bytes(r, columns, out)?;
            Ok(true)
        })
    }
}

impl SqliteConn {
    /// Runs a statement: one without columns (unless `scalar`) for its affected rows, else
    /// `each` on every row (with the column count and the outcome so far) while it says go on.
    fn each_row(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        scalar: bool,
        mut each: impl FnMut(&rusqlite::Row<'_>, usize, &mut Outcome) -> rusqlite::Result<bool>,
    ) -> Ran {
        let mut st = self
            .conn
            .prepare_cached(&self.sqls[stmt.0])
            .map_err(error)?;
        let params = rusqlite::params_from_iter(params.iter().map(|v| Param(*v)));
        if st.column_count() == 0 && !scalar {
            let affected = st.execute(params).map_err(error)? as u64;
            return Ok(Outcome {
                affected,
                ..Outcome::default()
            });
        }
        let columns = st.column_count();
        let mut rows = st.query(params).map_err(error)?;
        let mut out = Outcome::default();
        while let Some(row) = rows.next().map_err(error)? {
            if !each(row, columns, &mut out).map_err(error)? {
                break;
            }
        }
        Ok(out)
    }
}

/// Adds the bytes of a row's values to `out` (a number counts 8).
fn count_bytes(row: &rusqlite::Row<'_>, columns: usize, out: &mut Outcome) -> rusqlite::Result<()> {
    for i in 0..columns {
        out.bytes += match row.get_ref(i)? {
            ValueRef::Text(b) | ValueRef::Blob(b) => b.len() as u64,
            ValueRef::Null => 0,
            _ => 8,
        };
    }
    Ok(())
}
