//! The results database in a team's PostgreSQL (`--store postgres://...`): the schema made
//! on first use and migrated under an advisory lock, so hosts recording at once wait for
//! one another rather than race to make it.

use super::{Database, Value};
use fathom_api::secret::redact;
use fathom_api::sql::Dialect;
use postgres::types::{ToSql, Type};
use postgres::{Client, Config, NoTls};
use std::time::Duration;

/// The advisory lock every write transaction holds, so that hosts recording at once into a
/// new database do not race to make its schema ("fathom" in ASCII).
const WRITE_LOCK: i64 = 0x6661_7468_6f6d;

/// How long a connection may take: an unreachable database must not hold a finished run.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The URL as a connection's settings, or an error saying what is wrong with it.
fn config(url: &str) -> Result<Config, String> {
    let cfg: Config = url.parse().map_err(|e| {
        format!(
            "--store: `{}` is not a PostgreSQL URL ({e}); for example \
             postgres://USER@HOST:PORT/DB or postgresql:///DB?host=/SOCKET/DIR",
            redact(url)
        )
    })?;
    fathom_engines::postgres::refuse_tls(&cfg, "--store", url).map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// Checks `--store`'s URL before anything runs.
pub fn check_url(url: &str) -> Result<(), String> {
    config(url).map(|_| ())
}

pub fn connect(url: &str) -> anyhow::Result<Client> {
    let mut cfg = config(url).map_err(anyhow::Error::msg)?;
    if cfg.get_connect_timeout().is_none() {
        cfg.connect_timeout(CONNECT_TIMEOUT);
    }
    cfg.connect(NoTls).map_err(|e| {
        anyhow::Error::new(e).context(format!(
            "connecting to the results database {}",
            redact(url)
        ))
    })
}

/// The values as the postgres crate binds them.
fn bound(params: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|v| match v {
            Value::Text(v) => v as &(dyn ToSql + Sync),
            Value::Int(v) => v as &(dyn ToSql + Sync),
            Value::Real(v) => v as &(dyn ToSql + Sync),
        })
        .collect()
}

/// A column of a row as a value (the schema has only text, 32/64-bit integers and doubles).
fn column(row: &postgres::Row, i: usize) -> anyhow::Result<Value> {
    let ty = row.columns()[i].type_().clone();
    Ok(match ty {
        Type::INT8 => Value::Int(row.try_get(i)?),
        Type::INT4 => Value::Int(row.try_get::<_, Option<i32>>(i)?.map(i64::from)),
        Type::FLOAT8 => Value::Real(row.try_get(i)?),
        Type::FLOAT4 => Value::Real(row.try_get::<_, Option<f32>>(i)?.map(f64::from)),
        _ => Value::Text(row.try_get(i)?),
    })
}

impl Database for Client {
    fn begin(&mut self) -> anyhow::Result<()> {
        self.batch_execute("BEGIN")?;
        self.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])?;
        Ok(())
    }
    fn batch(&mut self, sql: &str) -> anyhow::Result<()> {
        Ok(self.batch_execute(sql)?)
    }
    fn execute(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<u64> {
        let sql = Dialect::Postgres.placeholders(sql);
        Ok(Client::execute(self, sql.as_str(), &bound(params))?)
    }
    fn query(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>> {
        let sql = Dialect::Postgres.placeholders(sql);
        Client::query(self, sql.as_str(), &bound(params))?
            .iter()
            .map(|row| (0..row.len()).map(|i| column(row, i)).collect())
            .collect()
    }
}
