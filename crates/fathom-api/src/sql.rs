//! The sql family: a server or embedded SQL database handing out one connection per client,
//! with prepared statements written once with `?` placeholders and a dialect for the few
//! places MariaDB, PostgreSQL and SQLite differ.

use crate::target::Target;

/// Which SQL the database speaks where they differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    MariaDb,
    Postgres,
    Sqlite,
}

impl Dialect {
    /// Rewrites `?` placeholders into the dialect's own (`$1`, `$2`, ... for PostgreSQL).
    /// Statements fathom writes hold no `?` inside string literals.
    pub fn placeholders(self, sql: &str) -> String {
        match self {
            Dialect::Postgres => {
                let mut out = String::with_capacity(sql.len() + 16);
                let mut n = 0;
                for ch in sql.chars() {
                    if ch == '?' {
                        n += 1;
                        out.push('$');
                        out.push_str(&n.to_string());
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
            Dialect::MariaDb | Dialect::Sqlite => sql.to_string(),
        }
    }

    /// The integer primary key column that numbers itself (sysbench's `id`).
    pub fn auto_increment_key(self) -> &'static str {
        match self {
            Dialect::MariaDb => "INTEGER NOT NULL AUTO_INCREMENT",
            Dialect::Postgres => "SERIAL",
            Dialect::Sqlite => "INTEGER NOT NULL",
        }
    }

    /// A 64-bit integer primary key column that numbers itself (the insert benchmark's
    /// `transactionid`); SQLite's `INTEGER` primary key is its 64-bit rowid.
    pub fn big_auto_increment_key(self) -> &'static str {
        match self {
            Dialect::MariaDb => "BIGINT NOT NULL AUTO_INCREMENT",
            Dialect::Postgres => "BIGSERIAL",
            Dialect::Sqlite => "INTEGER NOT NULL",
        }
    }

    /// The column type of a date and time to the second.
    pub fn datetime_type(self) -> &'static str {
        match self {
            Dialect::Postgres => "TIMESTAMP",
            Dialect::MariaDb | Dialect::Sqlite => "DATETIME",
        }
    }

    /// A placeholder for a `YYYY-MM-DD HH:MM:SS` text parameter going into a datetime column
    /// (PostgreSQL types parameters, so the text is cast there).
    pub fn datetime_param(self) -> &'static str {
        match self {
            Dialect::Postgres => "?::text::timestamp",
            Dialect::MariaDb | Dialect::Sqlite => "?",
        }
    }

    /// What follows `CREATE TABLE (...)`: the storage engine for MariaDB.
    pub fn table_suffix(self, storage_engine: Option<&str>) -> String {
        match (self, storage_engine) {
            (Dialect::MariaDb, Some(e)) => format!(" ENGINE = {e}"),
            (Dialect::MariaDb, None) | (Dialect::Postgres | Dialect::Sqlite, _) => String::new(),
        }
    }
}

/// A parameter of a prepared statement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Int(i64),
    Text(&'a str),
    /// Binary data (BLOB, VARBINARY, BYTEA columns).
    Bytes(&'a [u8]),
    /// A number in decimal (`-20.000000`, a DECIMAL's value): written unquoted into SQL text,
    /// as a client that formats its statements writes it; bound as the statement's parameter
    /// type asks (NUMERIC, a float, an integer) or as text.
    Number(&'a str),
}

/// A text statement's SQL: `parts` (the statement cut at its `?` placeholders) with each
/// parameter written in by `literal`, the server's way of writing a value.
pub fn write_literals(
    out: &mut String,
    parts: &[String],
    params: &[Value<'_>],
    mut literal: impl FnMut(&mut String, &Value<'_>),
) -> anyhow::Result<()> {
    if parts.len() != params.len() + 1 {
        anyhow::bail!(
            "`{}` takes {} parameters, {} given",
            parts.join("?"),
            parts.len() - 1,
            params.len()
        );
    }
    out.clear();
    for (part, value) in parts.iter().zip(params.iter().map(Some).chain([None])) {
        out.push_str(part);
        if let Some(v) = value {
            literal(out, v);
        }
    }
    Ok(())
}

/// What running a statement did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Rows the statement returned.
    pub rows: u64,
    /// Rows it changed.
    pub affected: u64,
    /// Bytes of the values returned.
    pub bytes: u64,
    /// The column `run_keeping` was asked to keep, of the last row returned, as an integer.
    pub kept: Option<i64>,
    /// The first id an `INSERT` numbered, where the server says it without a result set
    /// (MariaDB's OK packet, what JDBC's generated keys read); `None` elsewhere.
    pub inserted_id: Option<i64>,
}

/// One row's values as text, as a client that computes with them reads them (sysbench-tpcc's
/// Lua reads every value as a string): NULL is `None`. Integers are written in decimal,
/// DECIMAL and NUMERIC as the server writes them, dates as `YYYY-MM-DD HH:MM:SS`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row(pub Vec<Option<String>>);

impl Row {
    /// Column `i`'s text; an error when the row is missing, short, or the value is NULL.
    pub fn text(&self, i: usize) -> anyhow::Result<&str> {
        match self.0.get(i) {
            Some(Some(v)) => Ok(v),
            Some(None) => anyhow::bail!("column {i} of the row is NULL"),
            None => anyhow::bail!("the row has no column {i} ({} columns)", self.0.len()),
        }
    }

    /// Column `i` as an integer (a DECIMAL with no fraction too).
    pub fn int(&self, i: usize) -> anyhow::Result<i64> {
        let t = self.text(i)?;
        let whole = t
            .split_once('.')
            .map_or(t, |(w, f)| match f.bytes().all(|b| b == b'0') {
                true => w,
                false => t,
            });
        whole
            .parse()
            .map_err(|_| anyhow::anyhow!("column {i}: `{t}` is not an integer"))
    }

    /// Column `i` as a number.
    pub fn float(&self, i: usize) -> anyhow::Result<f64> {
        let t = self.text(i)?;
        t.parse()
            .map_err(|_| anyhow::anyhow!("column {i}: `{t}` is not a number"))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Which row's values a client keeps while it reads a result (`SqlConn::run_row`), and the
/// values kept.
#[derive(Debug, Default)]
pub struct KeepRow {
    /// The row (0-based) whose values are kept; `None` keeps none.
    pub at: Option<u64>,
    pub row: Row,
}

impl KeepRow {
    /// Whether the row numbered `index` (0-based) is the one to keep; clears the kept values
    /// when it is.
    pub fn wants(&mut self, index: u64) -> bool {
        let wanted = self.at == Some(index);
        if wanted {
            self.row.0.clear();
        }
        wanted
    }
}

/// A statement's failure, classified (a deadlock, lock wait timeout or serialization failure
/// is retryable): the engine error every family uses.
pub use crate::retry::{retryable, EngineError as SqlError};

/// A prepared statement's handle on its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stmt(pub usize);

impl Stmt {
    /// Keeps `prepared` as a connection's next statement; its handle is its place in `kept`.
    pub fn keep<T>(kept: &mut Vec<T>, prepared: T) -> Stmt {
        kept.push(prepared);
        Stmt(kept.len() - 1)
    }
}

/// What running a statement gives: its outcome, or the engine's error.
pub type Ran = anyhow::Result<Outcome>;

/// What a client takes from a statement's rows beside their count and bytes: one column as an
/// integer, of the last row (a page's last entry) or of the first (a scalar: later rows may go
/// unread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    pub column: Option<usize>,
    pub first: bool,
}

impl Keep {
    pub const NOTHING: Keep = Keep {
        column: None,
        first: false,
    };
    /// The first row's first column (`SqlConn::scalar`).
    pub const SCALAR: Keep = Keep {
        column: Some(0),
        first: true,
    };

    /// Column `column` of the last row (`SqlConn::run_keeping`).
    pub fn last(column: Option<usize>) -> Keep {
        Keep {
            column,
            first: false,
        }
    }

    /// Records the kept value of the row just counted in `out`.
    pub fn row(self, out: &mut Outcome, value: Option<i64>) {
        if !(self.first && out.rows > 1) {
            out.kept = value;
        }
    }
}

/// One client's connection. An engine implements `run_with`; `run`, `run_keeping` and
/// `scalar` are what workloads call.
pub trait SqlConn: Send {
    /// Runs a statement without parameters (DDL, BEGIN, COMMIT).
    fn exec(&mut self, sql: &str) -> anyhow::Result<()>;
    /// Prepares a statement written with `?` placeholders.
    fn prepare(&mut self, sql: &str) -> anyhow::Result<Stmt>;
    /// Keeps a statement written with `?` placeholders to be sent as SQL text, its parameters
    /// written in as literals each time it runs (what JDBC's `Statement` and Python's MySQLdb
    /// send): the server parses it every time. Text may hold several statements separated by
    /// `;` (a `COMMIT` sent with the statement before it); the first one's rows and affected
    /// rows are the outcome. Engines without a text protocol say so.
    fn prepare_text(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        let _ = sql;
        anyhow::bail!("this engine has no text protocol; its statements are prepared")
    }
    /// Runs a prepared statement, reading every row it returns (a scalar's may stop after its
    /// first), and takes what `keep` asks of them.
    fn run_with(&mut self, stmt: Stmt, params: &[Value<'_>], keep: Keep)
        -> anyhow::Result<Outcome>;
    /// Runs a prepared statement, reading every row it returns.
    fn run(&mut self, stmt: Stmt, params: &[Value<'_>]) -> anyhow::Result<Outcome> {
        self.run_with(stmt, params, Keep::NOTHING)
    }
    /// Runs a prepared statement as `run` does, and keeps column `keep` (0-based) of the last
    /// row it returns as an integer (`Outcome::kept`): what a client reads off a page of rows
    /// (LinkBench's oldest link time of a full page).
    fn run_keeping(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        keep: Option<usize>,
    ) -> anyhow::Result<Outcome> {
        self.run_with(stmt, params, Keep::last(keep))
    }
    /// Runs a prepared statement and returns its first row's first column as an integer
    /// (`SELECT max(id) ...`, the first id of a multi-row `INSERT … RETURNING`); `None` when
    /// there is no row or the value is NULL.
    fn scalar(&mut self, stmt: Stmt, params: &[Value<'_>]) -> anyhow::Result<Option<i64>> {
        Ok(self.run_with(stmt, params, Keep::SCALAR)?.kept)
    }
    /// Runs a prepared statement as `run` does, and writes the values of its row `n` (0-based)
    /// into `row` as text; `row` is left empty when fewer rows came back. What a transaction
    /// that computes with the values it read (TPC-C's) calls.
    fn run_row(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        n: u64,
        row: &mut Row,
    ) -> anyhow::Result<Outcome> {
        let _ = (stmt, params, n, row);
        anyhow::bail!("this engine's client does not return the values of rows")
    }
}

/// An open SQL database (a server fathom started, one it was pointed at, or an embedded one).
pub trait SqlEngine: Target {
    fn dialect(&self) -> Dialect;
    /// The storage engine tables are created with (`InnoDB`, `ROCKSDB`), where it is chosen.
    fn storage_engine(&self) -> Option<&str> {
        None
    }
    fn connect(&self) -> anyhow::Result<Box<dyn SqlConn + '_>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_values_read_as_numbers_and_text() {
        let row = Row(vec![
            Some("3001".into()),
            Some("0.1500".into()),
            None,
            Some("12.00".into()),
            Some("BC".into()),
        ]);
        assert_eq!(row.int(0).unwrap(), 3001);
        assert_eq!(row.float(1).unwrap(), 0.15);
        assert_eq!(row.int(3).unwrap(), 12);
        assert_eq!(row.text(4).unwrap(), "BC");
        assert!(row
            .int(1)
            .unwrap_err()
            .to_string()
            .contains("`0.1500` is not an integer"));
        assert!(row.text(2).unwrap_err().to_string().contains("NULL"));
        assert!(row.text(9).unwrap_err().to_string().contains("no column 9"));
        let mut keep = KeepRow {
            at: Some(1),
            row: row.clone(),
        };
        assert!(!keep.wants(0));
        assert!(keep.wants(1) && keep.row.is_empty());
    }

    #[test]
    fn postgres_numbers_placeholders() {
        assert_eq!(
            Dialect::Postgres.placeholders("SELECT c FROM t WHERE id BETWEEN ? AND ?"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2"
        );
        assert_eq!(Dialect::MariaDb.placeholders("a = ?"), "a = ?");
    }
}
