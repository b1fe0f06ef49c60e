//! PostgreSQL (Debian's `postgresql`) as a sql engine: `initdb` as the `postgres` user into a
//! fresh data directory, fathom's settings and the setup's postgresql.conf lines appended, and
//! the postmaster started as a child of fathom (so it cannot outlive it) on a unix socket in a
//! directory of its own. With the `url` setting fathom uses a running server instead.

use crate::netbuf::Endpoint;
use crate::server::bootstrap::{ConfigSyntax, Prepare, ServerKind, SqlServer};
use crate::server::settings::{ServerDocs, ServerSettings, SettingsKind};
use crate::server::watch::Look;
use crate::server::{self, Launch};
use crate::settings;
use crate::{EngineConfig, EngineEntry};
use anyhow::Context;
use fathom_api::sql::{Dialect, SqlConn, SqlEngine};
use fathom_api::target::{Counters, Maintenance};
use postgres::{Client, NoTls};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

mod admin;
mod conn;
mod events;
mod install;
mod lean;
mod statements;
mod values;
mod watch;
mod wire;

use install::{chosen_bin, reachable, Bin};

const USER: &str = "postgres";
const PORT: u16 = 5432;
const DATABASE: &str = crate::mariadb::DATABASE;

/// The clients' protocol library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClientLib {
    /// fathom's own.
    Fathom,
    /// The postgres crate.
    Postgres,
}

/// PostgreSQL as a `ServerKind`.
#[derive(Clone, Copy)]
pub struct Pg;

/// A PostgreSQL fathom started or was pointed at.
pub type Postgres = SqlServer<Pg>;

pub const ENTRY: EngineEntry = EngineEntry {
    name: "postgres",
    about: "PostgreSQL server (Debian's postgresql), started by fathom",
    options_doc: "postgresql.conf lines, one per line (`--setup @FILE`), e.g. `shared_buffers = 1GB`, \
                  `max_wal_size = 4GB` (https://www.postgresql.org/docs/current/runtime-config.html); \
                  appended after fathom's, so they win",
    settings: settings::of::<ServerSettings<Pg>>(),
    version: install::version,
    ..EngineEntry::sql_server(open)
};

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    Ok(Box::new(SqlServer::open(Pg, config)?))
}

/// fathom's lines of postgresql.conf: its unix socket in `socket_dir`, and TCP at `tcp`
/// (`--network`) or none.
fn conf(socket_dir: &Path, tcp: Option<SocketAddr>, cache: u64, setup: &[String]) -> String {
    let mut c = vec![
        "# fathom".to_string(),
        format!(
            "listen_addresses = '{}'",
            tcp.map(|a| a.ip().to_string()).unwrap_or_default()
        ),
        format!("unix_socket_directories = '{}'", socket_dir.display()),
        format!("port = {}", port_of(tcp)),
        "max_connections = 300".into(),
        format!("shared_buffers = {}kB", cache / 1024),
        "# what the step's events are read from (events.rs)".into(),
    ];
    c.extend(events::CONF.iter().map(|l| l.to_string()));
    c.push("# the setup's lines".into());
    c.extend(setup.iter().cloned());
    c.join("\n") + "\n"
}

/// A PostgreSQL fathom starts from Debian's packages for another server to stand on
/// (FerretDB), in `config`'s data directory, with the setup's postgresql.conf lines as for the
/// postgres engine itself; stopped when dropped.
pub(crate) fn start_backend(config: &EngineConfig, cache: u64) -> anyhow::Result<Postgres> {
    let setup = Pg::setup_lines(&config.options)?;
    let bin = Pg
        .install(&ServerSettings::default())?
        .ok_or_else(|| anyhow::anyhow!("no PostgreSQL install to start"))?;
    // The server in front takes the run's network path; its backend stays on its socket.
    let config = EngineConfig {
        network: None,
        ..config.clone()
    };
    SqlServer::start(Pg, &config, &bin, &setup, cache)
}

/// fathom's PostgreSQL clients (its own, and the postgres crate's as built here) speak no TLS: a
/// URL that requires it is refused by name rather than sent in plaintext or failed obscurely.
/// `what` names where the URL came from (`setting `url``, `--store`).
pub fn refuse_tls(cfg: &postgres::Config, what: &str, url: &str) -> anyhow::Result<()> {
    if cfg.get_ssl_mode() == postgres::config::SslMode::Require {
        let url = fathom_api::secret::redact(url);
        anyhow::bail!(
            "{what}: `{url}` asks for TLS (sslmode=require), which fathom's PostgreSQL \
             clients do not speak; connect over a unix socket or loopback with sslmode=disable \
             or prefer"
        );
    }
    Ok(())
}

impl Postgres {
    /// The directory of the server's unix socket, when it listens on one.
    pub(crate) fn socket_dir(&self) -> Option<&Path> {
        match self.address().get_hosts().first() {
            Some(postgres::config::Host::Unix(dir)) => Some(dir),
            _ => None,
        }
    }

    /// The database the server's clients use.
    pub(crate) fn database(&self) -> &str {
        self.address().get_dbname().unwrap_or(DATABASE)
    }
}

impl SettingsKind for Pg {
    type Client = ClientLib;

    const DOCS: ServerDocs = ServerDocs {
        server: "PostgreSQL",
        cache: "shared_buffers",
        url_form: "host=SOCKET_DIR_OR_HOST port=5432 user=USER dbname=DB (libpq key=value), or \
                   postgresql://USER@HOST:PORT/DB",
        pid: "with `url`: the postmaster's pid, so its and its backends' CPU and memory are \
              measured",
        version: "run this release, fetched by `scripts/fetch-engine.sh postgres VERSION` \
                  (Maven's zonky embedded-postgres binaries; e.g. 17.6.0, 13.22.0); empty: the \
                  newest Debian server",
        bin: "run the server in this install instead (a directory holding `postgres`, \
              `initdb`, or a `bin/` that does)",
        client: "the clients' protocol library: fathom (its own: one write and one read per \
                 statement, rows measured in place) or postgres (the postgres crate)",
        watch: "how often fathom looks at the sessions waiting for a lock (pg_stat_activity \
                with pg_blocking_pids, from the postgres database), for the engine's events \
                beside the slowest operations; the server's log tells the rest (checkpoints, \
                autovacuum, waits longer than deadlock_timeout); 0: never",
        statement_log: "log every statement's plan with its buffers (auto_explain with \
                        ANALYZE and BUFFERS, timing off; track_io_timing on), so the slowest \
                        operations say the buffers they hit, read and wrote against the \
                        statements like theirs; costs throughput (docs/tail.md), and a \
                        setup's shared_preload_libraries replaces auto_explain",
    };
    const OWN_CLIENT: ClientLib = ClientLib::Fathom;
}

impl ServerKind for Pg {
    type Admin = Client;
    type Address = postgres::Config;
    type Install = Bin;
    const KEEPS_EVENTS: bool = true;
    fn events(log: &str, from_us: u64, to_us: u64) -> Vec<fathom_api::events::EngineEvent> {
        events::parse(log, from_us, to_us)
    }
    const STATEMENT_LOG: &'static [&'static str] = statements::CONF;
    const SESSION_ID: &'static str = "SELECT pg_backend_pid()";
    fn statements(
        _admin: &mut Client,
        log: &Path,
        from_us: u64,
        to_us: u64,
    ) -> anyhow::Result<fathom_api::work::StatementLog> {
        let text =
            std::fs::read_to_string(log).with_context(|| format!("reading {}", log.display()))?;
        Ok(statements::parse(&text, from_us, to_us))
    }

    /// PostgreSQL refuses to run as root.
    const RUN_AS: Option<&'static str> = Some(USER);
    /// postgresql.conf lines: `name = value`, names with dots (`auto_explain.log_min_duration`).
    const CONFIG: ConfigSyntax = ConfigSyntax {
        name_char: '.',
        need_value: true,
        example: "a postgresql.conf line such as shared_buffers = 1GB",
        listening: &["listen_addresses", "port", "unix_socket_directories"],
    };
    const DIALECT: Dialect = Dialect::Postgres;

    fn name(self) -> &'static str {
        ENTRY.name
    }
    fn process(self) -> String {
        "postgres".into()
    }
    fn client_name(client: ClientLib) -> &'static str {
        match client {
            ClientLib::Fathom => "fathom",
            ClientLib::Postgres => "postgres",
        }
    }
    fn install(self, s: &ServerSettings<Pg>) -> anyhow::Result<Option<Bin>> {
        chosen_bin(s)
    }
    fn install_record(bin: &Bin) -> Vec<(String, String)> {
        let mut record = vec![("fathom.bin".into(), bin.dir.display().to_string())];
        if let Some(source) = &bin.source {
            record.push(("fathom.source".into(), source.clone()));
        }
        record
    }
    fn prepare(self, p: &Prepare<'_, Bin>) -> anyhow::Result<Launch> {
        let data_dir = &p.config.data_dir;
        let data = data_dir.join("pgdata");
        if let Some(ids) = p.owner {
            reachable(&p.install.dir, "the server's install", ids)?;
            reachable(data_dir, "the data directory", ids)?;
        }
        std::fs::create_dir_all(&data)?;
        let log = data_dir.join("initdb.log");
        std::fs::File::create(&log)?;
        if let Some((uid, gid)) = p.owner {
            for path in [data_dir, &data, &log] {
                server::chown(path, uid, gid)?;
            }
        }
        server::run_tool(
            "initdb",
            Command::new(p.install.dir.join("initdb"))
                .arg("-D")
                .arg(&data)
                .args(["-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"]),
            &log,
            p.owner,
        )?;
        let conf_path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path)
            .with_context(|| format!("reading {}", conf_path.display()))?;
        text.push_str(&conf(p.socket_dir, p.tcp, p.cache, p.setup));
        std::fs::write(&conf_path, text)?;
        if p.tcp.is_some() {
            // Clients over TCP from any address fathom gives them (a namespace's, a relay's).
            let hba = data.join("pg_hba.conf");
            let mut text = std::fs::read_to_string(&hba)
                .with_context(|| format!("reading {}", hba.display()))?;
            text.push_str("\n# fathom: --network\nhost all all 0.0.0.0/0 trust\n");
            std::fs::write(&hba, text)?;
        }
        Ok(Launch {
            program: p.install.dir.join("postgres"),
            args: vec!["-D".into(), data.display().to_string()],
            log: data_dir.join("postgres.log"),
            user: None,
            groups: Vec::new(),
            // SIGINT is PostgreSQL's fast shutdown.
            stop_signal: libc::SIGINT,
            netns: None,
        })
    }
    fn local_url(socket_dir: &Path, tcp: Option<SocketAddr>) -> String {
        format!(
            "host={} port={} user={USER} dbname={DATABASE}",
            socket_dir.display(),
            port_of(tcp)
        )
    }
    fn url_at(at: SocketAddr) -> String {
        format!(
            "host={} port={} user={USER} dbname={DATABASE}",
            at.ip(),
            at.port()
        )
    }
    fn parse_url(url: &str) -> anyhow::Result<postgres::Config> {
        let cfg: postgres::Config = url
            .parse()
            .map_err(|e| anyhow::anyhow!("setting `url`: `{url}` is not a PostgreSQL URL: {e}"))?;
        refuse_tls(&cfg, "setting `url`", url)?;
        Ok(cfg)
    }
    /// Its sessions' lock waits, every one (the log tells those past `deadlock_timeout`).
    fn watch(self, address: &postgres::Config) -> anyhow::Result<Option<Look>> {
        watch::look(address).map(Some)
    }
    /// To a fresh server: its `postgres` database, the workloads' being made next.
    fn connect_admin(address: &postgres::Config, fresh: bool) -> anyhow::Result<Client> {
        let mut cfg = address.clone();
        if fresh {
            cfg.dbname("postgres");
        }
        Ok(cfg.connect(NoTls)?)
    }
    /// A fresh server gets the workloads' database; a running one is used as its URL says.
    fn use_database(
        self,
        mut admin: Client,
        address: postgres::Config,
        fresh: bool,
    ) -> anyhow::Result<(Client, postgres::Config)> {
        if !fresh {
            return Ok((admin, address));
        }
        let db = address.get_dbname().unwrap_or(DATABASE).to_string();
        admin.batch_execute(&format!("CREATE DATABASE {db}"))?;
        let admin = address.connect(NoTls)?;
        Ok((admin, address))
    }
    fn version(admin: &mut Client) -> String {
        admin
            .query_one("SHOW server_version", &[])
            .map(|r| r.get::<_, String>(0))
            .unwrap_or_default()
    }
    fn data_dir(admin: &mut Client) -> Option<PathBuf> {
        admin
            .query_one("SHOW data_directory", &[])
            .ok()
            .map(|r| PathBuf::from(r.get::<_, String>(0)))
    }
    fn variables(admin: &mut Client, setup: &[String]) -> BTreeMap<String, String> {
        admin::settings(admin, setup)
    }
    fn settle(admin: &mut Client) {
        admin::settle(admin)
    }
    fn counters(admin: &mut Client) -> Counters {
        admin::counters(admin)
    }
    /// A flush is a CHECKPOINT; vacuuming is per table, the workload's.
    fn maintain(self, admin: &mut Client, action: Maintenance) -> anyhow::Result<()> {
        if action == Maintenance::Flush {
            admin.batch_execute("CHECKPOINT")?;
        }
        Ok(())
    }
    fn connect(c: &postgres::Config, own: bool) -> anyhow::Result<Box<dyn SqlConn>> {
        if !own {
            let client = c.connect(NoTls)?;
            return Ok(Box::new(conn::PgConn {
                client,
                stmts: Vec::new(),
            }));
        }
        let endpoint = endpoint(c);
        let user = c.get_user().unwrap_or(USER);
        let login = wire::Login {
            endpoint: &endpoint,
            user,
            password: c.get_password(),
            dbname: c.get_dbname().unwrap_or(user),
            options: c.get_options(),
        };
        Ok(Box::new(lean::LeanConn::connect(&login)?))
    }
}

/// The port of a server fathom starts: its TCP port when it listens on one (which names its
/// unix socket too), else PostgreSQL's own.
fn port_of(tcp: Option<SocketAddr>) -> u16 {
    tcp.map_or(PORT, |a| a.port())
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
            Pg::setup_lines("shared_buffers = 1GB\n").unwrap(),
            vec!["shared_buffers = 1GB"]
        );
        assert!(Pg::setup_lines("shared_buffers")
            .unwrap_err()
            .to_string()
            .contains("expected a postgresql.conf line"));
    }

    #[test]
    fn fathoms_conf_uses_its_own_socket() {
        let c = conf(Path::new("/tmp/s"), None, 64 << 20, &["fsync = off".into()]);
        assert!(c.contains("unix_socket_directories = '/tmp/s'"));
        assert!(c.contains("shared_buffers = 65536kB"));
        assert!(c.ends_with("fsync = off\n"));
    }
}
