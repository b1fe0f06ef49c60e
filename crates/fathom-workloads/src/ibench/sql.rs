//! The insert benchmark on the sql family, with iibench's schema and statements: multi-row
//! INSERTs into an AUTO_INCREMENT (BIGSERIAL, rowid) key, deletes from the old end, and the
//! covering range queries (with FORCE INDEX on MariaDB) and IN-list point queries.

use super::clients::Store;
use super::gen::{Batch, Shape, Table};
use crate::statements::Statements;
use fathom_api::sql::{Dialect, SqlConn, SqlEngine, Stmt, Value};
use fathom_api::target::Maintenance;
use std::collections::HashMap;
use std::sync::Arc;

/// A statement kept by the connection: as SQL text, or prepared.
fn make(conn: &mut dyn SqlConn, text: bool, sql: &str) -> anyhow::Result<Stmt> {
    if text {
        conn.prepare_text(sql)
    } else {
        conn.prepare(sql)
    }
}

/// What differs by dialect in the insert benchmark's statements, chosen in one exhaustive match
/// (`of`): a new dialect is one more arm there, and every statement below follows from it.
#[derive(Clone, Copy, Debug)]
struct Syntax {
    /// MySQL's own, as iibench.py writes for it: `DELETE … ORDER BY … LIMIT n`, every index in
    /// one `ALTER TABLE … ADD INDEX …, ADD INDEX …` (one per index on MyRocks), `FORCE INDEX`.
    /// Otherwise a `DELETE … WHERE transactionid IN (subquery)`, a `CREATE INDEX` per index and
    /// no hint.
    mysql: bool,
    /// iibench's `ALTER SEQUENCE … CACHE 1000` for PostgreSQL's serial key.
    sequence_cache: bool,
    /// How the cleanup step refreshes a table's statistics.
    analyze: &'static str,
}

impl Syntax {
    fn of(d: Dialect) -> Syntax {
        match d {
            Dialect::MariaDb => Syntax {
                mysql: true,
                sequence_cache: false,
                analyze: "ANALYZE TABLE",
            },
            Dialect::Postgres => Syntax {
                mysql: false,
                sequence_cache: true,
                analyze: "VACUUM (ANALYZE)",
            },
            Dialect::Sqlite => Syntax {
                mysql: false,
                sequence_cache: false,
                analyze: "ANALYZE",
            },
        }
    }
}

/// One table's prepared statements, made at first use (the table must exist by then).
#[derive(Default)]
struct Stmts {
    /// Multi-row INSERT by its row count.
    insert: HashMap<usize, Stmt>,
    /// DELETE by its row count.
    delete: HashMap<usize, Stmt>,
    min: Option<Stmt>,
    max: Option<Stmt>,
    range: HashMap<usize, Stmt>,
    point: Option<Stmt>,
}

pub struct SqlStore<'e> {
    engine: &'e dyn SqlEngine,
    conn: Box<dyn SqlConn + 'e>,
    dialect: Dialect,
    syntax: Syntax,
    shape: Arc<Shape>,
    stmts: HashMap<u32, Stmts>,
    /// Statements go as SQL text (iibench.py's MySQLdb), not prepared.
    text: bool,
}

impl<'e> SqlStore<'e> {
    /// A client's store; by default its statements go as iibench.py sends them: SQL text to
    /// MariaDB, prepared to PostgreSQL.
    pub fn new(
        engine: &'e dyn SqlEngine,
        shape: Arc<Shape>,
        statements: Statements,
    ) -> anyhow::Result<Self> {
        Ok(SqlStore {
            engine,
            text: statements.text_on(engine.dialect(), &[Dialect::MariaDb])?,
            conn: engine.connect()?,
            dialect: engine.dialect(),
            syntax: Syntax::of(engine.dialect()),
            shape,
            stmts: HashMap::new(),
        })
    }

    fn stmt(
        &mut self,
        t: u32,
        pick: impl FnOnce(&mut Stmts) -> &mut Option<Stmt>,
        sql: impl FnOnce() -> String,
    ) -> anyhow::Result<Stmt> {
        let slot = pick(self.stmts.entry(t).or_default());
        if let Some(s) = slot {
            return Ok(*s);
        }
        let s = make(self.conn.as_mut(), self.text, &sql())?;
        *slot = Some(s);
        Ok(s)
    }

    fn keyed(
        &mut self,
        t: u32,
        pick: impl FnOnce(&mut Stmts) -> &mut HashMap<usize, Stmt>,
        key: usize,
        sql: impl FnOnce() -> String,
    ) -> anyhow::Result<Stmt> {
        let map = pick(self.stmts.entry(t).or_default());
        if let Some(s) = map.get(&key) {
            return Ok(*s);
        }
        let s = make(self.conn.as_mut(), self.text, &sql())?;
        map.insert(key, s);
        Ok(s)
    }

    fn index_name(t: u32, name: &str) -> String {
        format!("pi{t}_{name}")
    }

    fn index_cols(&self, i: usize) -> String {
        let cols: Vec<&str> = self.shape.indexes[i]
            .cols
            .iter()
            .map(|c| c.name())
            .collect();
        cols.join(", ")
    }
}

/// The table's DDL in `dialect`.
pub fn create_table(dialect: Dialect, storage: Option<&str>, t: u32) -> Vec<String> {
    let mut ddl = vec![
        format!("DROP TABLE IF EXISTS pi{t}"),
        format!(
            "CREATE TABLE pi{t} (\n  transactionid {},\n  dateandtime {},\n  \
             cashregisterid INT NOT NULL,\n  customerid INT NOT NULL,\n  \
             productid INT NOT NULL,\n  price INT NOT NULL,\n  data VARCHAR(4000),\n  \
             PRIMARY KEY (transactionid)\n){}",
            dialect.big_auto_increment_key(),
            dialect.datetime_type(),
            dialect.table_suffix(storage)
        ),
    ];
    if Syntax::of(dialect).sequence_cache {
        ddl.push(format!("ALTER SEQUENCE pi{t}_transactionid_seq CACHE 1000"));
    }
    ddl
}

impl Store for SqlStore<'_> {
    fn create_table(&mut self, t: u32) -> anyhow::Result<()> {
        self.stmts.remove(&t);
        for ddl in create_table(self.dialect, self.engine.storage_engine(), t) {
            self.conn.exec(&ddl)?;
        }
        Ok(())
    }

    fn insert(&mut self, t: &Table, batch: &Batch) -> anyhow::Result<()> {
        let n = batch.len();
        let dialect = self.dialect;
        let stmt = self.keyed(t.n, |s| &mut s.insert, n, || {
            let row = format!("({}, ?, ?, ?, ?, ?)", dialect.datetime_param());
            format!(
                "INSERT INTO pi{} (dateandtime, cashregisterid, customerid, productid, price, data) VALUES {}",
                t.n,
                vec![row; n].join(", ")
            )
        })?;
        // One allocation per batch of rows: small beside the statement.
        let mut params = Vec::with_capacity(n * 6);
        for (r, data) in &batch.rows {
            params.extend([
                Value::Text(&batch.datetime_text),
                Value::Int(r.cashregisterid),
                Value::Int(r.customerid),
                Value::Int(r.productid),
                Value::Int(r.price),
                Value::Text(data),
            ]);
        }
        self.conn.run(stmt, &params).map(|_| ())
    }

    fn delete(&mut self, t: u32, from: i64, n: usize) -> anyhow::Result<u64> {
        let mysql = self.syntax.mysql;
        let stmt = self.keyed(
            t,
            |s| &mut s.delete,
            n,
            || match mysql {
                true => format!(
                "DELETE FROM pi{t} WHERE transactionid >= ? ORDER BY transactionid ASC LIMIT {n}"
            ),
                false => format!(
                    "DELETE FROM pi{t} WHERE transactionid IN (SELECT transactionid FROM pi{t} \
                 WHERE transactionid >= ? ORDER BY transactionid LIMIT {n})"
                ),
            },
        )?;
        Ok(self.conn.run(stmt, &[Value::Int(from)])?.affected)
    }

    fn end_id(&mut self, t: u32, last: bool) -> anyhow::Result<Option<i64>> {
        let stmt = if last {
            self.stmt(t, |s| &mut s.max, || aggregate_id("max", t))?
        } else {
            self.stmt(t, |s| &mut s.min, || aggregate_id("min", t))?
        };
        self.conn.scalar(stmt, &[])
    }

    fn index_groups(&self, count: usize) -> Vec<Vec<usize>> {
        if self.syntax.mysql && self.engine.storage_engine() != Some("ROCKSDB") {
            vec![(0..count).collect()]
        } else {
            (0..count).map(|i| vec![i]).collect()
        }
    }

    fn create_indexes(&mut self, t: u32, positions: &[usize]) -> anyhow::Result<()> {
        let name = |i: usize| Self::index_name(t, self.shape.indexes[i].name);
        let sql = if self.syntax.mysql {
            let adds: Vec<String> = positions
                .iter()
                .map(|&i| format!("ADD INDEX {} ({})", name(i), self.index_cols(i)))
                .collect();
            vec![format!("ALTER TABLE pi{t} {}", adds.join(", "))]
        } else {
            positions
                .iter()
                .map(|&i| format!("CREATE INDEX {} ON pi{t} ({})", name(i), self.index_cols(i)))
                .collect()
        };
        for s in sql {
            self.conn.exec(&s)?;
        }
        // Plans prepared before the indexes existed are prepared again.
        self.stmts.remove(&t);
        Ok(())
    }

    fn range_query(&mut self, t: u32, index: usize, from: i64) -> anyhow::Result<u64> {
        let ix = self.shape.indexes[index];
        let cols = self.index_cols(index);
        let force = match self.syntax.mysql {
            true => format!(" FORCE INDEX ({})", Self::index_name(t, ix.name)),
            false => String::new(),
        };
        let op = if ix.strict() { ">" } else { ">=" };
        let limit = self.shape.rows_per_query;
        let stmt = self.keyed(
            t,
            |s| &mut s.range,
            index,
            || {
                format!(
                    "SELECT {cols} FROM pi{t}{force} WHERE {} {op} ? ORDER BY {cols} LIMIT {limit}",
                    ix.cols[0].name()
                )
            },
        )?;
        Ok(self.conn.run(stmt, &[Value::Int(from)])?.bytes)
    }

    fn point_query(&mut self, t: u32, ids: &[i64]) -> anyhow::Result<u64> {
        let n = ids.len();
        let stmt = self.stmt(
            t,
            |s| &mut s.point,
            || {
                format!(
                    "SELECT transactionid, productid, data FROM pi{t} WHERE transactionid IN ({})",
                    vec!["?"; n].join(", ")
                )
            },
        )?;
        let params: Vec<Value<'_>> = ids.iter().map(|&i| Value::Int(i)).collect();
        Ok(self.conn.run(stmt, &params)?.bytes)
    }

    fn analyze(&mut self, t: u32) -> anyhow::Result<()> {
        self.conn.exec(&format!("{} pi{t}", self.syntax.analyze))
    }

    fn maintain(&mut self, action: Maintenance) -> anyhow::Result<()> {
        self.engine.maintain(action)
    }
}

/// iibench's `SELECT min(transactionid)` (or max) on one table.
fn aggregate_id(function: &str, t: u32) -> String {
    format!("SELECT {function}(transactionid) FROM pi{t}")
}
