//! A client's connection to MariaDB: statements prepared on the server (the binary protocol,
//! sysbench's way) or kept as SQL text whose values are written in as literals each time they
//! run (the text protocol, as JDBC's `Statement` and MySQLdb send them).

use fathom_api::sql::{Keep, Outcome, Ran, Row, SqlConn, SqlError, Stmt, Value};
use mysql::prelude::Queryable;
use std::fmt::Write;

pub(super) struct MariaConn {
    conn: mysql::Conn,
    stmts: Vec<Kept>,
    /// The SQL text of the statement being sent, reused.
    text: String,
}

/// A statement as the connection keeps it.
enum Kept {
    /// Prepared on the server, sent by the binary protocol.
    Prepared(mysql::Statement),
    /// SQL text cut at its `?` placeholders: the parameters go in between as literals.
    Text(Vec<String>),
}

/// Deadlock (1213), lock wait timeout (1205) and "record changed" (1020) are retried, as
/// sysbench's `--mysql-ignore-errors` default.
pub(super) const RETRYABLE: [u16; 3] = [1213, 1205, 1020];

fn error(e: mysql::Error) -> anyhow::Error {
    let retryable = matches!(&e, mysql::Error::MySqlError(m) if RETRYABLE.contains(&m.code));
    SqlError::classified(retryable, e.to_string())
}

/// What one row adds to an outcome: its values' bytes (a number counts 8, as the binary
/// protocol sends it), and column `keep` as an integer.
fn add_row(out: &mut Outcome, row: &mysql::Row, keep: Keep) {
    out.rows += 1;
    if let Some(c) = keep.column {
        let value = row
            .get_opt::<Option<i64>, _>(c)
            .and_then(|v| v.ok().flatten());
        keep.row(out, value);
    }
    let columns = row.columns_ref();
    for i in 0..row.len() {
        let numeric = columns
            .get(i)
            .is_some_and(|c| c.column_type().is_numeric_type());
        out.bytes += match row.as_ref(i) {
            Some(mysql::Value::NULL) | None => 0,
            Some(mysql::Value::Bytes(b)) if !numeric => b.len() as u64,
            Some(_) => 8,
        };
    }
}

impl MariaConn {
    pub(super) fn new(conn: mysql::Conn) -> MariaConn {
        MariaConn {
            conn,
            stmts: Vec::new(),
            text: String::new(),
        }
    }

    /// Sends a text statement with its parameters written in; every row of the first result
    /// goes to `on_row`, the results of the statements after it are read and dropped.
    fn run_text(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        mut on_row: impl FnMut(&mysql::Row),
    ) -> anyhow::Result<(u64, Option<i64>)> {
        let Kept::Text(parts) = &self.stmts[stmt.0] else {
            unreachable!("run_text on a prepared statement")
        };
        write_text(&mut self.text, parts, params)?;
        let mut result = self.conn.query_iter(&self.text).map_err(error)?;
        let affected = result.affected_rows();
        let inserted = result
            .last_insert_id()
            .filter(|&id| id > 0)
            .map(|id| id as i64);
        if let Some(set) = result.iter() {
            for row in set {
                on_row(&row.map_err(error)?);
            }
        }
        while let Some(set) = result.iter() {
            for row in set {
                row.map_err(error)?;
            }
        }
        Ok((affected, inserted))
    }
}

/// A text statement cut at its `?` placeholders, the parameters' places.
pub(super) fn text_parts(sql: &str) -> Vec<String> {
    sql.split('?').map(str::to_string).collect()
}

/// The statement's text with `params` written in as literals.
pub(super) fn write_text(
    out: &mut String,
    parts: &[String],
    params: &[Value<'_>],
) -> anyhow::Result<()> {
    fathom_api::sql::write_literals(out, parts, params, |out, value| match value {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Text(t) => quote(out, t),
        Value::Number(n) => out.push_str(n),
        // Bytes go as a hex literal, as LinkBench's MySQL store writes a payload (it quotes one
        // only when every byte is a letter or a digit). The server parses it for less than a
        // `_binary'…'` string, whose introducer is a character set looked up by name and whose
        // text is unescaped and converted (docs/performance.md, LinkBench's load).
        Value::Bytes(b) => {
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            out.reserve(b.len() * 2 + 3);
            out.push_str("X'");
            for byte in *b {
                out.push(DIGITS[usize::from(byte >> 4)] as char);
                out.push(DIGITS[usize::from(byte & 15)] as char);
            }
            out.push('\'');
        }
    })
}

/// A string literal in quotes, escaped as MySQL's string literals are.
fn quote(out: &mut String, text: &str) {
    out.push('\'');
    for ch in text.chars() {
        match ch {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x1a' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

impl SqlConn for MariaConn {
    fn exec(&mut self, sql: &str) -> anyhow::Result<()> {
        self.conn.query_drop(sql).map_err(error)
    }

    fn prepare(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        let s = self
            .conn
            .prep(sql)
            .map_err(|e| anyhow::anyhow!("preparing `{sql}`: {e}"))?;
        Ok(Stmt::keep(&mut self.stmts, Kept::Prepared(s)))
    }

    fn prepare_text(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        Ok(Stmt::keep(&mut self.stmts, Kept::Text(text_parts(sql))))
    }

    fn run_with(&mut self, stmt: Stmt, params: &[Value<'_>], keep: Keep) -> Ran {
        self.each_row(stmt, params, keep.first, |out, row| add_row(out, row, keep))
    }

    fn run_row(&mut self, stmt: Stmt, params: &[Value<'_>], n: u64, row: &mut Row) -> Ran {
        row.0.clear();
        self.each_row(stmt, params, false, |out, r| {
            if out.rows == n {
                row.0 = (0..r.len()).map(|i| r.as_ref(i).and_then(text)).collect();
            }
            add_row(out, r, Keep::NOTHING);
        })
    }
}

impl MariaConn {
    /// Runs a statement, handing `each` every row it returns (only the first with `first`, a
    /// scalar); one without columns gives its affected rows.
    fn each_row(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        first: bool,
        mut each: impl FnMut(&mut Outcome, &mysql::Row),
    ) -> Ran {
        let mut out = Outcome::default();
        let prepared = match &self.stmts[stmt.0] {
            Kept::Prepared(p) => p,
            Kept::Text(_) => {
                let (affected, inserted) =
                    self.run_text(stmt, params, |row| each(&mut out, row))?;
                (out.affected, out.inserted_id) = (affected, inserted);
                return Ok(out);
            }
        };
        let params = mysql::Params::Positional(params.iter().map(value).collect());
        if first {
            // A scalar: the first row alone.
            let row: Option<mysql::Row> = self.conn.exec_first(prepared, params).map_err(error)?;
            if let Some(row) = row {
                each(&mut out, &row);
            }
            return Ok(out);
        }
        if prepared.num_columns() == 0 {
            self.conn.exec_drop(prepared, params).map_err(error)?;
            out.affected = self.conn.affected_rows();
            return Ok(out);
        }
        for row in self.conn.exec_iter(prepared, params).map_err(error)? {
            each(&mut out, &row.map_err(error)?);
        }
        Ok(out)
    }
}

/// A value as a text row writes it; `None` for NULL.
fn text(v: &mysql::Value) -> Option<String> {
    Some(match v {
        mysql::Value::NULL => return None,
        mysql::Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        mysql::Value::Int(i) => i.to_string(),
        mysql::Value::UInt(u) => u.to_string(),
        mysql::Value::Float(f) => f.to_string(),
        mysql::Value::Double(d) => d.to_string(),
        mysql::Value::Date(y, mo, d, h, mi, s, us) => {
            let frac = if *us > 0 {
                format!(".{us:06}")
            } else {
                String::new()
            };
            format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{frac}")
        }
        mysql::Value::Time(neg, days, h, mi, s, _) => {
            let sign = if *neg { "-" } else { "" };
            format!("{sign}{:02}:{mi:02}:{s:02}", *days * 24 + u32::from(*h))
        }
    })
}

fn value(v: &Value<'_>) -> mysql::Value {
    match v {
        Value::Int(i) => mysql::Value::Int(*i),
        Value::Text(s) | Value::Number(s) => mysql::Value::Bytes(s.as_bytes().to_vec()),
        Value::Bytes(b) => mysql::Value::Bytes(b.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_statements_write_their_parameters_in_as_literals() {
        let parts = text_parts("INSERT INTO t VALUES (?, ?, ?, ?); COMMIT");
        let mut out = String::new();
        let params = [
            Value::Int(-7),
            Value::Text("it's a \\ \n"),
            Value::Bytes(b"ab'c"),
            Value::Bytes(&[0x00, 0xdc, 0x7f]),
        ];
        write_text(&mut out, &parts, &params).unwrap();
        assert_eq!(
            out,
            r"INSERT INTO t VALUES (-7, 'it\'s a \\ \n', X'61622763', X'00dc7f'); COMMIT"
        );
        let err = write_text(&mut out, &parts, &params[..2]).unwrap_err();
        assert!(
            err.to_string().contains("takes 4 parameters, 2 given"),
            "{err}"
        );
    }
}
