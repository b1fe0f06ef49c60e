//! A declared workload's operations on a SQL database, as YCSB's JDBC binding runs them: the
//! records in `usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT, ...)`, one statement
//! per operation in autocommit (read-modify-write: a read, then an update), sent as the
//! binding's driver sends them (`statements=original`: SQL text on MariaDB, as Connector/J's
//! client-side prepared statements; prepared on PostgreSQL, as pgjdbc prepares on the server).

use super::ops::{Op, Shared, Work};
use super::record::{random_bytes, Fields, Keys};
use super::YcsbKind;
use crate::statements::Statements;
use fathom_core::driver::{Client, Done};
use fathom_core::sql::{Dialect, SqlConn, SqlEngine, Stmt, Value};
use rand::rngs::SmallRng;
use std::sync::Arc;

/// The binding's key column.
const KEY: &str = "YCSB_KEY";

/// `usertable` as YCSB's `JdbcDBCreateTable` makes it (with the VARCHAR length MariaDB needs).
pub fn table_ddl(d: Dialect, storage: Option<&str>, table: &str, fields: &Fields) -> Vec<String> {
    let columns: String = fields.names.iter().map(|f| format!(", {f} TEXT")).collect();
    vec![
        format!("DROP TABLE IF EXISTS {table}"),
        format!(
            "CREATE TABLE {table} ({KEY} VARCHAR(255) PRIMARY KEY{columns}){}",
            d.table_suffix(storage)
        ),
    ]
}

/// The statements of one connection, as the binding's `DefaultDBFlavor` writes them.
struct Prepared {
    insert: Stmt,
    read: Stmt,
    scan: Stmt,
    delete: Stmt,
    update_all: Stmt,
    /// Per field, the update of that field alone.
    update_one: Vec<Stmt>,
}

fn prepare(
    conn: &mut dyn SqlConn,
    text: bool,
    table: &str,
    fields: &Fields,
) -> anyhow::Result<Prepared> {
    let mut make = |sql: String| match text {
        true => conn.prepare_text(&sql),
        false => conn.prepare(&sql),
    };
    let names = fields.names.join(",");
    let marks = ",?".repeat(fields.names.len());
    let sets = |fs: &[String]| {
        fs.iter()
            .map(|f| format!("{f}=?"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok(Prepared {
        insert: make(format!(
            "INSERT INTO {table} ({KEY},{names}) VALUES(?{marks})"
        ))?,
        read: make(format!("SELECT * FROM {table} WHERE {KEY} = ?"))?,
        scan: make(format!(
            "SELECT * FROM {table} WHERE {KEY} >= ? ORDER BY {KEY} LIMIT ?"
        ))?,
        delete: make(format!("DELETE FROM {table} WHERE {KEY} = ?"))?,
        update_all: make(format!(
            "UPDATE {table} SET {} WHERE {KEY} = ?",
            sets(&fields.names)
        ))?,
        update_one: fields
            .names
            .iter()
            .map(|f| make(format!("UPDATE {table} SET {f}=? WHERE {KEY} = ?")))
            .collect::<anyhow::Result<_>>()?,
    })
}

pub struct SqlClient<'e> {
    conn: Box<dyn SqlConn + 'e>,
    stmts: Prepared,
    shared: Arc<Shared>,
    keys: Keys,
    fields: Fields,
    rng: SmallRng,
    work: Work,
    key: Vec<u8>,
    /// The key as text (it is ASCII).
    key_text: String,
    /// Each field's new bytes, all of them for an insert.
    values: Vec<Vec<u8>>,
}

impl<'e> SqlClient<'e> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        engine: &'e dyn SqlEngine,
        statements: Statements,
        table: &str,
        shared: Arc<Shared>,
        keys: Keys,
        fields: Fields,
        rng: SmallRng,
        work: Work,
    ) -> anyhow::Result<SqlClient<'e>> {
        let text = statements.text_on(engine.dialect(), &[Dialect::MariaDb])?;
        let mut conn = engine.connect()?;
        let stmts = prepare(conn.as_mut(), text, table, &fields)?;
        let values = vec![Vec::new(); fields.names.len()];
        Ok(SqlClient {
            conn,
            stmts,
            shared,
            keys,
            fields,
            rng,
            work,
            key: Vec::new(),
            key_text: String::new(),
            values,
        })
    }

    /// Fresh bytes for field `i`.
    fn fill(&mut self, i: usize) {
        let len = self.fields.length.next(&mut self.rng) as usize;
        self.values[i].clear();
        random_bytes(&mut self.rng, len, &mut self.values[i]);
    }

    /// The statement's parameters: the given fields' values (printable ASCII), then the key
    /// (first, for an insert).
    fn run_with_fields(
        &mut self,
        stmt: Stmt,
        fields: &[usize],
        key_first: bool,
    ) -> anyhow::Result<u64> {
        let mut params: Vec<Value<'_>> = Vec::with_capacity(fields.len() + 1);
        if key_first {
            params.push(Value::Text(&self.key_text));
        }
        for &i in fields {
            params.push(Value::Text(std::str::from_utf8(&self.values[i])?));
        }
        if !key_first {
            params.push(Value::Text(&self.key_text));
        }
        Ok(self.conn.run(stmt, &params)?.affected)
    }

    fn update(&mut self, field: Option<usize>) -> anyhow::Result<u64> {
        match field {
            Some(f) => {
                self.fill(f);
                self.run_with_fields(self.stmts.update_one[f], &[f], false)
            }
            None => {
                let all: Vec<usize> = (0..self.values.len()).collect();
                for &i in &all {
                    self.fill(i);
                }
                self.run_with_fields(self.stmts.update_all, &all, false)
            }
        }
    }

    fn read(&mut self, done: &mut Done) -> anyhow::Result<()> {
        let out = self
            .conn
            .run(self.stmts.read, &[Value::Text(&self.key_text)])?;
        (done.rows, done.bytes) = (out.rows, out.bytes);
        Ok(())
    }

    fn carry_out(&mut self, op: Op) -> anyhow::Result<Done> {
        let mut done = Done::of(op.kind);
        self.keys.key(op.record, &mut self.key);
        self.key_text.clear();
        self.key_text.push_str(std::str::from_utf8(&self.key)?);
        match op.kind {
            YcsbKind::Load | YcsbKind::Insert => {
                let all: Vec<usize> = (0..self.values.len()).collect();
                for &i in &all {
                    self.fill(i);
                }
                done.rows = self.run_with_fields(self.stmts.insert, &all, true)?;
                done.bytes =
                    (self.key_text.len() + self.values.iter().map(Vec::len).sum::<usize>()) as u64;
                if op.kind == YcsbKind::Insert {
                    self.shared.inserted();
                }
            }
            YcsbKind::Read => self.read(&mut done)?,
            YcsbKind::Update => done.rows = self.update(op.field)?,
            YcsbKind::ReadModifyWrite => {
                self.read(&mut done)?;
                self.update(op.field)?;
            }
            YcsbKind::Scan => {
                let out = self.conn.run(
                    self.stmts.scan,
                    &[
                        Value::Text(&self.key_text),
                        Value::Int(op.scan_length as i64),
                    ],
                )?;
                (done.rows, done.bytes) = (out.rows, out.bytes);
            }
            YcsbKind::Delete => {
                done.rows = self
                    .conn
                    .run(self.stmts.delete, &[Value::Text(&self.key_text)])?
                    .affected;
            }
        }
        Ok(done)
    }
}

impl Client for SqlClient<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let fields = self.fields.names.len();
        match self.work.next(&self.shared, &mut self.rng, fields) {
            Some(op) => self.carry_out(op).map(Some),
            None => Ok(None),
        }
    }
}
