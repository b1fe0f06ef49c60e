//! fathom's own PostgreSQL client behind `SqlConn` (`--set client=fathom`, the default):
//! statements prepared once by name; each run is one write (Bind, Execute, Sync) and one read of
//! the reply, its rows counted and measured in the read buffer (binary results but for strings)
//! without a value built per column.

use super::conn::RETRYABLE;
use super::values::binary_text;
use super::wire::{protocol, put_cstr, server_error, Body, Login, PgResult, PgWire, PgWireError};
use crate::netbuf::Keep;
use fathom_api::sql::{Dialect, KeepRow, Outcome, Ran, Row, SqlConn, SqlError, Stmt, Value};

/// Type OIDs of the integers, sent and read in binary.
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
/// Type OIDs of the character strings (`text`, `char(n)`, `varchar(n)`), whose text and binary
/// forms are the same bytes.
const STRINGS: [u32; 3] = [25, 1042, 1043];

/// A statement prepared on the server under `name`.
struct Prepared {
    /// A statement kept as text (`prepare_text`): its parts around the `?` placeholders,
    /// sent as a simple query with the values written in (pgbench's `-M simple`).
    text: Option<Vec<String>>,
    name: String,
    /// Each parameter's type, as the server inferred it.
    params: Vec<u32>,
    /// Each result column's type; empty for a statement that returns no rows.
    columns: Vec<u32>,
    /// The result-format part of its Bind message, written once (`result_formats`).
    result_formats: Vec<u8>,
}

/// The result formats a Bind asks for: character strings as text, every other column in
/// binary, as pgjdbc asks (its binary transfer covers numbers, dates and bytes, not strings).
/// The bytes are the same either way; the server's work is not: a string's binary send
/// builds a buffer per value (`pq_begintypsend`), so asking binary for YCSB's ten text
/// fields cost the server more per read than the JDBC binding's text.
fn result_formats(columns: &[u32]) -> Vec<u8> {
    if !columns.iter().any(|c| STRINGS.contains(c)) {
        // One format for every column: binary.
        return vec![0, 1, 0, 1];
    }
    let mut out = (columns.len() as u16).to_be_bytes().to_vec();
    for c in columns {
        out.extend_from_slice(&u16::from(!STRINGS.contains(c)).to_be_bytes());
    }
    out
}

pub(super) struct LeanConn {
    wire: PgWire,
    stmts: Vec<Prepared>,
    /// Each parameter's format code (0 text, 1 binary) for the statement being bound.
    formats: Vec<u16>,
    /// The row whose values `run_row` keeps.
    keep_row: KeepRow,
}

fn error(e: PgWireError) -> anyhow::Error {
    let retryable = matches!(&e, PgWireError::Server(s) if RETRYABLE.contains(&s.code.as_str()));
    SqlError::classified(retryable, e.to_string())
}

/// Reads the reply up to ReadyForQuery, handing every other message to `each`. The first
/// ErrorResponse (or `each`'s first error) is the result, once the reply is read through.
fn reply(wire: &mut PgWire, mut each: impl FnMut(u8, &[u8]) -> PgResult<()>) -> PgResult<()> {
    let mut failed = None;
    loop {
        let (tag, body) = wire.message()?;
        match tag {
            b'Z' => return failed.map_or(Ok(()), Err),
            b'E' => {
                failed.get_or_insert_with(|| server_error(body));
            }
            _ if failed.is_none() => {
                if let Err(e) = each(tag, body) {
                    failed = Some(e);
                }
            }
            _ => {}
        }
    }
}

/// The rows a CommandComplete tag counts (`UPDATE 3`, `INSERT 0 5`); 0 for tags without one.
fn tag_count(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let last = tag.rsplit(|b| *b == b' ').next().unwrap_or(&[]);
    std::str::from_utf8(last)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A binary integer column's value; `None` for other types.
fn int_value(ty: u32, v: &[u8]) -> Option<i64> {
    match (ty, v.len()) {
        (INT2, 2) => Some(i16::from_be_bytes([v[0], v[1]]).into()),
        (INT4, 4) => Some(i32::from_be_bytes([v[0], v[1], v[2], v[3]]).into()),
        (INT8, 8) => Some(i64::from_be_bytes(v.try_into().ok()?)),
        _ => None,
    }
}

/// Counts a DataRow into `out`, its values' bytes, and what `keep` asks of it; writes its
/// values as text into `values` when it wants this row (binary values of `columns`' types;
/// a simple query's, with no types, are text already).
fn data_row(
    body: &[u8],
    columns: &[u32],
    (keep, values): (Keep, &mut KeepRow),
    out: &mut Outcome,
) -> PgResult<()> {
    let mut b = Body::new(body);
    let n = b.u16()?;
    let mut kept = None;
    let texts = values.wants(out.rows);
    for i in 0..n as usize {
        let len = b.i32()?;
        if len < 0 {
            if texts {
                values.row.0.push(None);
            }
            continue;
        }
        let v = b.bytes(len as usize)?;
        if texts {
            values.row.0.push(Some(match columns.get(i) {
                Some(&ty) => binary_text(ty, v),
                None => String::from_utf8_lossy(v).into_owned(),
            }));
        }
        out.bytes += v.len() as u64;
        if keep.column == Some(i) {
            kept = int_value(columns.get(i).copied().unwrap_or(0), v);
        }
    }
    out.rows += 1;
    keep.row(out, kept);
    Ok(())
}

/// Writes `v` in decimal (a parameter sent as text).
fn put_decimal(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

impl LeanConn {
    pub(super) fn connect(login: &Login<'_>) -> PgResult<LeanConn> {
        Ok(LeanConn {
            wire: PgWire::connect(login)?,
            stmts: Vec::new(),
            formats: Vec::new(),
            keep_row: KeepRow::default(),
        })
    }

    /// Bind (integers of integer columns and bytes in binary, the rest as text; result
    /// columns as `result_formats`), Execute and Sync, in one write.
    fn bind(&mut self, stmt: Stmt, params: &[Value<'_>]) -> PgResult<()> {
        let p = &self.stmts[stmt.0];
        if p.params.len() != params.len() {
            return protocol(format!(
                "statement takes {} parameters, {} given",
                p.params.len(),
                params.len()
            ));
        }
        self.formats.clear();
        self.formats
            .extend(params.iter().zip(&p.params).map(|(v, ty)| match v {
                Value::Int(_) => u16::from(matches!(*ty, INT2 | INT4 | INT8)),
                Value::Text(_) | Value::Number(_) => 0,
                Value::Bytes(_) => 1,
            }));
        let at = self.wire.begin(b'B');
        let out = self.wire.out();
        // The unnamed portal.
        put_cstr(out, b"");
        put_cstr(out, p.name.as_bytes());
        out.extend_from_slice(&(params.len() as u16).to_be_bytes());
        for f in &self.formats {
            out.extend_from_slice(&f.to_be_bytes());
        }
        out.extend_from_slice(&(params.len() as u16).to_be_bytes());
        for (v, ty) in params.iter().zip(&p.params) {
            let len_at = out.len();
            out.extend_from_slice(&[0; 4]);
            match (v, *ty) {
                (Value::Int(i), INT2) => out.extend_from_slice(&(*i as i16).to_be_bytes()),
                (Value::Int(i), INT4) => out.extend_from_slice(&(*i as i32).to_be_bytes()),
                (Value::Int(i), INT8) => out.extend_from_slice(&i.to_be_bytes()),
                (Value::Int(i), _) => put_decimal(out, *i),
                (Value::Text(t) | Value::Number(t), _) => out.extend_from_slice(t.as_bytes()),
                (Value::Bytes(b), _) => out.extend_from_slice(b),
            }
            let len = (out.len() - len_at - 4) as u32;
            out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        }
        out.extend_from_slice(&p.result_formats);
        self.wire.end(at);
        let at = self.wire.begin(b'E');
        put_cstr(self.wire.out(), b"");
        self.wire.out().extend_from_slice(&0u32.to_be_bytes());
        self.wire.end(at);
        self.wire.bare(b'S');
        self.wire.flush()
    }

    fn execute(&mut self, stmt: Stmt, params: &[Value<'_>], keep: Keep) -> PgResult<Outcome> {
        self.bind(stmt, params)?;
        let p = &self.stmts[stmt.0];
        let mut out = Outcome::default();
        let values = &mut self.keep_row;
        reply(&mut self.wire, |tag, body| {
            match tag {
                b'D' => data_row(body, &p.columns, (keep, values), &mut out)?,
                // Rows changed, for statements without rows (as the postgres crate's execute).
                b'C' if p.columns.is_empty() => out.affected = tag_count(body),
                _ => {}
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Parse, Describe and Sync in one write; the parameter and column types read back.
    fn parse(&mut self, name: &str, text: &str) -> PgResult<Prepared> {
        let at = self.wire.begin(b'P');
        let out = self.wire.out();
        put_cstr(out, name.as_bytes());
        put_cstr(out, text.as_bytes());
        // The server infers every parameter's type.
        out.extend_from_slice(&0u16.to_be_bytes());
        self.wire.end(at);
        let at = self.wire.begin(b'D');
        self.wire.out().push(b'S');
        put_cstr(self.wire.out(), name.as_bytes());
        self.wire.end(at);
        self.wire.bare(b'S');
        self.wire.flush()?;
        let (mut params, mut columns) = (Vec::new(), Vec::new());
        reply(&mut self.wire, |tag, body| {
            let mut b = Body::new(body);
            match tag {
                b't' => {
                    for _ in 0..b.u16()? {
                        params.push(b.u32()?);
                    }
                }
                b'T' => {
                    for _ in 0..b.u16()? {
                        // name, table oid, column number, then the type's oid; size, modifier
                        // and format after it.
                        b.cstr()?;
                        b.bytes(6)?;
                        columns.push(b.u32()?);
                        b.bytes(8)?;
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok(Prepared {
            text: None,
            name: name.to_string(),
            params,
            result_formats: result_formats(&columns),
            columns,
        })
    }
}

impl SqlConn for LeanConn {
    fn exec(&mut self, sql: &str) -> anyhow::Result<()> {
        let at = self.wire.begin(b'Q');
        put_cstr(self.wire.out(), sql.as_bytes());
        self.wire.end(at);
        self.wire
            .flush()
            .and_then(|()| reply(&mut self.wire, |_, _| Ok(())))
            .map_err(error)
    }

    fn prepare(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        let text = Dialect::Postgres.placeholders(sql);
        let name = format!("fathom{}", self.stmts.len());
        let prepared = self
            .parse(&name, &text)
            .map_err(|e| anyhow::anyhow!("preparing `{text}`: {e}"))?;
        Ok(Stmt::keep(&mut self.stmts, prepared))
    }

    fn prepare_text(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        let prepared = Prepared {
            text: Some(sql.split('?').map(str::to_string).collect()),
            name: String::new(),
            params: Vec::new(),
            columns: Vec::new(),
            result_formats: Vec::new(),
        };
        Ok(Stmt::keep(&mut self.stmts, prepared))
    }

    fn run_with(&mut self, stmt: Stmt, params: &[Value<'_>], keep: Keep) -> Ran {
        if let Some(parts) = &self.stmts[stmt.0].text {
            let sql = literal_text(parts, params)?;
            return self.simple(&sql).map_err(error);
        }
        self.execute(stmt, params, keep).map_err(error)
    }

    fn run_row(&mut self, stmt: Stmt, params: &[Value<'_>], n: u64, row: &mut Row) -> Ran {
        self.keep_row.at = Some(n);
        self.keep_row.row.0.clear();
        let ran = self.run_with(stmt, params, Keep::NOTHING);
        self.keep_row.at = None;
        std::mem::swap(row, &mut self.keep_row.row);
        ran
    }
}

/// A text statement's SQL with `params` written in as literals, as psql or pgbench's simple
/// protocol sends it (strings quoted with `'` doubled; standard_conforming_strings is on).
fn literal_text(parts: &[String], params: &[Value<'_>]) -> anyhow::Result<String> {
    use std::fmt::Write;
    let mut out = String::new();
    fathom_api::sql::write_literals(&mut out, parts, params, |out, value| match value {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Number(n) => out.push_str(n),
        Value::Text(t) => {
            out.push('\'');
            out.push_str(&t.replace('\'', "''"));
            out.push('\'');
        }
        Value::Bytes(b) => {
            out.push_str("'\\x");
            for byte in *b {
                let _ = write!(out, "{byte:02x}");
            }
            out.push('\'');
        }
    })?;
    Ok(out)
}

impl LeanConn {
    /// A simple query: its rows counted (with their bytes), or the rows it changed.
    fn simple(&mut self, sql: &str) -> PgResult<Outcome> {
        let at = self.wire.begin(b'Q');
        put_cstr(self.wire.out(), sql.as_bytes());
        self.wire.end(at);
        self.wire.flush()?;
        // The first statement's outcome, of several separated by `;`.
        let (mut out, mut first) = (Outcome::default(), true);
        let values = &mut self.keep_row;
        reply(&mut self.wire, |tag, body| {
            match tag {
                b'D' if first => data_row(body, &[], (Keep::NOTHING, values), &mut out)?,
                b'C' if first => {
                    if out.rows == 0 {
                        out.affected = tag_count(body);
                    }
                    first = false;
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tags_count_their_rows() {
        assert_eq!(tag_count(b"INSERT 0 5\0"), 5);
        assert_eq!(tag_count(b"UPDATE 3\0"), 3);
        assert_eq!(tag_count(b"BEGIN\0"), 0);
    }

    #[test]
    fn decimals_of_every_sign() {
        for v in [0, 7, -7, 1234567890123, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            put_decimal(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }

    /// A row's bytes, NULLs skipped, and the kept column of the last row or the first.
    #[test]
    fn rows_are_counted_measured_and_kept() {
        let row = |id: i32, text: Option<&[u8]>| {
            let mut b = 2u16.to_be_bytes().to_vec();
            b.extend_from_slice(&4i32.to_be_bytes());
            b.extend_from_slice(&id.to_be_bytes());
            match text {
                Some(t) => {
                    b.extend_from_slice(&(t.len() as i32).to_be_bytes());
                    b.extend_from_slice(t);
                }
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
            b
        };
        let cols = [INT4, 25];
        for (keep, kept) in [(Keep::last(Some(0)), 9), (Keep::SCALAR, 5)] {
            let (mut out, mut none) = (Outcome::default(), KeepRow::default());
            data_row(&row(5, Some(b"abc")), &cols, (keep, &mut none), &mut out).unwrap();
            data_row(&row(9, None), &cols, (keep, &mut none), &mut out).unwrap();
            assert_eq!((out.rows, out.bytes, out.kept), (2, 4 + 3 + 4, Some(kept)));
        }
        let (mut out, mut none) = (Outcome::default(), KeepRow::default());
        let short = &row(1, Some(b"abc"))[..9];
        assert!(data_row(short, &cols, (Keep::NOTHING, &mut none), &mut out).is_err());
        // The second row's values, as text.
        let mut values = KeepRow {
            at: Some(1),
            row: Row::default(),
        };
        let mut out = Outcome::default();
        for r in [row(5, Some(b"abc")), row(9, None)] {
            data_row(&r, &cols, (Keep::NOTHING, &mut values), &mut out).unwrap();
        }
        assert_eq!(values.row, Row(vec![Some("9".into()), None]));
    }

    /// Strings are asked as text, every other column in binary; a statement without strings
    /// asks one binary format for all.
    #[test]
    fn result_formats_ask_strings_as_text() {
        assert_eq!(result_formats(&[INT4, INT8]), [0, 1, 0, 1]);
        assert_eq!(
            result_formats(&[INT4, 25, 1043, 1042, 1700]),
            [0, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]
        );
    }
}
