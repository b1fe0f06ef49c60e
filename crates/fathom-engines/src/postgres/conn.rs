//! PostgreSQL clients through the `postgres` crate (`--set client=postgres`): the crate's
//! prepared statements, parameters typed as each statement declares them, rows read through
//! the crate's row API.

use super::values::{binary_text, numeric_binary};
use fathom_api::retry::Failure;
use fathom_api::sql::{Dialect, Keep, Outcome, Ran, Row, SqlConn, SqlError, Stmt, Value};
use postgres::types::{FromSql, ToSql, Type};
use postgres::Client;

pub(super) struct PgConn {
    pub(super) client: Client,
    pub(super) stmts: Vec<postgres::Statement>,
}

/// The SQLSTATEs retried: serialization failures and deadlocks, and a unique violation: under
/// READ COMMITTED two transactions that DELETE then INSERT the same id (sysbench's
/// delete_inserts) both find the old row gone and the second INSERT collides, which InnoDB's
/// locks prevent.
pub(super) const RETRYABLE: [&str; 3] = ["40001", "40P01", "23505"];

fn error(e: postgres::Error) -> anyhow::Error {
    let failure = match e.code() {
        Some(c) if RETRYABLE.contains(&c.code()) => Failure::Retryable,
        Some(c) if *c == postgres::error::SqlState::DISK_FULL => Failure::OutOfSpace,
        _ => Failure::Fatal,
    };
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    };
    SqlError::of(failure, message)
}

/// A parameter at the width its statement declared, without a box per parameter.
#[derive(Debug)]
enum PgParam<'a> {
    I16(i16),
    I32(i32),
    I64(i64),
    Text(&'a str),
    Bytes(&'a [u8]),
    F64(f64),
    /// A value already in its binary form (a NUMERIC).
    Raw(Vec<u8>),
}

impl ToSql for PgParam<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        // Each variant checks the statement's type itself.
        match self {
            PgParam::I16(v) => v.to_sql_checked(ty, out),
            PgParam::I32(v) => v.to_sql_checked(ty, out),
            PgParam::I64(v) => v.to_sql_checked(ty, out),
            PgParam::Text(v) => v.to_sql_checked(ty, out),
            PgParam::Bytes(v) => v.to_sql_checked(ty, out),
            PgParam::F64(v) if *ty == Type::FLOAT4 => (*v as f32).to_sql_checked(ty, out),
            PgParam::F64(v) => v.to_sql_checked(ty, out),
            PgParam::Raw(b) => {
                out.extend_from_slice(b);
                Ok(postgres::types::IsNull::No)
            }
        }
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    postgres::types::to_sql_checked!();
}

/// Any column's raw size, for the bytes a query returned.
struct RawLen(u64);

impl<'a> FromSql<'a> for RawLen {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawLen(raw.len() as u64))
    }
    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawLen(0))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Any column's value as text (`binary_text` of its binary form); `None` for NULL.
struct AsText(Option<String>);

impl<'a> FromSql<'a> for AsText {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(AsText(Some(binary_text(ty.oid(), raw))))
    }
    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(AsText(None))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

impl SqlConn for PgConn {
    fn exec(&mut self, sql: &str) -> anyhow::Result<()> {
        self.client.batch_execute(sql).map_err(error)
    }

    fn prepare(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        let text = Dialect::Postgres.placeholders(sql);
        let s = self
            .client
            .prepare(&text)
            .map_err(|e| anyhow::anyhow!("preparing `{text}`: {e}"))?;
        Ok(Stmt::keep(&mut self.stmts, s))
    }

    fn run_with(&mut self, stmt: Stmt, params: &[Value<'_>], keep: Keep) -> Ran {
        let rows = match self.rows(stmt, params, keep.first)? {
            Err(affected) => return Ok(affected),
            Ok(rows) => rows,
        };
        // A scalar is the first row's of however many (a multi-row INSERT … RETURNING gives
        // several); a page's is its last row's.
        let kept_row = if keep.first {
            rows.first()
        } else {
            rows.last()
        };
        let s = &self.stmts[stmt.0];
        Ok(Outcome {
            rows: rows.len() as u64,
            kept: keep.column.and_then(|c| int_at(s, kept_row?, c)),
            bytes: bytes_of(&rows),
            ..Outcome::default()
        })
    }

    fn run_row(&mut self, stmt: Stmt, params: &[Value<'_>], n: u64, row: &mut Row) -> Ran {
        row.0.clear();
        let rows = match self.rows(stmt, params, false)? {
            Err(affected) => return Ok(affected),
            Ok(rows) => rows,
        };
        if let Some(r) = rows.get(n as usize) {
            row.0 = (0..r.len()).map(|i| r.get::<_, AsText>(i).0).collect();
        }
        Ok(Outcome {
            rows: rows.len() as u64,
            bytes: bytes_of(&rows),
            ..Outcome::default()
        })
    }
}

impl PgConn {
    /// Runs a statement: its rows, or for one without columns (unless `scalar`) the outcome
    /// of the rows it changed.
    fn rows(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        scalar: bool,
    ) -> anyhow::Result<Result<Vec<postgres::Row>, Outcome>> {
        let s = &self.stmts[stmt.0];
        let owned = pg_params(s, params);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|p| p as _).collect();
        if s.columns().is_empty() && !scalar {
            let affected = self.client.execute(s, &refs).map_err(error)?;
            return Ok(Err(Outcome {
                affected,
                ..Outcome::default()
            }));
        }
        Ok(Ok(self.client.query(s, &refs).map_err(error)?))
    }
}

/// The bytes of every value of `rows`.
fn bytes_of(rows: &[postgres::Row]) -> u64 {
    let values = rows.iter().flat_map(|r| (0..r.len()).map(move |i| (r, i)));
    values.map(|(r, i)| r.get::<_, RawLen>(i).0).sum()
}

/// Column `c` of `row` as an integer, whatever its width; `None` when NULL.
fn int_at(s: &postgres::Statement, row: &postgres::Row, c: usize) -> Option<i64> {
    match s.columns().get(c).map(|c| c.type_()) {
        Some(&Type::INT4) => row.get::<_, Option<i32>>(c).map(i64::from),
        Some(&Type::INT2) => row.get::<_, Option<i16>>(c).map(i64::from),
        _ => row.get::<_, Option<i64>>(c),
    }
}

/// An integer at the width of `ty`.
fn pg_params_int<'a>(i: i64, ty: &Type) -> PgParam<'a> {
    match *ty {
        Type::INT2 => PgParam::I16(i as i16),
        Type::INT4 => PgParam::I32(i as i32),
        _ => PgParam::I64(i),
    }
}

/// PostgreSQL types every parameter; integers go as the width the statement expects.
fn pg_params<'a>(s: &postgres::Statement, params: &[Value<'a>]) -> Vec<PgParam<'a>> {
    params
        .iter()
        .zip(s.params())
        .map(|(v, ty)| match (v, ty) {
            (Value::Int(i), _) => pg_params_int(*i, ty),
            (Value::Text(t), _) => PgParam::Text(t),
            (Value::Bytes(b), _) => PgParam::Bytes(b),
            (Value::Number(n), &Type::NUMERIC) => match numeric_binary(n) {
                Some(b) => PgParam::Raw(b),
                None => PgParam::Text(n),
            },
            (Value::Number(n), &Type::FLOAT8 | &Type::FLOAT4) => {
                n.parse().map_or(PgParam::Text(n), PgParam::F64)
            }
            (Value::Number(n), &Type::INT2 | &Type::INT4 | &Type::INT8) => match n.parse() {
                Ok(i) => pg_params_int(i, ty),
                Err(_) => PgParam::Text(n),
            },
            (Value::Number(n), _) => PgParam::Text(n),
        })
        .collect()
}
