//! The results database in one SQLite file (the default, under the results root).

use super::{Database, Value};
use anyhow::Context;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection};
use std::path::Path;

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Value::Text(v) => v.to_sql(),
            Value::Int(v) => v.to_sql(),
            Value::Real(v) => v.to_sql(),
        }
    }
}

/// Opens the file (made with its directory when `create`), waiting up to 30 s for another
/// writer (shards of an experiment record into one file).
pub fn open(path: &Path, create: bool) -> anyhow::Result<Connection> {
    if !create && !path.exists() {
        anyhow::bail!(
            "{}: no results database here (fathom run records one under the results root; `fathom store import DIR` fills it)",
            path.display()
        );
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let db = Connection::open(path)
        .with_context(|| format!("opening the results database {}", path.display()))?;
    db.busy_timeout(std::time::Duration::from_secs(30))?;
    Ok(db)
}

impl Database for Connection {
    fn begin(&mut self) -> anyhow::Result<()> {
        Ok(self.execute_batch("BEGIN IMMEDIATE")?)
    }
    fn batch(&mut self, sql: &str) -> anyhow::Result<()> {
        Ok(self.execute_batch(sql)?)
    }
    fn execute(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<u64> {
        Ok(Connection::execute(self, sql, params_from_iter(params))? as u64)
    }
    fn query(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>> {
        let mut stmt = self.prepare(sql)?;
        let columns = stmt.column_count();
        let rows = stmt.query_map(params_from_iter(params), |r| {
            (0..columns)
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        ValueRef::Null => Value::Text(None),
                        ValueRef::Integer(v) => Value::Int(Some(v)),
                        ValueRef::Real(v) => Value::Real(Some(v)),
                        ValueRef::Text(t) | ValueRef::Blob(t) => {
                            Value::Text(Some(String::from_utf8_lossy(t).into_owned()))
                        }
                    })
                })
                .collect()
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
