//! MariaDB (Debian's `mariadb-server`) with InnoDB or MyRocks as sql engines: fathom writes a
//! my.cnf of its own (the setup's lines after fathom's), initialises a fresh data directory
//! with `mariadb-install-db`, starts `mariadbd` on a unix socket and stops it after the run.
//! MyRocks is loaded with `plugin-load-add=ha_rocksdb.so` at start-up (loading it at run time
//! crashes mariadbd 10.11). With the `url` setting fathom uses a running server instead.

use crate::server::{self, Launch, Server};
use crate::settings::{self, specs, Size};
use crate::{EngineConfig, EngineEntry, Opener};
use anyhow::Context;
use fathom_core::sql::{Dialect, Outcome, SqlConn, SqlEngine, SqlError, Stmt, Value};
use fathom_core::target::{Counters, Identity, Maintenance, Target};
use mysql::prelude::Queryable;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const MARIADBD: &str = "/usr/sbin/mariadbd";
const INSTALL_DB: &str = "/usr/bin/mariadb-install-db";
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
}

impl Default for MariaDbSettings {
    fn default() -> Self {
        MariaDbSettings {
            cache_size: Size::new("256m"),
            url: String::new(),
            pid: String::new(),
        }
    }
}

const OPTIONS_DOC: &str = "my.cnf lines for [mysqld], one per line (`--setup @FILE`), e.g. \
     `innodb_buffer_pool_size=1G`, `innodb_page_size=8k`, `rocksdb_default_cf_options=...` \
     (https://mariadb.com/kb/en/server-system-variables/); written after fathom's, so they win";

pub const INNODB: EngineEntry = EngineEntry {
    name: "innodb",
    about: "MariaDB server with InnoDB (Debian's mariadb-server), started by fathom",
    options_doc: OPTIONS_DOC,
    settings: specs::<MariaDbSettings>,
    version,
    ..EngineEntry::sql_server(open_innodb)
};

pub const MYROCKS: EngineEntry = EngineEntry {
    name: "myrocks",
    about: "MariaDB server with MyRocks (mariadb-plugin-rocksdb), started by fathom",
    open: Opener::Sql(open_myrocks),
    ..INNODB
};

fn version() -> anyhow::Result<String> {
    let out = Command::new(MARIADBD)
        .arg("--version")
        .output()
        .with_context(|| format!("{MARIADBD} not found: run scripts/setup.sh --servers"))?;
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
}

fn open_innodb(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    MariaDb::open(
        config,
        Flavor {
            name: "innodb",
            storage: "InnoDB",
            cache_variable: "innodb_buffer_pool_size",
        },
    )
}

fn open_myrocks(config: &EngineConfig) -> anyhow::Result<Box<dyn SqlEngine>> {
    MariaDb::open(
        config,
        Flavor {
            name: "myrocks",
            storage: "ROCKSDB",
            cache_variable: "rocksdb_block_cache_size",
        },
    )
}

/// The setup's my.cnf lines, checked: `name=value` or a bare flag.
fn setup_lines(options: &str) -> anyhow::Result<Vec<String>> {
    server::config_lines(
        options,
        '-',
        false,
        "a my.cnf line such as innodb_buffer_pool_size=1G",
    )
}

/// The server's temporary directory, beside its data directory.
fn tmp_dir(data: &Path) -> PathBuf {
    data.with_file_name("tmp")
}

/// fathom's my.cnf for a managed server.
fn my_cnf(flavor: Flavor, data: &Path, socket: &Path, cache: u64, setup: &[String]) -> String {
    let mut cnf = vec![
        "[mysqld]".to_string(),
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
    ];
    if flavor.storage == "ROCKSDB" {
        cnf.push("plugin-load-add=ha_rocksdb.so".into());
    }
    cnf.push("# the setup's lines".into());
    cnf.extend(setup.iter().cloned());
    cnf.join("\n") + "\n"
}

pub struct MariaDb {
    flavor: Flavor,
    url: String,
    opts: mysql::Opts,
    managed: server::Managed,
    id: Identity,
    admin: Mutex<mysql::Conn>,
    effective: BTreeMap<String, String>,
}

impl MariaDb {
    fn open(config: &EngineConfig, flavor: Flavor) -> anyhow::Result<Box<dyn SqlEngine>> {
        let s: MariaDbSettings = settings::read(&config.settings)?;
        let setup = setup_lines(&config.options)?;
        let mut engine = if s.url.is_empty() {
            Self::start(config, flavor, &setup, s.cache_size.value)?
        } else {
            Self::attach(&s.url, &s.pid, flavor)?
        };
        engine.effective = engine.variables(&setup);
        Ok(Box::new(engine))
    }

    /// Starts a fresh server in `config.data_dir`.
    fn start(
        config: &EngineConfig,
        flavor: Flavor,
        setup: &[String],
        cache: u64,
    ) -> anyhow::Result<MariaDb> {
        let data = config.data_dir.join("mysql");
        let sock_dir = server::SocketDir::create(None)?;
        let socket = sock_dir.path().join("mysqld.sock");
        let cnf_path = config.data_dir.join("my.cnf");
        std::fs::create_dir_all(tmp_dir(&data))
            .with_context(|| format!("creating {}", tmp_dir(&data).display()))?;
        std::fs::write(&cnf_path, my_cnf(flavor, &data, &socket, cache, setup))
            .with_context(|| format!("writing {}", cnf_path.display()))?;
        let defaults = format!("--defaults-file={}", cnf_path.display());
        server::run_tool(
            "mariadb-install-db",
            Command::new(INSTALL_DB).args([
                defaults.as_str(),
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ]),
            &config.data_dir.join("install-db.log"),
            None,
        )
        // mariadbd's own complaint (an unknown variable) is in its error log.
        .map_err(|e| anyhow::anyhow!("{e:#}\n{}", server::log_tail(&data.join("error.log"), 10)))?;
        let server = Server::start(
            &format!("mariadbd ({})", flavor.name),
            Launch {
                program: MARIADBD.into(),
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
        let db = opts.get_db_name().unwrap_or(DATABASE).to_string();
        let mut admin =
            mysql::Conn::new(mysql::OptsBuilder::from_opts(opts.clone()).db_name(None::<String>))
                .with_context(|| format!("cannot connect to the server at {url}"))?;
        admin.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{db}`"))?;
        admin.select_db(&db)?;
        check_storage(&mut admin, flavor)?;
        let version: String = admin.query_first("SELECT VERSION()")?.unwrap_or_default();
        let datadir: Option<String> = admin.query_first("SELECT @@datadir")?;
        let pids = server::parse_pid(pid)?;
        Ok(MariaDb {
            flavor,
            url: url.to_string(),
            opts: mysql::OptsBuilder::from_opts(opts)
                .db_name(Some(db))
                .stmt_cache_size(STMT_CACHE)
                .into(),
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
            ("ROCKSDB", Maintenance::WaitForCompaction) => {
                admin.query_drop("SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1")?
            }
            (_, Maintenance::Flush) => flush_dirty_pages(&mut admin)?,
            (_, Maintenance::WaitForCompaction) => {}
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
        let conn = mysql::Conn::new(self.opts.clone()).map_err(|e| {
            let why = self
                .check()
                .err()
                .map(|e| format!("; {e}"))
                .unwrap_or_default();
            anyhow::anyhow!("cannot connect to {}: {e}{why}", self.flavor.name)
        })?;
        Ok(Box::new(MariaConn {
            conn,
            stmts: Vec::new(),
            text: String::new(),
        }))
    }
}

struct MariaConn {
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
fn error(e: mysql::Error) -> anyhow::Error {
    let retryable =
        matches!(&e, mysql::Error::MySqlError(m) if [1213, 1205, 1020].contains(&m.code));
    SqlError::classified(retryable, e.to_string())
}

/// What one row adds to an outcome: its values' bytes (a number counts 8, as the binary
/// protocol sends it), and column `keep` as an integer.
fn add_row(out: &mut Outcome, row: &mysql::Row, keep: Option<usize>) {
    out.rows += 1;
    if let Some(c) = keep {
        out.kept = row
            .get_opt::<Option<i64>, _>(c)
            .and_then(|v| v.ok().flatten());
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
    /// Sends a text statement with its parameters written in; every row of the first result
    /// goes to `on_row`, the results of the statements after it are read and dropped.
    fn run_text(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        mut on_row: impl FnMut(&mysql::Row),
    ) -> anyhow::Result<u64> {
        let Kept::Text(parts) = &self.stmts[stmt.0] else {
            unreachable!("run_text on a prepared statement")
        };
        write_text(&mut self.text, parts, params)?;
        let mut result = self.conn.query_iter(&self.text).map_err(error)?;
        let affected = result.affected_rows();
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
        Ok(affected)
    }
}

/// The statement's text with `params` written in as literals.
fn write_text(out: &mut String, parts: &[String], params: &[Value<'_>]) -> anyhow::Result<()> {
    if parts.len() != params.len() + 1 {
        anyhow::bail!(
            "`{}` takes {} parameters, {} given",
            parts.join("?"),
            parts.len() - 1,
            params.len()
        );
    }
    out.clear();
    for (part, value) in parts.iter().zip(params.iter().map(Some).chain([None])) {
        out.push_str(part);
        match value {
            None => {}
            Some(Value::Int(i)) => {
                let _ = write!(out, "{i}");
            }
            Some(Value::Text(t)) => quote(out, t.as_bytes()),
            Some(Value::Bytes(b)) if b.is_ascii() => {
                out.push_str("_binary");
                quote(out, b);
            }
            // Bytes that are not text go as a hex literal.
            Some(Value::Bytes(b)) => {
                out.push_str("X'");
                for byte in *b {
                    let _ = write!(out, "{byte:02x}");
                }
                out.push('\'');
            }
        }
    }
    Ok(())
}

/// An ASCII or UTF-8 string literal in quotes, escaped as MySQL's string literals are.
fn quote(out: &mut String, text: &[u8]) {
    out.push('\'');
    for ch in String::from_utf8_lossy(text).chars() {
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
        self.stmts.push(Kept::Prepared(s));
        Ok(Stmt(self.stmts.len() - 1))
    }

    fn prepare_text(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        self.stmts
            .push(Kept::Text(sql.split('?').map(str::to_string).collect()));
        Ok(Stmt(self.stmts.len() - 1))
    }

    fn run_keeping(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        keep: Option<usize>,
    ) -> anyhow::Result<Outcome> {
        let mut out = Outcome::default();
        let prepared = match &self.stmts[stmt.0] {
            Kept::Prepared(p) => p,
            Kept::Text(_) => {
                out.affected = self.run_text(stmt, params, |row| add_row(&mut out, row, keep))?;
                return Ok(out);
            }
        };
        let params = mysql::Params::Positional(params.iter().map(value).collect());
        if prepared.num_columns() == 0 {
            self.conn.exec_drop(prepared, params).map_err(error)?;
            out.affected = self.conn.affected_rows();
            return Ok(out);
        }
        for row in self.conn.exec_iter(prepared, params).map_err(error)? {
            add_row(&mut out, &row.map_err(error)?, keep);
        }
        Ok(out)
    }

    fn scalar(&mut self, stmt: Stmt, params: &[Value<'_>]) -> anyhow::Result<Option<i64>> {
        let first = |row: &mysql::Row| row.get_opt::<Option<i64>, _>(0)?.ok().flatten();
        match &self.stmts[stmt.0] {
            Kept::Prepared(p) => {
                let values: Vec<mysql::Value> = params.iter().map(value).collect();
                let row: Option<mysql::Row> = self
                    .conn
                    .exec_first(p, mysql::Params::Positional(values))
                    .map_err(error)?;
                Ok(row.as_ref().and_then(first))
            }
            Kept::Text(_) => {
                let mut found = None;
                self.run_text(stmt, params, |row| {
                    if found.is_none() {
                        found = Some(first(row));
                    }
                })?;
                Ok(found.flatten())
            }
        }
    }
}

fn value(v: &Value<'_>) -> mysql::Value {
    match v {
        Value::Int(i) => mysql::Value::Int(*i),
        Value::Text(s) => mysql::Value::Bytes(s.as_bytes().to_vec()),
        Value::Bytes(b) => mysql::Value::Bytes(b.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_lines_are_checked() {
        assert_eq!(
            setup_lines("innodb_page_size=8k\n\n skip-log-bin \n").unwrap(),
            vec!["innodb_page_size=8k", "skip-log-bin"]
        );
        let err = setup_lines("innodb page size = 8k")
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected a my.cnf line"), "{err}");
    }

    #[test]
    fn text_statements_write_their_parameters_in_as_literals() {
        let parts: Vec<String> = "INSERT INTO t VALUES (?, ?, ?, ?); COMMIT"
            .split('?')
            .map(str::to_string)
            .collect();
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
            r"INSERT INTO t VALUES (-7, 'it\'s a \\ \n', _binary'ab\'c', X'00dc7f'); COMMIT"
        );
        let err = write_text(&mut out, &parts, &params[..2]).unwrap_err();
        assert!(
            err.to_string().contains("takes 4 parameters, 2 given"),
            "{err}"
        );
    }

    #[test]
    fn myrocks_is_loaded_at_start_up() {
        let f = Flavor {
            name: "myrocks",
            storage: "ROCKSDB",
            cache_variable: "rocksdb_block_cache_size",
        };
        let cnf = my_cnf(
            f,
            Path::new("/d"),
            Path::new("/s"),
            1 << 20,
            &["x=1".into()],
        );
        assert!(cnf.contains("plugin-load-add=ha_rocksdb.so"));
        assert!(cnf.contains("rocksdb_block_cache_size=1048576"));
        assert!(cnf.ends_with("x=1\n"), "the setup's lines come last: {cnf}");
    }
}
