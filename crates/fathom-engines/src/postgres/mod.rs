//! PostgreSQL (Debian's `postgresql`) as a sql engine: `initdb` as the `postgres` user into a
//! fresh data directory, fathom's settings and the setup's postgresql.conf lines appended, and
//! the postmaster started as a child of fathom (so it cannot outlive it) on a unix socket in a
//! directory of its own. With the `url` setting fathom uses a running server instead.

use crate::netbuf::Endpoint;
use crate::server::{self, Launch, Server};
use crate::settings::{self, specs, Size};
use crate::{EngineConfig, EngineEntry};
use anyhow::Context;
use fathom_core::sql::{Dialect, SqlConn, SqlEngine};
use fathom_core::target::{Counters, Identity, Maintenance, Target};
use postgres::{Client, NoTls};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

mod conn;
mod install;
mod lean;
mod wire;

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
    /// the clients' protocol library: fathom (its own: one write and one read per statement,
    /// rows measured in place) or postgres (the postgres crate)
    client: ClientLib,
}

/// The clients' protocol library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ClientLib {
    /// fathom's own.
    Fathom,
    /// The postgres crate.
    Postgres,
}

impl ClientLib {
    fn name(self) -> &'static str {
        match self {
            ClientLib::Fathom => "fathom",
            ClientLib::Postgres => "postgres",
        }
    }
}

impl Default for PostgresSettings {
    fn default() -> Self {
        PostgresSettings {
            cache_size: Size::new("256m"),
            url: String::new(),
            pid: String::new(),
            version: String::new(),
            bin: String::new(),
            client: ClientLib::Fathom,
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
    let lines = server::config_lines(
        options,
        '.',
        true,
        "a postgresql.conf line such as shared_buffers = 1GB",
    )?;
    server::refuse_listening(
        &lines,
        &["listen_addresses", "port", "unix_socket_directories"],
    )?;
    Ok(lines)
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
    let lean = s.client == ClientLib::Fathom;
    let mut pg = match chosen_bin(&s)? {
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
    pg.lean = lean;
    pg.effective
        .insert("fathom.client".into(), s.client.name().into());
    Ok(Box::new(pg))
}

/// A PostgreSQL fathom starts from Debian's packages for another server to stand on
/// (FerretDB), in `config`'s data directory, with the setup's postgresql.conf lines as for the
/// postgres engine itself; stopped when dropped.
pub(crate) fn start_backend(config: &EngineConfig, cache: u64) -> anyhow::Result<Postgres> {
    let setup = setup_lines(&config.options)?;
    let (bin, _) = chosen_bin(&PostgresSettings::default())?
        .ok_or_else(|| anyhow::anyhow!("no PostgreSQL install to start"))?;
    let mut pg = Postgres::start(config, &bin, &setup, cache)?;
    pg.effective = pg.settings(&setup);
    Ok(pg)
}

/// fathom's PostgreSQL clients (its own, and the postgres crate's as built here) speak no TLS: a
/// URL that requires it is refused by name rather than sent in plaintext or failed obscurely.
fn refuse_tls(cfg: &postgres::Config, url: &str) -> anyhow::Result<()> {
    if cfg.get_ssl_mode() == postgres::config::SslMode::Require {
        anyhow::bail!(
            "setting `url`: `{url}` asks for TLS (sslmode=require), which fathom's PostgreSQL \
             clients do not speak; connect over a unix socket or loopback with sslmode=disable \
             or prefer"
        );
    }
    Ok(())
}

pub struct Postgres {
    config: postgres::Config,
    url: String,
    /// fathom's own client, not the postgres crate's, for the workloads' connections.
    lean: bool,
    managed: server::Managed,
    id: Identity,
    admin: Mutex<Client>,
    effective: BTreeMap<String, String>,
}

impl Postgres {
    /// The directory of the server's unix socket, when it listens on one.
    pub(crate) fn socket_dir(&self) -> Option<&Path> {
        match self.config.get_hosts().first() {
            Some(postgres::config::Host::Unix(dir)) => Some(dir),
            _ => None,
        }
    }

    /// The database the server's clients use.
    pub(crate) fn database(&self) -> &str {
        self.config.get_dbname().unwrap_or(DATABASE)
    }

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
            lean: true,
            url: format!(
                "host={} port={PORT} user={USER} dbname={DATABASE}",
                sock_dir.path().display()
            ),
            id: Identity::new(ENTRY.name, version, vec![config.data_dir.clone()])
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
        refuse_tls(&cfg, url)?;
        // Checked before connecting: a bad pid is the user's input, not the server's fault.
        let pids = server::parse_pid(pid)?;
        let mut admin = cfg
            .connect(NoTls)
            .with_context(|| format!("cannot connect to the server at {url}"))?;
        let datadir = admin
            .query_one("SHOW data_directory", &[])
            .ok()
            .map(|r| PathBuf::from(r.get::<_, String>(0)));
        let version = admin_version(&mut admin);
        Ok(Postgres {
            config: cfg,
            url: url.to_string(),
            lean: true,
            managed: server::Managed::default(),
            id: Identity::new(
                ENTRY.name,
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
        let failed = |e: &dyn std::fmt::Display| {
            let why = self
                .check()
                .err()
                .map(|e| format!("; {e}"))
                .unwrap_or_default();
            anyhow::anyhow!("cannot connect to postgres: {e}{why}")
        };
        if self.lean {
            let c = &self.config;
            let endpoint = endpoint(c);
            let user = c.get_user().unwrap_or(USER);
            let login = wire::Login {
                endpoint: &endpoint,
                user,
                password: c.get_password(),
                dbname: c.get_dbname().unwrap_or(user),
                options: c.get_options(),
            };
            let conn = lean::LeanConn::connect(&login).map_err(|e| failed(&e))?;
            return Ok(Box::new(conn));
        }
        let client = self.config.connect(NoTls).map_err(|e| failed(&e))?;
        Ok(Box::new(conn::PgConn {
            client,
            stmts: Vec::new(),
        }))
    }
}

/// Where the URL's first host listens: a unix socket in a directory, or TCP; with no host,
/// Debian's socket directory, as libpq's default.
fn endpoint(c: &postgres::Config) -> Endpoint {
    let port = c.get_ports().first().copied().unwrap_or(PORT);
    match c.get_hosts().first() {
        Some(postgres::config::Host::Tcp(host)) => Endpoint::Tcp(host.clone(), port),
        Some(postgres::config::Host::Unix(dir)) => {
            Endpoint::Socket(format!("{}/.s.PGSQL.{port}", dir.display()))
        }
        None => Endpoint::Socket(format!("/var/run/postgresql/.s.PGSQL.{port}")),
    }
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
