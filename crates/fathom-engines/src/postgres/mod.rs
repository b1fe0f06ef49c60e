//! PostgreSQL (Debian's `postgresql`) as a sql engine: `initdb` as the `postgres` user into a
//! fresh data directory, fathom's settings and the setup's postgresql.conf lines appended, and
//! the postmaster started as a child of fathom (so it cannot outlive it) on a unix socket in a
//! directory of its own. With the `url` setting fathom uses a running server instead.

use crate::server::{self, Launch, Server};
use crate::settings::{self, specs, Size};
use crate::{EngineConfig, EngineEntry};
use anyhow::Context;
use fathom_core::sql::{Dialect, Outcome, SqlConn, SqlEngine, SqlError, Stmt, Value};
use fathom_core::target::{Counters, Identity, Maintenance, Target};
use postgres::types::{FromSql, ToSql, Type};
use postgres::{Client, NoTls};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

mod install;

use install::{chosen_bin, reachable};

const USER: &str = "postgres";
const PORT: u16 = 5432;
const DATABASE: &str = crate::mariadb::DATABASE;

/// fathom's PostgreSQL settings (`--set`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PostgresSettings {
    /// shared_buffers
    cache_size: Size,
    /// use this running server instead of starting one (setup lines are then not applied)
    #[schemars(
        title = "host=SOCKET_DIR_OR_HOST port=5432 user=USER dbname=DB (libpq key=value), or postgresql://USER@HOST:PORT/DB"
    )]
    url: String,
    /// with `url`: the postmaster's pid, so its and its backends' CPU and memory are measured
    #[schemars(title = "pid")]
    pid: String,
    /// run this release, fetched by `scripts/fetch-engine.sh postgres VERSION` (Maven's zonky
    /// embedded-postgres binaries; e.g. 17.6.0, 13.22.0); empty: the newest Debian server
    #[schemars(title = "VERSION")]
    version: String,
    /// run the server in this install instead (a directory holding `postgres`, `initdb`, or a
    /// `bin/` that does)
    #[schemars(title = "DIR")]
    bin: String,
}

impl Default for PostgresSettings {
    fn default() -> Self {
        PostgresSettings {
            cache_size: Size::new("256m"),
            url: String::new(),
            pid: String::new(),
            version: String::new(),
            bin: String::new(),
        }
    }
}

pub const ENTRY: EngineEntry = EngineEntry {
    name: "postgres",
    about: "PostgreSQL server (Debian's postgresql), started by fathom",
    options_doc: "postgresql.conf lines, one per line (`--setup @FILE`), e.g. `shared_buffers = 1GB`, \
                  `max_wal_size = 4GB` (https://www.postgresql.org/docs/current/runtime-config.html); \
                  appended after fathom's, so they win",
    settings: specs::<PostgresSettings>,
    version: install::version,
    ..EngineEntry::sql_server(open)
};

fn setup_lines(options: &str) -> anyhow::Result<Vec<String>> {
    server::config_lines(
        options,
        '.',
        true,
        "a postgresql.conf line such as shared_buffers = 1GB",
    )
}

fn conf(socket_dir: &Path, cache: u64, setup: &[String]) -> String {
    let mut c = vec![
        "# fathom".to_string(),
        "listen_addresses = ''".into(),
        format!("unix_socket_directories = '{}'", socket_dir.display()),
        format!("port = {PORT}"),
        "max_connections = 300".into(),
        format!("shared_buffers = {}kB", cache / 1024),
        "# the setup's lines".into(),
    ];
    c.extend(setup.iter().cloned());
    c.join("\n") + "\n"
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    let s: PostgresSettings = settings::read(&config.settings)?;
    let setup = setup_lines(&config.options)?;
    let pg = match chosen_bin(&s)? {
        Some((bin, source)) => {
            let mut pg = Postgres::start(config, &bin, &setup, s.cache_size.value)?;
            pg.effective = pg.settings(&setup);
            pg.effective
                .insert("fathom.bin".into(), bin.display().to_string());
            if let Some(source) = source {
                pg.effective.insert("fathom.source".into(), source);
            }
            pg
        }
        None => {
            let mut pg = Postgres::attach(&s.url, &s.pid)?;
            pg.effective = pg.settings(&setup);
            pg
        }
    };
    Ok(Box::new(pg))
}

pub struct Postgres {
    config: postgres::Config,
    url: String,
    managed: server::Managed,
    id: Identity,
    admin: Mutex<Client>,
    effective: BTreeMap<String, String>,
}

impl Postgres {
    fn start(
        config: &EngineConfig,
        bin: &Path,
        setup: &[String],
        cache: u64,
    ) -> anyhow::Result<Postgres> {
        let ids = server::user_ids(USER)?;
        reachable(bin, "the server's install", ids)?;
        reachable(&config.data_dir, "the data directory", ids)?;
        let data = config.data_dir.join("pgdata");
        std::fs::create_dir_all(&data)?;
        server::chown(&config.data_dir, ids.0, ids.1)?;
        server::chown(&data, ids.0, ids.1)?;
        let sock_dir = server::SocketDir::create(Some(ids))?;
        let log = config.data_dir.join("initdb.log");
        std::fs::File::create(&log)?;
        server::chown(&log, ids.0, ids.1)?;
        server::run_tool(
            "initdb",
            Command::new(bin.join("initdb")).arg("-D").arg(&data).args([
                "-U",
                USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]),
            &log,
            Some(ids),
        )?;
        let conf_path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path)
            .with_context(|| format!("reading {}", conf_path.display()))?;
        text.push_str(&conf(sock_dir.path(), cache, setup));
        std::fs::write(&conf_path, text)?;
        let server = Server::start(
            "postgres",
            Launch {
                program: bin.join("postgres"),
                args: vec!["-D".into(), data.display().to_string()],
                log: config.data_dir.join("postgres.log"),
                user: Some(ids),
                memory_group: config.memory_group.clone(),
                // SIGINT is PostgreSQL's fast shutdown.
                stop_signal: libc::SIGINT,
            },
        )?;
        let mut base = postgres::Config::new();
        base.host_path(sock_dir.path()).port(PORT).user(USER);
        let mut admin = None;
        server.wait_ready(Duration::from_secs(120), || {
            admin = Some(base.clone().dbname("postgres").connect(NoTls)?);
            Ok(())
        })?;
        let mut admin = admin.expect("connected");
        admin.batch_execute(&format!("CREATE DATABASE {DATABASE}"))?;
        let mut cfg = base;
        cfg.dbname(DATABASE);
        let mut admin = cfg.connect(NoTls)?;
        let version = admin_version(&mut admin);
        Ok(Postgres {
            config: cfg,
            url: format!(
                "host={} port={PORT} user={USER} dbname={DATABASE}",
                sock_dir.path().display()
            ),
            id: Identity::new("postgres", version, vec![config.data_dir.clone()])
                .running_as(vec![server.pid()]),
            managed: server::Managed::new(server, sock_dir),
            admin: Mutex::new(admin),
            effective: BTreeMap::new(),
        })
    }

    fn attach(url: &str, pid: &str) -> anyhow::Result<Postgres> {
        let cfg: postgres::Config = url
            .parse()
            .map_err(|e| anyhow::anyhow!("setting `url`: `{url}` is not a PostgreSQL URL: {e}"))?;
        let mut admin = cfg
            .connect(NoTls)
            .with_context(|| format!("cannot connect to the server at {url}"))?;
        let datadir = admin
            .query_one("SHOW data_directory", &[])
            .ok()
            .map(|r| PathBuf::from(r.get::<_, String>(0)));
        let version = admin_version(&mut admin);
        let pids = server::parse_pid(pid)?;
        Ok(Postgres {
            config: cfg,
            url: url.to_string(),
            managed: server::Managed::default(),
            id: Identity::new(
                "postgres",
                version,
                datadir.filter(|d| d.exists()).into_iter().collect(),
            )
            .running_as(pids),
            admin: Mutex::new(admin),
            effective: BTreeMap::new(),
        })
    }

    fn settings(&self, setup: &[String]) -> BTreeMap<String, String> {
        let mut admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        let mut names: Vec<String> = [
            "shared_buffers",
            "max_wal_size",
            "synchronous_commit",
            "fsync",
            "wal_level",
            "max_connections",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(
            setup
                .iter()
                .map(|l| l.split('=').next().unwrap_or("").trim().to_string()),
        );
        admin
            .query(
                "SELECT name, setting || COALESCE(unit, '') FROM pg_settings WHERE name = ANY($1)",
                &[&names],
            )
            .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
            .unwrap_or_default()
    }
}

fn admin_version(admin: &mut Client) -> String {
    admin
        .query_one("SHOW server_version", &[])
        .map(|r| r.get::<_, String>(0))
        .unwrap_or_default()
}

impl Target for Postgres {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        let mut admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        let row = admin.query_opt(
            "SELECT blks_read::float8, blks_hit::float8, tup_returned::float8, \
             tup_fetched::float8, xact_commit::float8, xact_rollback::float8, deadlocks::float8 \
             FROM pg_stat_database WHERE datname = current_database()",
            &[],
        );
        let names = [
            "blks_read",
            "blks_hit",
            "tup_returned",
            "tup_fetched",
            "xact_commit",
            "xact_rollback",
            "deadlocks",
        ];
        match row {
            Ok(Some(r)) => names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.to_string(), r.get::<_, f64>(i)))
                .collect(),
            _ => Counters::new(),
        }
    }
    fn check(&self) -> anyhow::Result<()> {
        self.managed.check()
    }
    fn effective_options(&self) -> BTreeMap<String, String> {
        self.effective.clone()
    }
    /// A flush is a CHECKPOINT; vacuuming is per table, the workload's.
    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        if action == Maintenance::Flush {
            let mut admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
            admin.batch_execute("CHECKPOINT")?;
        }
        Ok(())
    }
}

impl SqlEngine for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }
    fn connect(&self) -> anyhow::Result<Box<dyn SqlConn + '_>> {
        let client = self.config.connect(NoTls).map_err(|e| {
            let why = self
                .check()
                .err()
                .map(|e| format!("; {e}"))
                .unwrap_or_default();
            anyhow::anyhow!("cannot connect to postgres: {e}{why}")
        })?;
        Ok(Box::new(PgConn {
            client,
            stmts: Vec::new(),
        }))
    }
}

struct PgConn {
    client: Client,
    stmts: Vec<postgres::Statement>,
}

/// Serialization failures and deadlocks are retried, and so is a unique violation: under READ
/// COMMITTED two transactions that DELETE then INSERT the same id (sysbench's delete_inserts)
/// both find the old row gone and the second INSERT collides, which InnoDB's locks prevent.
fn error(e: postgres::Error) -> anyhow::Error {
    use postgres::error::SqlState;
    let retryable = matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE
            || *c == SqlState::T_R_DEADLOCK_DETECTED
            || *c == SqlState::UNIQUE_VIOLATION
    );
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    };
    SqlError::classified(retryable, message)
}

/// A parameter at the width its statement declared, without a box per parameter.
#[derive(Debug)]
enum PgParam<'a> {
    I16(i16),
    I32(i32),
    I64(i64),
    Text(&'a str),
    Bytes(&'a [u8]),
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
        self.stmts.push(s);
        Ok(Stmt(self.stmts.len() - 1))
    }

    fn run_keeping(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        keep: Option<usize>,
    ) -> anyhow::Result<Outcome> {
        let s = &self.stmts[stmt.0];
        let owned = pg_params(s, params);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|p| p as _).collect();
        if s.columns().is_empty() {
            let affected = self.client.execute(s, &refs).map_err(error)?;
            return Ok(Outcome {
                affected,
                ..Outcome::default()
            });
        }
        let rows = self.client.query(s, &refs).map_err(error)?;
        let mut out = Outcome {
            rows: rows.len() as u64,
            kept: keep.and_then(|c| int_at(s, rows.last()?, c)),
            ..Outcome::default()
        };
        for r in &rows {
            for i in 0..r.len() {
                out.bytes += r.get::<_, RawLen>(i).0;
            }
        }
        Ok(out)
    }

    fn scalar(&mut self, stmt: Stmt, params: &[Value<'_>]) -> anyhow::Result<Option<i64>> {
        let s = &self.stmts[stmt.0];
        let owned = pg_params(s, params);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|p| p as _).collect();
        // The first row of however many (a multi-row INSERT … RETURNING gives several).
        let rows = self.client.query(s, &refs).map_err(error)?;
        Ok(rows.first().and_then(|row| int_at(s, row, 0)))
    }
}

/// Column `c` of `row` as an integer, whatever its width; `None` when NULL.
fn int_at(s: &postgres::Statement, row: &postgres::Row, c: usize) -> Option<i64> {
    match s.columns().get(c).map(|c| c.type_()) {
        Some(&Type::INT4) => row.get::<_, Option<i32>>(c).map(i64::from),
        Some(&Type::INT2) => row.get::<_, Option<i16>>(c).map(i64::from),
        _ => row.get::<_, Option<i64>>(c),
    }
}

/// PostgreSQL types every parameter; integers go as the width the statement expects.
fn pg_params<'a>(s: &postgres::Statement, params: &[Value<'a>]) -> Vec<PgParam<'a>> {
    params
        .iter()
        .zip(s.params())
        .map(|(v, ty)| match (v, ty) {
            (Value::Int(i), &Type::INT4) => PgParam::I32(*i as i32),
            (Value::Int(i), &Type::INT2) => PgParam::I16(*i as i16),
            (Value::Int(i), _) => PgParam::I64(*i),
            (Value::Text(t), _) => PgParam::Text(t),
            (Value::Bytes(b), _) => PgParam::Bytes(b),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_lines_are_checked() {
        assert_eq!(
            setup_lines("shared_buffers = 1GB\n").unwrap(),
            vec!["shared_buffers = 1GB"]
        );
        assert!(setup_lines("shared_buffers")
            .unwrap_err()
            .to_string()
            .contains("expected a postgresql.conf line"));
    }

    #[test]
    fn fathoms_conf_uses_its_own_socket() {
        let c = conf(Path::new("/tmp/s"), 64 << 20, &["fsync = off".into()]);
        assert!(c.contains("unix_socket_directories = '/tmp/s'"));
        assert!(c.contains("shared_buffers = 65536kB"));
        assert!(c.ends_with("fsync = off\n"));
    }
}
