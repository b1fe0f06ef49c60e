//! sysbench on the sql family: sysbench's own schema, statements (prepared, one set per table
//! and connection) and transactions; a deadlock or serialization failure rolls the event back
//! and runs a new one, as sysbench's ignored errors do.

use super::events::{Events, Query, RangeKind, Test};
use super::load::{self, Next, Plan};
use fathom_api::kind::Done;
use fathom_api::retry::{retryable, retrying};
use fathom_api::sql::{Dialect, SqlConn, SqlEngine, Stmt, Value};
use fathom_api::step::Client;

pub fn table_ddl(dialect: Dialect, storage: Option<&str>, table: u32) -> Vec<String> {
    vec![
        format!("DROP TABLE IF EXISTS sbtest{table}"),
        format!(
            "CREATE TABLE sbtest{table} (\n  id {},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  \
             PRIMARY KEY (id)\n){}",
            dialect.auto_increment_key(),
            dialect.table_suffix(storage)
        ),
    ]
}

/// The prepared statements of one table.
struct TableStmts {
    point: Stmt,
    simple: Stmt,
    sum: Stmt,
    order: Stmt,
    distinct: Stmt,
    index_update: Stmt,
    non_index_update: Stmt,
    delete: Stmt,
    insert: Stmt,
}

fn prepare_table(conn: &mut dyn SqlConn, t: u32) -> anyhow::Result<TableStmts> {
    let range = |what: &str, tail: &str| {
        format!("SELECT {what} FROM sbtest{t} WHERE id BETWEEN ? AND ?{tail}")
    };
    Ok(TableStmts {
        point: conn.prepare(&format!("SELECT c FROM sbtest{t} WHERE id=?"))?,
        simple: conn.prepare(&range("c", ""))?,
        sum: conn.prepare(&range("SUM(k)", ""))?,
        order: conn.prepare(&range("c", " ORDER BY c"))?,
        distinct: conn.prepare(&range("DISTINCT c", " ORDER BY c"))?,
        index_update: conn.prepare(&format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"))?,
        non_index_update: conn.prepare(&format!("UPDATE sbtest{t} SET c=? WHERE id=?"))?,
        delete: conn.prepare(&format!("DELETE FROM sbtest{t} WHERE id=?"))?,
        insert: conn.prepare(&format!(
            "INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"
        ))?,
    })
}

/// A client running one test's events.
pub struct SqlEvents<'e> {
    conn: Box<dyn SqlConn + 'e>,
    tables: Vec<TableStmts>,
    points: Option<Stmt>,
    events: Events,
}

impl<'e> SqlEvents<'e> {
    pub fn new(
        engine: &'e dyn SqlEngine,
        events: Events,
        tables: u32,
        random_points: u32,
    ) -> anyhow::Result<SqlEvents<'e>> {
        let mut conn = engine.connect()?;
        let tables = (1..=tables)
            .map(|t| prepare_table(conn.as_mut(), t))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let points = if events.test() == Test::RandomPoints {
            let marks = vec!["?"; random_points as usize].join(", ");
            Some(conn.prepare(&format!(
                "SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({marks})"
            ))?)
        } else {
            None
        };
        Ok(SqlEvents {
            conn,
            tables,
            points,
            events,
        })
    }

    fn event(&mut self) -> anyhow::Result<u64> {
        let ev = self.events.next_event();
        let conn = self.conn.as_mut();
        let mut bytes = 0;
        if ev.trx {
            conn.exec("BEGIN")?;
        }
        for q in &ev.queries {
            let out = match *q {
                Query::Point { table, id } => {
                    conn.run(self.tables[table as usize - 1].point, &[Value::Int(id)])?
                }
                Query::Range(r) => {
                    let s = &self.tables[r.table as usize - 1];
                    let stmt = match r.kind {
                        RangeKind::Simple => s.simple,
                        RangeKind::Sum => s.sum,
                        RangeKind::Order => s.order,
                        RangeKind::Distinct => s.distinct,
                    };
                    conn.run(stmt, &[Value::Int(r.start), Value::Int(r.end)])?
                }
                Query::Points { .. } => {
                    let params: Vec<Value> = ev.points.iter().map(|&k| Value::Int(k)).collect();
                    let stmt = self
                        .points
                        .ok_or_else(|| anyhow::anyhow!("select_random_points was not prepared"))?;
                    conn.run(stmt, &params)?
                }
                Query::IndexUpdate { table, id } => conn.run(
                    self.tables[table as usize - 1].index_update,
                    &[Value::Int(id)],
                )?,
                Query::NonIndexUpdate { table, id } => conn.run(
                    self.tables[table as usize - 1].non_index_update,
                    &[Value::Text(&ev.c), Value::Int(id)],
                )?,
                Query::DeleteInsert { table, id, k } => {
                    let s = &self.tables[table as usize - 1];
                    conn.run(s.delete, &[Value::Int(id)])?;
                    conn.run(
                        s.insert,
                        &[
                            Value::Int(id),
                            Value::Int(k),
                            Value::Text(&ev.c),
                            Value::Text(&ev.pad),
                        ],
                    )?
                }
            };
            bytes += out.bytes;
        }
        if ev.trx {
            conn.exec("COMMIT")?;
        }
        Ok(bytes)
    }
}

impl Client for SqlEvents<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        // A failed event's transaction is rolled back before it runs again.
        let (bytes, retries) = retrying(|| {
            self.event().inspect_err(|e| {
                if retryable(e) {
                    let _ = self.conn.exec("ROLLBACK");
                }
            })
        })?;
        Ok(Some(self.events.done(bytes, retries)))
    }
}

/// The prepare step's client: creates its tables, loads them in multi-row INSERTs of `batch`
/// rows, then creates the secondary index on k as sysbench does after loading.
pub struct SqlLoad<'e> {
    conn: Box<dyn SqlConn + 'e>,
    dialect: Dialect,
    storage: Option<String>,
    plan: Plan,
    /// The INSERT of a full batch into the table being loaded.
    full: Option<Stmt>,
    batch: i64,
}

impl<'e> SqlLoad<'e> {
    pub fn new(engine: &'e dyn SqlEngine, plan: Plan) -> anyhow::Result<SqlLoad<'e>> {
        Ok(SqlLoad {
            conn: engine.connect()?,
            dialect: engine.dialect(),
            storage: engine.storage_engine().map(str::to_string),
            batch: plan.batch(),
            plan,
            full: None,
        })
    }

    fn insert_sql(table: u32, n: i64) -> String {
        let one = "(?, ?, ?, ?)";
        format!(
            "INSERT INTO sbtest{table} (id, k, c, pad) VALUES {}",
            vec![one; n as usize].join(", ")
        )
    }

    /// Inserts rows `first..first + n` of `table`.
    fn insert(&mut self, table: u32, first: i64, n: i64) -> anyhow::Result<()> {
        let stmt = match self.full {
            Some(full) if n == self.batch => full,
            _ => self.conn.prepare(&Self::insert_sql(table, n))?,
        };
        let rows = &mut self.plan.rows;
        let mut ks = Vec::with_capacity(n as usize);
        let mut texts = Vec::with_capacity(2 * n as usize);
        for _ in 0..n {
            ks.push(rows.next_row());
            texts.push(rows.c.clone());
            texts.push(rows.pad.clone());
        }
        let mut params = Vec::with_capacity(4 * n as usize);
        for i in 0..n as usize {
            params.push(Value::Int(first + i as i64));
            params.push(Value::Int(ks[i]));
            params.push(Value::Text(&texts[2 * i]));
            params.push(Value::Text(&texts[2 * i + 1]));
        }
        self.conn.run(stmt, &params)?;
        Ok(())
    }
}

impl Client for SqlLoad<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        loop {
            match self.plan.next() {
                Next::Finished => return Ok(None),
                Next::Table(t) => {
                    for ddl in table_ddl(self.dialect, self.storage.as_deref(), t) {
                        self.conn.exec(&ddl)?;
                    }
                    self.full = Some(self.conn.prepare(&Self::insert_sql(t, self.batch))?);
                }
                Next::Batch { table, first, n } => {
                    self.insert(table, first, n)?;
                    return Ok(Some(load::rows_done(n)));
                }
                Next::TableDone(table) => {
                    if self.plan.create_secondary {
                        self.conn
                            .exec(&format!("CREATE INDEX k_{table} ON sbtest{table}(k)"))?;
                    }
                    return Ok(Some(load::index_done()));
                }
            }
        }
    }
}
