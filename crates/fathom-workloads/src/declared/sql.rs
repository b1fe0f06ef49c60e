//! A declared workload's operations on a SQL database, as YCSB's JDBC binding runs them: the
//! records in `usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT, ...)`, one statement
//! per operation in autocommit (read-modify-write: a read, then an update), sent as the
//! binding's driver sends them (`statements=original`: SQL text on MariaDB, as Connector/J's
//! client-side prepared statements; prepared on PostgreSQL, as pgjdbc prepares on the server).

use super::ops::{Carry, Core, Op};
use super::record::Fields;
use super::YcsbKind;
use crate::statements::Statements;
use fathom_api::kind::Done;
use fathom_api::sql::{Dialect, SqlConn, SqlEngine, Stmt, Value};

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

pub struct SqlStore<'e> {
    conn: Box<dyn SqlConn + 'e>,
    stmts: Prepared,
    /// Each field's new bytes, all of them for an insert.
    values: Vec<Vec<u8>>,
    /// Every field's number, for the statements that write them all.
    all: Vec<usize>,
}

impl<'e> SqlStore<'e> {
    pub fn new(
        engine: &'e dyn SqlEngine,
        statements: Statements,
        table: &str,
        fields: &Fields,
    ) -> anyhow::Result<SqlStore<'e>> {
        let text = statements.text_on(engine.dialect(), &[Dialect::MariaDb])?;
        let mut conn = engine.connect()?;
        let stmts = prepare(conn.as_mut(), text, table, fields)?;
        Ok(SqlStore {
            conn,
            stmts,
            values: vec![Vec::new(); fields.names.len()],
            all: (0..fields.names.len()).collect(),
        })
    }

    /// Runs `stmt` with the given fields' new values (printable ASCII) and the key: first for
    /// an insert, last for an update. Rows it changed.
    fn run_with_fields(
        &mut self,
        core: &Core,
        stmt: Stmt,
        fields: &[usize],
        key_first: bool,
    ) -> anyhow::Result<u64> {
        let key = core.key_text()?;
        let mut params: Vec<Value<'_>> = Vec::with_capacity(fields.len() + 1);
        if key_first {
            params.push(Value::Text(key));
        }
        for &i in fields {
            params.push(Value::Text(std::str::from_utf8(&self.values[i])?));
        }
        if !key_first {
            params.push(Value::Text(key));
        }
        Ok(self.conn.run(stmt, &params)?.affected)
    }

    /// New values for `fields`, written with `stmt`.
    fn write(
        &mut self,
        core: &mut Core,
        stmt: Stmt,
        fields: &[usize],
        key_first: bool,
    ) -> anyhow::Result<u64> {
        for &i in fields {
            core.fresh(&mut self.values[i]);
        }
        self.run_with_fields(core, stmt, fields, key_first)
    }

    fn update(&mut self, core: &mut Core, field: Option<usize>) -> anyhow::Result<u64> {
        match field {
            Some(f) => self.write(core, self.stmts.update_one[f], &[f], false),
            None => {
                let all = std::mem::take(&mut self.all);
                let rows = self.write(core, self.stmts.update_all, &all, false);
                self.all = all;
                rows
            }
        }
    }

    /// Runs a read of the key (and `more` parameters): rows and bytes into `done`.
    fn read(
        &mut self,
        core: &Core,
        stmt: Stmt,
        more: Option<i64>,
        done: &mut Done,
    ) -> anyhow::Result<()> {
        let key = Value::Text(core.key_text()?);
        let out = match more {
            None => self.conn.run(stmt, &[key])?,
            Some(n) => self.conn.run(stmt, &[key, Value::Int(n)])?,
        };
        (done.rows, done.bytes) = (out.rows, out.bytes);
        Ok(())
    }
}

impl Carry for SqlStore<'_> {
    fn carry_out(&mut self, core: &mut Core, op: Op) -> anyhow::Result<Done> {
        let mut done = Done::of(op.kind);
        match op.kind {
            YcsbKind::Load | YcsbKind::Insert => {
                let all = std::mem::take(&mut self.all);
                let rows = self.write(core, self.stmts.insert, &all, true);
                self.all = all;
                done.rows = rows?;
                let values: usize = self.values.iter().map(Vec::len).sum();
                done.bytes = (core.key.len() + values) as u64;
            }
            YcsbKind::Read => self.read(core, self.stmts.read, None, &mut done)?,
            YcsbKind::Update => done.rows = self.update(core, op.field)?,
            YcsbKind::ReadModifyWrite => {
                self.read(core, self.stmts.read, None, &mut done)?;
                self.update(core, op.field)?;
            }
            YcsbKind::Scan => {
                let n = op.scan_length as i64;
                self.read(core, self.stmts.scan, Some(n), &mut done)?
            }
            YcsbKind::Delete => {
                let key = Value::Text(core.key_text()?);
                done.rows = self.conn.run(self.stmts.delete, &[key])?.affected;
            }
        }
        Ok(done)
    }
}
