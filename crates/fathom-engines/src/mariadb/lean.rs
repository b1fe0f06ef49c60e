//! fathom's own MariaDB client (`client=fathom`): statements prepared on the server and run by
//! the binary protocol, or sent as SQL text, with each result's rows decoded in place in the
//! read buffer (counted and, where asked, one column kept) and no value built per row. It does
//! only what the workloads need; `client=mysql` keeps the mysql crate.

use super::conn::{text_parts, write_text, RETRYABLE};
use super::wire::{protocol, server_error, Command, Cursor, Login, Wire, WireError, WireResult};
use crate::netbuf::Keep;
use fathom_api::sql::{KeepRow, Outcome, Ran, Row, SqlConn, SqlError, Stmt, Value};

/// The status flag saying another result follows (a multi-statement text, a procedure).
const MORE_RESULTS: u16 = 0x0008;
const TYPE_LONGLONG: u8 = 8;
const TYPE_VAR_STRING: u8 = 253;

pub(super) struct LeanConn {
    wire: Wire,
    stmts: Vec<Kept>,
    /// The columns of the result being read.
    cols: Vec<Col>,
    /// The SQL text of the statement being sent, reused.
    text: String,
    /// The row whose values `run_row` keeps.
    keep_row: KeepRow,
}

enum Kept {
    Prepared { id: u32, params: usize },
    Text(Vec<String>),
}

/// A result column as the rows need it.
#[derive(Clone, Copy)]
struct Col {
    ty: u8,
    unsigned: bool,
}

impl Col {
    /// MariaDB's numeric types (the mysql crate's `is_numeric_type`): a value of one counts 8
    /// bytes, as the binary protocol sends an integer.
    fn numeric(self) -> bool {
        matches!(self.ty, 0 | 1 | 2 | 3 | 4 | 5 | 8 | 9 | 13 | 246)
    }
}

/// The server's retryable errors (`conn::RETRYABLE`) are classified as the mysql crate's are.
fn error(e: WireError) -> anyhow::Error {
    let retryable = matches!(&e, WireError::Server(s) if RETRYABLE.contains(&s.code));
    SqlError::classified(retryable, e.to_string())
}

impl LeanConn {
    pub(super) fn connect(login: &Login<'_>) -> anyhow::Result<LeanConn> {
        Ok(LeanConn {
            wire: Wire::connect(login).map_err(error)?,
            stmts: Vec::new(),
            cols: Vec::new(),
            text: String::new(),
            keep_row: KeepRow::default(),
        })
    }

    /// Reads every result of the command just sent; the first one goes into `out`.
    fn results(&mut self, binary: bool, keep: Keep, out: &mut Outcome) -> WireResult<()> {
        let (wire, cols, values) = (&mut self.wire, &mut self.cols, &mut self.keep_row);
        let mut more = read_result(wire, cols, (binary, keep, values), out)?;
        let mut rest = Outcome::default();
        values.at = None;
        while more {
            more = read_result(wire, cols, (binary, keep, values), &mut rest)?;
        }
        Ok(())
    }

    fn execute(&mut self, stmt: Stmt, params: &[Value<'_>], keep: Keep) -> WireResult<Outcome> {
        let mut out = Outcome::default();
        match &self.stmts[stmt.0] {
            Kept::Prepared { id, params: n } => {
                if *n != params.len() {
                    return protocol(format!(
                        "statement takes {n} parameters, {} given",
                        params.len()
                    ));
                }
                write_execute(self.wire.begin(Command::StmtExecute), *id, params);
                self.wire.send()?;
                self.results(true, keep, &mut out)?;
            }
            Kept::Text(parts) => {
                write_text(&mut self.text, parts, params)
                    .map_err(|e| WireError::Protocol(e.to_string()))?;
                self.wire
                    .begin(Command::Query)
                    .extend_from_slice(self.text.as_bytes());
                self.wire.send()?;
                self.results(false, keep, &mut out)?;
            }
        }
        Ok(out)
    }
}

/// COM_STMT_EXECUTE's body: integers as BIGINT, text and bytes as strings.
fn write_execute(buf: &mut Vec<u8>, id: u32, params: &[Value<'_>]) {
    buf.extend_from_slice(&id.to_le_bytes());
    // No cursor, one iteration.
    buf.push(0);
    buf.extend_from_slice(&1u32.to_le_bytes());
    if params.is_empty() {
        return;
    }
    // No NULLs; the types follow.
    buf.extend(std::iter::repeat_n(0, params.len().div_ceil(8)));
    buf.push(1);
    for p in params {
        let ty = match p {
            Value::Int(_) => TYPE_LONGLONG,
            Value::Text(_) | Value::Bytes(_) | Value::Number(_) => TYPE_VAR_STRING,
        };
        buf.extend_from_slice(&[ty, 0]);
    }
    for p in params {
        match p {
            Value::Int(i) => buf.extend_from_slice(&i.to_le_bytes()),
            Value::Text(t) | Value::Number(t) => put_lenenc_bytes(buf, t.as_bytes()),
            Value::Bytes(b) => put_lenenc_bytes(buf, b),
        }
    }
}

fn put_lenenc_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    super::wire::put_lenenc_int(buf, b.len() as u64);
    buf.extend_from_slice(b);
}

/// Reads one result (an OK, an error, or columns and rows) into `out`; says whether another
/// result follows.
fn read_result(
    wire: &mut Wire,
    cols: &mut Vec<Col>,
    (binary, keep, values): (bool, Keep, &mut KeepRow),
    out: &mut Outcome,
) -> WireResult<bool> {
    let p = wire.packet()?;
    let columns = match p.first() {
        Some(0x00) => {
            let mut c = Cursor::new(p);
            c.at = 1;
            out.affected = c.lenenc()?.unwrap_or(0);
            out.inserted_id = c.lenenc()?.filter(|&id| id > 0).map(|id| id as i64);
            return Ok(c.u16()? & MORE_RESULTS != 0);
        }
        Some(0xFF) => return Err(server_error(p)),
        Some(0xFB) => return protocol("LOCAL INFILE is not supported"),
        _ => Cursor::new(p).lenenc()?.unwrap_or(0) as usize,
    };
    read_columns(wire, cols, columns)?;
    loop {
        let p = wire.packet()?;
        match p.first() {
            Some(0xFE) if p.len() < 9 => {
                let mut c = Cursor::new(p);
                c.at = 3;
                return Ok(c.u16()? & MORE_RESULTS != 0);
            }
            Some(0xFF) => return Err(server_error(p)),
            _ => {
                let kept = row(p, cols, (keep.column, binary), out, values)?;
                keep.row(out, kept);
            }
        }
    }
}

/// Reads `n` column definitions and the EOF after them.
fn read_columns(wire: &mut Wire, cols: &mut Vec<Col>, n: usize) -> WireResult<()> {
    cols.clear();
    for _ in 0..n {
        let mut c = Cursor::new(wire.packet()?);
        // catalog, schema, table, org_table, name, org_name, then the fixed fields' length.
        for _ in 0..6 {
            c.lenenc_bytes()?;
        }
        c.lenenc()?;
        let _charset = c.u16()?;
        let _length = c.u32()?;
        let ty = c.u8()?;
        let flags = c.u16()?;
        cols.push(Col {
            ty,
            unsigned: flags & 32 != 0,
        });
    }
    skip_eof(wire)
}

fn skip_eof(wire: &mut Wire) -> WireResult<()> {
    let p = wire.packet()?;
    match p.first() {
        Some(0xFE) => Ok(()),
        Some(0xFF) => Err(server_error(p)),
        _ => protocol("expected the end of the column definitions"),
    }
}

/// One row of a result set, counted into `out`: a text row (each value a length-encoded
/// string or NULL) or, `binary`, a prepared statement's (a NULL bitmap from offset 2, then
/// each value in its type's encoding). Strings count their length; numbers and dates count 8,
/// as the mysql crate's values do. Returns column `keep` as an integer, and writes every value
/// as text into `values` when it wants this row.
fn row(
    p: &[u8],
    cols: &[Col],
    (keep, binary): (Option<usize>, bool),
    out: &mut Outcome,
    values: &mut KeepRow,
) -> WireResult<Option<i64>> {
    let texts = values.wants(out.rows);
    out.rows += 1;
    let mut c = Cursor::new(p);
    let bitmap = if binary {
        c.at = 1;
        Some(c.bytes((cols.len() + 9) / 8)?)
    } else {
        None
    };
    let mut kept = None;
    for (i, col) in cols.iter().enumerate() {
        // The value, whether it is a binary integer, and whether it is a string.
        let null = |values: &mut KeepRow| {
            if texts {
                values.row.0.push(None);
            }
        };
        let (v, is_int, string) = match bitmap {
            Some(bitmap) if bitmap[(i + 2) / 8] & (1 << ((i + 2) % 8)) != 0 => {
                null(values);
                continue;
            }
            Some(_) => binary_value(&mut c, col)?,
            None => match c.lenenc_bytes()? {
                Some(v) => (v, false, !col.numeric()),
                None => {
                    null(values);
                    continue;
                }
            },
        };
        if texts {
            let text = match (binary, is_int) {
                (true, _) => binary_text(v, col, is_int),
                (false, _) => String::from_utf8_lossy(v).into_owned(),
            };
            values.row.0.push(Some(text));
        }
        out.bytes += if string { v.len() as u64 } else { 8 };
        if keep == Some(i) {
            kept = if is_int {
                Some(int_le(v, col.unsigned))
            } else {
                std::str::from_utf8(v).ok().and_then(|s| s.parse().ok())
            };
        }
    }
    Ok(kept)
}

/// A non-NULL value of a binary row: its bytes, whether it is an integer, and whether it is a
/// string.
fn binary_value<'p>(c: &mut Cursor<'p>, col: &Col) -> WireResult<(&'p [u8], bool, bool)> {
    let fixed = match col.ty {
        1 => Some(1),
        2 | 13 => Some(2),
        3 | 9 | 4 => Some(4),
        8 | 5 => Some(8),
        _ => None,
    };
    Ok(match (fixed, col.ty) {
        (Some(n), _) => (c.bytes(n)?, !matches!(col.ty, 4 | 5), false),
        // DATE, DATETIME, TIMESTAMP, TIME: a length byte, then that many bytes.
        (None, 7 | 10 | 11 | 12) => {
            let n = c.u8()? as usize;
            (c.bytes(n)?, false, false)
        }
        _ => (c.lenenc_bytes()?.unwrap_or(&[]), false, !col.numeric()),
    })
}

/// A binary row's value as the server writes it in a text row: integers and floating point in
/// decimal, dates as `YYYY-MM-DD HH:MM:SS[.ffffff]`, TIME as `[-][D ]HH:MM:SS`, the rest (strings,
/// DECIMAL) as sent.
fn binary_text(v: &[u8], col: &Col, is_int: bool) -> String {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let le16 = |i: usize| u16::from_le_bytes([at(i), at(i + 1)]);
    let le32 = |i: usize| u32::from_le_bytes([at(i), at(i + 1), at(i + 2), at(i + 3)]);
    match col.ty {
        _ if is_int => int_le(v, col.unsigned).to_string(),
        4 if v.len() == 4 => f32::from_le_bytes([v[0], v[1], v[2], v[3]]).to_string(),
        5 if v.len() == 8 => f64::from_le_bytes(v.try_into().unwrap_or([0; 8])).to_string(),
        7 | 10 | 12 => {
            let mut t = format!("{:04}-{:02}-{:02}", le16(0), at(2), at(3));
            if col.ty != 10 {
                t += &format!(" {:02}:{:02}:{:02}", at(4), at(5), at(6));
                if v.len() == 11 {
                    t += &format!(".{:06}", le32(7));
                }
            }
            t
        }
        11 => {
            let sign = if at(0) == 1 { "-" } else { "" };
            let days = le32(1);
            let day = if days > 0 {
                format!("{days} ")
            } else {
                String::new()
            };
            format!("{sign}{day}{:02}:{:02}:{:02}", at(5), at(6), at(7))
        }
        _ => String::from_utf8_lossy(v).into_owned(),
    }
}

/// A little-endian integer of 1, 2, 4 or 8 bytes.
fn int_le(v: &[u8], unsigned: bool) -> i64 {
    let mut b = [0u8; 8];
    b[..v.len()].copy_from_slice(v);
    let negative = !unsigned && v.last().is_some_and(|x| x & 0x80 != 0);
    if negative {
        b[v.len()..].fill(0xFF);
    }
    i64::from_le_bytes(b)
}

impl SqlConn for LeanConn {
    fn exec(&mut self, sql: &str) -> anyhow::Result<()> {
        self.wire
            .begin(Command::Query)
            .extend_from_slice(sql.as_bytes());
        self.wire
            .send()
            .and_then(|()| self.results(false, Keep::NOTHING, &mut Outcome::default()))
            .map_err(error)
    }

    fn prepare(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        let prepared = (|| {
            self.wire
                .begin(Command::StmtPrepare)
                .extend_from_slice(sql.as_bytes());
            self.wire.send()?;
            let p = self.wire.packet()?;
            if p.first() == Some(&0xFF) {
                return Err(server_error(p));
            }
            let mut c = Cursor::new(p);
            c.at = 1;
            let (id, columns, params) = (c.u32()?, c.u16()?, c.u16()?);
            for n in [params, columns] {
                if n > 0 {
                    read_columns(&mut self.wire, &mut self.cols, n.into())?;
                }
            }
            Ok(Kept::Prepared {
                id,
                params: params.into(),
            })
        })()
        .map_err(|e| anyhow::anyhow!("preparing `{sql}`: {e}"))?;
        Ok(Stmt::keep(&mut self.stmts, prepared))
    }

    fn prepare_text(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        Ok(Stmt::keep(&mut self.stmts, Kept::Text(text_parts(sql))))
    }

    fn run_with(&mut self, stmt: Stmt, params: &[Value<'_>], keep: Keep) -> Ran {
        self.execute(stmt, params, keep).map_err(error)
    }

    fn run_row(&mut self, stmt: Stmt, params: &[Value<'_>], n: u64, row: &mut Row) -> Ran {
        self.keep_row.at = Some(n);
        self.keep_row.row.0.clear();
        let ran = self.execute(stmt, params, Keep::NOTHING).map_err(error);
        self.keep_row.at = None;
        std::mem::swap(row, &mut self.keep_row.row);
        ran
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_rows_are_counted_and_their_kept_column_read() {
        let cols = [
            Col {
                ty: 8,
                unsigned: false,
            },
            Col {
                ty: 253,
                unsigned: false,
            },
            Col {
                ty: 3,
                unsigned: true,
            },
            Col {
                ty: 1,
                unsigned: false,
            },
        ];
        // Header, bitmap (column 2 NULL: bit 4), -5 as BIGINT, "abc", (NULL), -1 as TINYINT.
        let mut row = vec![0x00, 0b0001_0000];
        row.extend_from_slice(&(-5i64).to_le_bytes());
        row.extend_from_slice(&[3, b'a', b'b', b'c', 0xFF]);
        let (mut out, mut none) = (Outcome::default(), KeepRow::default());
        assert_eq!(
            super::row(&row, &cols, (Some(0), true), &mut out, &mut none).unwrap(),
            Some(-5)
        );
        assert_eq!((out.rows, out.bytes), (1, 8 + 3 + 8));
        assert_eq!(
            super::row(&row, &cols, (Some(3), true), &mut out, &mut none).unwrap(),
            Some(-1)
        );
        assert_eq!(
            super::row(&row, &cols, (Some(2), true), &mut out, &mut none).unwrap(),
            None
        );
        assert!(super::row(&row[..5], &cols, (None, true), &mut out, &mut none).is_err());
        // The values of the row asked for, as text (the row counted next is the fifth).
        let mut values = KeepRow {
            at: Some(4),
            row: Row::default(),
        };
        super::row(&row, &cols, (None, true), &mut out, &mut values).unwrap();
        let texts = [Some("-5"), Some("abc"), None, Some("-1")];
        assert_eq!(values.row, Row(texts.map(|t| t.map(String::from)).to_vec()));
    }

    #[test]
    fn binary_dates_and_floats_are_written_as_text_rows_write_them() {
        let col = |ty| Col {
            ty,
            unsigned: false,
        };
        let datetime = [0xEA, 0x07, 11, 27, 18, 5, 9];
        assert_eq!(
            binary_text(&datetime, &col(12), false),
            "2026-11-27 18:05:09"
        );
        assert_eq!(binary_text(&datetime[..4], &col(10), false), "2026-11-27");
        assert_eq!(binary_text(&2.5f64.to_le_bytes(), &col(5), false), "2.5");
        assert_eq!(binary_text(b"12.50", &col(246), false), "12.50");
    }

    #[test]
    fn text_rows_are_counted_as_the_binary_ones() {
        let cols = [
            Col {
                ty: 3,
                unsigned: false,
            },
            Col {
                ty: 253,
                unsigned: false,
            },
        ];
        let row = [2, b'4', b'2', 0xFB];
        let (mut out, mut none) = (Outcome::default(), KeepRow::default());
        assert_eq!(
            super::row(&row, &cols, (Some(0), false), &mut out, &mut none).unwrap(),
            Some(42)
        );
        assert_eq!((out.rows, out.bytes), (1, 8));
    }

    #[test]
    fn execute_packets_carry_typed_parameters() {
        let mut buf = Vec::new();
        write_execute(&mut buf, 7, &[Value::Int(1), Value::Text("ab")]);
        let want = [
            7, 0, 0, 0, 0, 1, 0, 0, 0, // id, no cursor, one iteration
            0, 1, // no NULLs, types follow
            8, 0, 253, 0, // BIGINT, VAR_STRING
            1, 0, 0, 0, 0, 0, 0, 0, 2, b'a', b'b',
        ];
        assert_eq!(buf, want);
    }
}
