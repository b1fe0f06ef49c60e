//! LinkBench on the sql family: the original's tables (`schema.rs`) and `LinkStoreMysql`'s
//! statements — on MariaDB verbatim (`INSERT … ON DUPLICATE KEY UPDATE` read
//! by its affected rows), on PostgreSQL and SQLite with `ON CONFLICT` and a locking read where
//! MySQL's affected-rows trick has no equal. Payloads are binary columns (the original's are
//! latin1 text, which takes any byte). On MariaDB the statements go as LinkStoreMysql sends them
//! by default: SQL text with the values written in, on two connections per client — writes on
//! one with autocommit off, each operation's COMMIT sent with its last statement or after it,
//! reads on the other in autocommit (`statements=prepared` prepares them once on one
//! connection and wraps writes in BEGIN … COMMIT).

use super::model::{self, Count, Link, LinkRows, ListPage, Node, Store, HIDDEN, VISIBLE};
use super::syntax::Syntax;
use crate::statements::Statements;
use fathom_api::sql::{Dialect, SqlConn, SqlEngine, Stmt, Value};
use std::collections::HashMap;

const LINK_COLS: &str = "id1, id2, link_type, visibility, data, time, version";
/// Where `time` is in `LINK_COLS`.
const LINK_TIME_COL: usize = 5;
/// Where `type` is in `get_node`'s columns.
const NODE_TYPE_COL: usize = 1;

/// An operation's statement: one in the middle, or the last, which in text mode carries the
/// operation's COMMIT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Place {
    Within,
    Last,
    /// A read on the reads' connection, in autocommit: nothing to commit.
    Read,
}

pub struct SqlStore<'e> {
    /// The writes' connection (LinkStoreMysql's `conn_rw`), and the reads' too where there is
    /// one connection.
    conn: Box<dyn SqlConn + 'e>,
    /// In text mode, the reads' connection in autocommit (LinkStoreMysql's `conn_ro`):
    /// node and link reads and counts, never a COMMIT.
    reads: Option<Box<dyn SqlConn + 'e>>,
    dialect: Dialect,
    syntax: Syntax,
    /// Statements by name, made at first use; variable-length ones also by their count.
    stmts: HashMap<(&'static str, usize, Place), Stmt>,
    /// Text statements, writes on a connection with autocommit off.
    text: bool,
    /// In text mode, whether the operation's COMMIT has been sent.
    committed: bool,
}

impl<'e> SqlStore<'e> {
    /// A client's store. In text mode (LinkStoreMysql's way, on MariaDB) writes go on a
    /// connection with autocommit off, each operation's COMMIT with its last statement or after
    /// it, and reads on a second connection in autocommit, opened after it as the original
    /// opens them; prepared statements run on one connection, writes between BEGIN and COMMIT
    /// and reads in autocommit.
    pub fn new(engine: &'e dyn SqlEngine, statements: Statements) -> anyhow::Result<Self> {
        let text = statements.text_on(engine.dialect(), &[Dialect::MariaDb])?;
        let mut conn = engine.connect()?;
        let mut reads = None;
        if text {
            conn.exec("SET autocommit = 0")?;
            reads = Some(engine.connect()?);
        }
        Ok(SqlStore {
            conn,
            reads,
            dialect: engine.dialect(),
            syntax: Syntax::of(engine.dialect()),
            stmts: HashMap::new(),
            text,
            committed: false,
        })
    }

    /// A write's statement by name (and count, for variable-length ones), prepared at first
    /// use; `Place::Last`, an operation's last: in text mode its COMMIT goes with it.
    fn stmt(
        &mut self,
        name: &'static str,
        n: usize,
        place: Place,
        sql: impl FnOnce(Syntax) -> String,
    ) -> anyhow::Result<Stmt> {
        if place == Place::Last {
            self.committed = true;
        }
        let place = if self.text { place } else { Place::Within };
        if let Some(s) = self.stmts.get(&(name, n, place)) {
            return Ok(*s);
        }
        let mut text = sql(self.syntax);
        let s = if self.text {
            if place == Place::Last {
                text.push_str("; COMMIT");
            }
            self.conn.prepare_text(&text)?
        } else {
            self.conn.prepare(&text)?
        };
        self.stmts.insert((name, n, place), s);
        Ok(s)
    }

    /// A read's statement, prepared at first use on the reads' connection (text, no COMMIT)
    /// or, with one connection, on it.
    fn read_stmt(
        &mut self,
        name: &'static str,
        n: usize,
        sql: impl FnOnce(Syntax) -> String,
    ) -> anyhow::Result<Stmt> {
        if let Some(s) = self.stmts.get(&(name, n, Place::Read)) {
            return Ok(*s);
        }
        let text = sql(self.syntax);
        let s = match &mut self.reads {
            Some(reads) => reads.prepare_text(&text)?,
            None => self.conn.prepare(&text)?,
        };
        self.stmts.insert((name, n, Place::Read), s);
        Ok(s)
    }

    /// The connection reads run on.
    fn reader(&mut self) -> &mut (dyn SqlConn + 'e) {
        match &mut self.reads {
            Some(reads) => reads.as_mut(),
            None => self.conn.as_mut(),
        }
    }

    /// In text mode, commits unless the operation's last statement did.
    fn end(&mut self) -> anyhow::Result<()> {
        if self.text && !self.committed {
            self.conn.exec("COMMIT")?;
        }
        self.committed = false;
        Ok(())
    }

    /// Commits a bulk write, as LinkStoreMysql does after it (text mode; otherwise the
    /// statement ran in autocommit).
    fn commit_bulk(&mut self) -> anyhow::Result<()> {
        self.committed = false;
        self.end()
    }

    fn run(&mut self, stmt: Stmt, params: &[Value<'_>]) -> anyhow::Result<u64> {
        Ok(self.conn.run(stmt, params)?.affected)
    }

    /// The count row of (id1, type) moves by `delta` (+1 or -1, never below 0), made if missing.
    fn bump_count_at(
        &mut self,
        id1: i64,
        link_type: i64,
        delta: i64,
        now_ms: i64,
        place: Place,
    ) -> anyhow::Result<()> {
        let name = if delta > 0 { "count_up" } else { "count_down" };
        let stmt = self.stmt(name, 0, place, |d| {
            let first = if delta > 0 { 1 } else { 0 };
            let (new, down) = match d.mysql {
                true => ("count + 1", "IF(count = 0, 0, count - 1)"),
                false => (
                    "counttable.count + 1",
                    "CASE WHEN counttable.count = 0 THEN 0 ELSE counttable.count - 1 END",
                ),
            };
            let set = if delta > 0 { new } else { down };
            match d.mysql {
                true => format!(
                    "INSERT INTO counttable (id, link_type, count, time, version) VALUES (?, ?, {first}, ?, 0) \
                     ON DUPLICATE KEY UPDATE count = {set}, version = version + 1, time = VALUES(time)"
                ),
                false => format!(
                    "INSERT INTO counttable (id, link_type, count, time, version) VALUES (?, ?, {first}, ?, 0) \
                     ON CONFLICT (id, link_type) DO UPDATE SET count = {set}, \
                     version = counttable.version + 1, time = excluded.time"
                ),
            }
        })?;
        self.run(
            stmt,
            &[Value::Int(id1), Value::Int(link_type), Value::Int(now_ms)],
        )?;
        Ok(())
    }

    fn set_link_at(&mut self, link: &Link, place: Place) -> anyhow::Result<()> {
        let stmt = self.stmt("update_link", 0, place, |_| {
            "UPDATE linktable SET visibility = ?, data = ?, time = ?, version = ? \
             WHERE id1 = ? AND id2 = ? AND link_type = ?"
                .to_string()
        })?;
        self.run(
            stmt,
            &[
                Value::Int(link.visibility),
                Value::Bytes(&link.data),
                Value::Int(link.time),
                Value::Int(link.version),
                Value::Int(link.id1),
                Value::Int(link.id2),
                Value::Int(link.link_type),
            ],
        )?;
        Ok(())
    }

    fn insert_link_row(&mut self, link: &Link) -> anyhow::Result<u64> {
        let stmt = self.stmt("insert_link", 0, Place::Within, |d| {
            let upsert = match d.mysql {
                true => " ON DUPLICATE KEY UPDATE visibility = VALUES(visibility)",
                false => "",
            };
            format!("INSERT INTO linktable ({LINK_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?){upsert}")
        })?;
        self.run(stmt, &link_params(link))
    }
}

fn link_params(l: &Link) -> [Value<'_>; 7] {
    [
        Value::Int(l.id1),
        Value::Int(l.id2),
        Value::Int(l.link_type),
        Value::Int(l.visibility),
        Value::Bytes(&l.data),
        Value::Int(l.time),
        Value::Int(l.version),
    ]
}

fn rows(n: usize, cols: usize) -> String {
    let one = format!("({})", vec!["?"; cols].join(", "));
    vec![one; n].join(", ")
}

/// The rows of a link write off MariaDB, in the operation's transaction.
impl LinkRows for SqlStore<'_> {
    /// Locking the row where the dialect can.
    fn visibility(&mut self, id1: i64, link_type: i64, id2: i64) -> anyhow::Result<Option<i64>> {
        let stmt = self.stmt("visibility", 0, Place::Within, |d| {
            let lock = if d.row_locks { " FOR UPDATE" } else { "" };
            format!(
                "SELECT visibility FROM linktable WHERE id1 = ? AND id2 = ? AND link_type = ?{lock}"
            )
        })?;
        self.conn.scalar(
            stmt,
            &[Value::Int(id1), Value::Int(id2), Value::Int(link_type)],
        )
    }

    fn insert_link(&mut self, link: &Link) -> anyhow::Result<()> {
        self.insert_link_row(link).map(|_| ())
    }

    fn set_link(&mut self, link: &Link) -> anyhow::Result<()> {
        self.set_link_at(link, Place::Within)
    }

    fn hide_link(&mut self, id1: i64, link_type: i64, id2: i64) -> anyhow::Result<()> {
        let stmt = self.stmt("hide_link", 0, Place::Within, |_| {
            "UPDATE linktable SET visibility = ? WHERE id1 = ? AND id2 = ? AND link_type = ?"
                .to_string()
        })?;
        let params = [HIDDEN, id1, id2, link_type].map(Value::Int);
        self.run(stmt, &params)?;
        Ok(())
    }

    fn bump_count(&mut self, id1: i64, link_type: i64, delta: i64, now: i64) -> anyhow::Result<()> {
        self.bump_count_at(id1, link_type, delta, now, Place::Within)
    }

    /// Between BEGIN and COMMIT, or in text mode (autocommit off) up to the COMMIT its last
    /// statement sent, or one sent after it.
    fn transaction<T>(
        &mut self,
        body: impl FnOnce(&mut Self) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        if !self.text {
            self.conn.exec("BEGIN")?;
        }
        self.committed = false;
        match body(self) {
            Ok(v) => {
                if self.text {
                    self.end()?;
                } else {
                    self.conn.exec("COMMIT")?;
                }
                Ok(v)
            }
            Err(e) => {
                self.committed = false;
                let _ = self.conn.exec("ROLLBACK");
                Err(e)
            }
        }
    }
}

impl Store for SqlStore<'_> {
    fn reset_nodes(&mut self, start: i64) -> anyhow::Result<()> {
        let sql: Vec<String> = match self.dialect {
            Dialect::MariaDb => vec![
                "TRUNCATE TABLE nodetable".into(),
                format!("ALTER TABLE nodetable AUTO_INCREMENT = {start}"),
            ],
            Dialect::Postgres => vec![
                "TRUNCATE nodetable".into(),
                format!("ALTER SEQUENCE nodetable_id_seq RESTART WITH {start}"),
            ],
            Dialect::Sqlite if start == 1 => vec!["DELETE FROM nodetable".into()],
            Dialect::Sqlite => {
                anyhow::bail!("sqlite-sql numbers nodes from 1; startid1 is {start}")
            }
        };
        for s in sql {
            self.conn.exec(&s)?;
        }
        Ok(())
    }

    /// One multi-row INSERT; its ids are consecutive. MariaDB says the first in its OK packet,
    /// where JDBC's generated keys read it; the others return them (`RETURNING`). None come
    /// back from the null engine, where the harness measures its own cost.
    fn add_nodes(&mut self, nodes: &[Node]) -> anyhow::Result<Vec<i64>> {
        let n = nodes.len();
        let stmt = self.stmt("add_nodes", n, Place::Last, |d| {
            let returning = if d.mysql { "" } else { " RETURNING id" };
            format!(
                "INSERT INTO nodetable (type, version, time, data) VALUES {}{returning}",
                rows(n, 4)
            )
        })?;
        let mut params = Vec::with_capacity(n * 4);
        for node in nodes {
            params.extend([
                Value::Int(node.node_type),
                Value::Int(node.version),
                Value::Int(node.time),
                Value::Bytes(&node.data),
            ]);
        }
        let first = match self.syntax.mysql {
            true => self.conn.run(stmt, &params)?.inserted_id,
            false => self.conn.scalar(stmt, &params)?,
        };
        Ok(first.map_or_else(Vec::new, |f| (0..n as i64).map(|i| f + i).collect()))
    }

    fn add_links_bulk(&mut self, links: &[Link]) -> anyhow::Result<()> {
        let n = links.len();
        let stmt = self.stmt("add_links_bulk", n, Place::Within, |d| {
            let upsert = match d.mysql {
                true => "ON DUPLICATE KEY UPDATE visibility = VALUES(visibility)",
                false => "ON CONFLICT (link_type, id1, id2) DO UPDATE SET visibility = excluded.visibility",
            };
            format!("INSERT INTO linktable ({LINK_COLS}) VALUES {} {upsert}", rows(n, 7))
        })?;
        let params: Vec<Value<'_>> = links.iter().flat_map(link_params).collect();
        self.run(stmt, &params)?;
        self.commit_bulk()
    }

    fn add_counts_bulk(&mut self, counts: &[Count]) -> anyhow::Result<()> {
        let n = counts.len();
        let stmt = self.stmt("add_counts_bulk", n, Place::Within, |d| match d.mysql {
            true => format!(
                "REPLACE INTO counttable (id, link_type, count, time, version) VALUES {}",
                rows(n, 5)
            ),
            false => format!(
                "INSERT INTO counttable (id, link_type, count, time, version) VALUES {} \
                 ON CONFLICT (id, link_type) DO UPDATE SET count = excluded.count, \
                 time = excluded.time, version = excluded.version",
                rows(n, 5)
            ),
        })?;
        let params: Vec<Value<'_>> = counts
            .iter()
            .flat_map(|c| {
                [
                    Value::Int(c.id1),
                    Value::Int(c.link_type),
                    Value::Int(c.count),
                    Value::Int(c.time),
                    Value::Int(c.version),
                ]
            })
            .collect();
        self.run(stmt, &params)?;
        self.commit_bulk()
    }

    fn add_link(&mut self, link: &Link) -> anyhow::Result<bool> {
        if !self.syntax.mysql {
            return model::add_link(self, link);
        }
        self.transaction(|s| {
            // LinkStoreMysql: 1 = inserted, 2 = existed and its visibility changed, 0 = existed
            // with this visibility already. The last statement carries the COMMIT in text mode.
            let affected = s.insert_link_row(link)?;
            let data = affected != 1;
            let delta = match (affected, link.visibility == VISIBLE) {
                (1 | 2, true) => 1,
                (2, false) => -1,
                _ => 0,
            };
            if delta != 0 {
                let place = if data { Place::Within } else { Place::Last };
                s.bump_count_at(link.id1, link.link_type, delta, link.time, place)?;
            }
            if data {
                s.set_link_at(link, Place::Last)?;
            }
            Ok(data)
        })
    }

    fn delete_link(&mut self, id1: i64, link_type: i64, id2: i64) -> anyhow::Result<bool> {
        model::delete_link(self, id1, link_type, id2, super::now_ms())
    }

    fn update_link(&mut self, link: &Link) -> anyhow::Result<bool> {
        model::update_link(self, link)
    }

    fn count_links(&mut self, id1: i64, link_type: i64) -> anyhow::Result<i64> {
        let stmt = self.read_stmt("count_links", 0, |_| {
            "SELECT count FROM counttable WHERE id = ? AND link_type = ?".to_string()
        })?;
        Ok(self
            .reader()
            .scalar(stmt, &[Value::Int(id1), Value::Int(link_type)])?
            .unwrap_or(0))
    }

    fn multiget_links(&mut self, id1: i64, link_type: i64, id2s: &[i64]) -> anyhow::Result<u64> {
        let n = id2s.len();
        let stmt = self.read_stmt("multiget", n, |_| {
            format!(
                "SELECT {LINK_COLS} FROM linktable WHERE id1 = ? AND link_type = ? AND id2 IN ({})",
                vec!["?"; n].join(", ")
            )
        })?;
        let mut params = vec![Value::Int(id1), Value::Int(link_type)];
        params.extend(id2s.iter().map(|&i| Value::Int(i)));
        Ok(self.reader().run(stmt, &params)?.rows)
    }

    fn get_link_list(&mut self, page: &ListPage) -> anyhow::Result<(i64, Option<i64>)> {
        let ListPage { id1, link_type, .. } = *page;
        let list = |what: &str, d: Syntax| {
            let force = if d.mysql {
                " FORCE INDEX (id1_type)"
            } else {
                ""
            };
            let page = if d.mysql {
                "LIMIT ?, ?"
            } else {
                "LIMIT ? OFFSET ?"
            };
            format!(
                "SELECT {what} FROM linktable{force} WHERE id1 = ? AND link_type = ? AND time >= ? \
                 AND time <= ? AND visibility = ? ORDER BY time DESC {page}"
            )
        };
        // MariaDB's LIMIT takes the offset first, the others' LIMIT … OFFSET last.
        let mariadb = self.syntax.mysql;
        let params = |offset: i64, limit: i64| {
            let (a, b) = if mariadb {
                (offset, limit)
            } else {
                (limit, offset)
            };
            [
                Value::Int(id1),
                Value::Int(link_type),
                Value::Int(0),
                Value::Int(page.max_time),
                Value::Int(VISIBLE),
                Value::Int(a),
                Value::Int(b),
            ]
        };
        let stmt = self.read_stmt("link_list", 0, |d| list(LINK_COLS, d))?;
        // A full page: the history cache keeps its oldest (last) link's time, read off the
        // page as LinkStoreMysql does.
        let page_rows = self.reader().run_keeping(
            stmt,
            &params(page.offset, page.limit),
            Some(LINK_TIME_COL),
        )?;
        let found = page_rows.rows as i64;
        Ok((found, page_rows.kept.filter(|_| found == page.limit)))
    }

    fn add_node(&mut self, node: &Node) -> anyhow::Result<Option<i64>> {
        Ok(self.add_nodes(std::slice::from_ref(node))?.first().copied())
    }

    fn update_node(&mut self, node: &Node) -> anyhow::Result<bool> {
        let stmt = self.stmt("update_node", 0, Place::Last, |_| {
            "UPDATE nodetable SET version = ?, time = ?, data = ? WHERE id = ? AND type = ?"
                .to_string()
        })?;
        let n = self.run(
            stmt,
            &[
                Value::Int(node.version),
                Value::Int(node.time),
                Value::Bytes(&node.data),
                Value::Int(node.id),
                Value::Int(node.node_type),
            ],
        )?;
        Ok(n == 1)
    }

    fn delete_node(&mut self, node_type: i64, id: i64) -> anyhow::Result<bool> {
        let stmt = self.stmt("delete_node", 0, Place::Last, |_| {
            "DELETE FROM nodetable WHERE id = ? AND type = ?".to_string()
        })?;
        Ok(self.run(stmt, &[Value::Int(id), Value::Int(node_type)])? == 1)
    }

    /// By id alone, the type compared here, as LinkStoreMysql's `getNode` does.
    fn get_node(&mut self, node_type: i64, id: i64) -> anyhow::Result<Option<usize>> {
        let stmt = self.read_stmt("get_node", 0, |_| {
            "SELECT id, type, version, time, data FROM nodetable WHERE id = ?".to_string()
        })?;
        let out = self
            .reader()
            .run_keeping(stmt, &[Value::Int(id)], Some(NODE_TYPE_COL))?;
        Ok((out.rows > 0 && out.kept == Some(node_type)).then_some(out.bytes as usize))
    }

    fn check_counts(&mut self) -> anyhow::Result<(u64, u64)> {
        let mut one = |sql: &str| -> anyhow::Result<u64> {
            let s = self.conn.prepare(sql)?;
            Ok(self.conn.scalar(s, &[])?.unwrap_or(0) as u64)
        };
        let wrong = one(
            "SELECT count(*) FROM counttable c WHERE c.count <> (SELECT count(*) FROM linktable l \
             WHERE l.id1 = c.id AND l.link_type = c.link_type AND l.visibility = 1)",
        )?;
        let uncounted = one(
            "SELECT count(*) FROM (SELECT id1, link_type FROM linktable WHERE visibility = 1 \
             GROUP BY id1, link_type) v WHERE NOT EXISTS (SELECT 1 FROM counttable c \
             WHERE c.id = v.id1 AND c.link_type = v.link_type)",
        )?;
        let rows = one("SELECT count(*) FROM counttable")?;
        Ok((wrong + uncounted, rows + uncounted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_column_is_where_the_list_reads_it() {
        let cols: Vec<_> = LINK_COLS.split(", ").collect();
        assert_eq!(cols[LINK_TIME_COL], "time");
    }
}
