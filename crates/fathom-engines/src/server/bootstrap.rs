//! One bootstrap for the sql servers fathom starts or attaches to (MariaDB, PostgreSQL, and the
//! PostgreSQL under FerretDB): the choice between a running server (`url`) and an install, the
//! socket directory, the server's own config and init tool, the launch, the wait until it
//! accepts connections, the workloads' database, and what the run records of it. A server
//! supplies its own steps as a `ServerKind`; `SqlServer` is the engine either way.

use super::settings::{ServerSettings, SettingsKind};
use super::watch::{self, Watcher};
use super::{parse_pid, user_ids, Launch, Managed, Server, SocketDir};
use crate::settings;
use crate::EngineConfig;
use anyhow::Context;
use fathom_api::sql::{Dialect, SqlConn, SqlEngine};
use fathom_api::target::{Counters, Identity, Maintenance, Target};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long a fresh server has to accept its first connection.
const READY_WAIT: Duration = Duration::from_secs(120);

/// What one sql server does its own way; the value is the server's flavor (MariaDB's storage
/// engine), a unit where there is one.
pub trait ServerKind: SettingsKind {
    /// The connection fathom keeps for counters, variables and maintenance.
    type Admin: Send;
    /// How clients reach the server (a parsed URL).
    type Address: Clone + Send + Sync;
    /// An install fathom can start.
    type Install;

    /// The system user the server runs as when fathom is root (PostgreSQL refuses root).
    const RUN_AS: Option<&'static str>;
    const DIALECT: Dialect;

    /// The engine's name (`innodb`, `postgres`).
    fn name(self) -> &'static str;
    /// The process as messages name it (`mariadbd (innodb)`).
    fn process(self) -> String;
    fn client_name(client: Self::Client) -> &'static str;
    /// How the server's config lines are written.
    const CONFIG: ConfigSyntax;
    /// The setup's config lines, checked: each begins with a variable name, and none sets
    /// where the server listens.
    fn setup_lines(options: &str) -> anyhow::Result<Vec<String>> {
        let c = Self::CONFIG;
        let lines = super::config_lines(options, c.name_char, c.need_value, c.example)?;
        super::refuse_listening(&lines, c.listening)?;
        Ok(lines)
    }
    /// The install the settings name; None for a running server (`url`).
    fn install(self, s: &ServerSettings<Self>) -> anyhow::Result<Option<Self::Install>>;
    /// What the run records of the install (`fathom.bin`, `fathom.source`).
    fn install_record(install: &Self::Install) -> Vec<(String, String)>;
    /// Writes the server's config and initialises its data directory under `p.config`'s;
    /// the launch that starts it (its user and memory group are the bootstrap's).
    fn prepare(self, p: &Prepare<'_, Self::Install>) -> anyhow::Result<Launch>;
    /// The URL of a server fathom started, listening in `socket_dir` (and on TCP at `tcp`,
    /// whose port names PostgreSQL's socket).
    fn local_url(socket_dir: &Path, tcp: Option<std::net::SocketAddr>) -> String;
    /// The URL of a server fathom started that listens on TCP too (`--network`), reached at
    /// `at`: the workloads' connections and `fathom serve`'s URL.
    fn url_at(at: std::net::SocketAddr) -> String;
    /// A `url` setting (or `local_url`'s) parsed, or an error naming the setting.
    fn parse_url(url: &str) -> anyhow::Result<Self::Address>;
    /// The admin connection; `fresh`: to a server just initialised, whose workloads'
    /// database does not exist yet.
    fn connect_admin(address: &Self::Address, fresh: bool) -> anyhow::Result<Self::Admin>;
    /// Makes sure the workloads' database exists (creating it where the server is fresh or
    /// the server's way is to) and can hold their tables; the admin connection and address
    /// that use it.
    fn use_database(
        self,
        admin: Self::Admin,
        address: Self::Address,
        fresh: bool,
    ) -> anyhow::Result<(Self::Admin, Self::Address)>;
    fn version(admin: &mut Self::Admin) -> String;
    /// The server's data directory as it reports it.
    fn data_dir(admin: &mut Self::Admin) -> Option<PathBuf>;
    /// The server's variables that matter for a run, plus those the setup's lines set.
    fn variables(admin: &mut Self::Admin, setup: &[String]) -> BTreeMap<String, String>;
    fn counters(admin: &mut Self::Admin) -> Counters;
    /// Waits until the sessions' statistics have reached the counters (`Target::settle`).
    fn settle(admin: &mut Self::Admin) {
        let _ = admin;
    }
    fn maintain(self, admin: &mut Self::Admin, action: Maintenance) -> anyhow::Result<()>;
    /// The storage engine tables are created with, where the server has several.
    fn storage_engine(self) -> Option<&'static str> {
        None
    }
    /// A workload's connection, with fathom's own client (`own`) or the crate's.
    fn connect(address: &Self::Address, own: bool) -> anyhow::Result<Box<dyn SqlConn>>;
    /// A look at the server's own views of what it is doing in the background, on a
    /// connection of its own to `address` (`watch_ms`), for what its log does not tell; None:
    /// this kind has no views to look at.
    fn watch(self, address: &Self::Address) -> anyhow::Result<Option<watch::Look>> {
        let _ = address;
        Ok(None)
    }
    /// The config lines that have a server fathom starts log every statement with its work
    /// (`statement_log`); none: this kind cannot.
    const STATEMENT_LOG: &'static [&'static str] = &[];
    /// The statement that answers a connection's session id as the statement log names it.
    const SESSION_ID: &'static str = "";
    /// The statements logged between two moments (Unix µs) with their work, from the server's
    /// log `log` or over the admin connection.
    fn statements(
        admin: &mut Self::Admin,
        log: &Path,
        from_us: u64,
        to_us: u64,
    ) -> anyhow::Result<fathom_api::work::StatementLog> {
        let _ = (admin, log, from_us, to_us);
        anyhow::bail!("this server has no log of statements")
    }
    /// Whether the log of a server fathom started tells what it did in the background.
    const KEEPS_EVENTS: bool = false;
    /// What the server did in the background between two moments (Unix µs), from its log.
    fn events(log: &str, from_us: u64, to_us: u64) -> Vec<fathom_api::events::EngineEvent> {
        let _ = (log, from_us, to_us);
        Vec::new()
    }
}

/// How a server's config-file lines are written, for checking a setup's.
pub struct ConfigSyntax {
    /// A character variable names have beside letters, digits and `_`.
    pub name_char: char,
    /// Every line is `name = value` (no bare flags).
    pub need_value: bool,
    /// What a line looks like, for errors.
    pub example: &'static str,
    /// The variables that set where the server listens, which fathom sets itself.
    pub listening: &'static [&'static str],
}

/// What `ServerKind::prepare` works from.
pub struct Prepare<'a, I> {
    pub config: &'a EngineConfig,
    pub install: &'a I,
    pub socket_dir: &'a Path,
    pub setup: &'a [String],
    /// The `cache_size` setting, in bytes.
    pub cache: u64,
    /// The (uid, gid) the server runs as, when not fathom's.
    pub owner: Option<(u32, u32)>,
    /// Where the server listens on TCP besides its unix socket (`--network`).
    pub tcp: Option<std::net::SocketAddr>,
}

/// A sql server as an engine: one fathom started (stopped when dropped) or a running one.
pub struct SqlServer<K: ServerKind> {
    /// Looking at the server's views (declared first: it stops before the server does).
    watcher: Option<Watcher>,
    pub kind: K,
    address: K::Address,
    /// The workloads' address when it is not `address` (over TCP: `--network`).
    clients: Option<K::Address>,
    url: String,
    /// fathom's own client, not the crate's, for the workloads' connections.
    own_client: bool,
    managed: Managed,
    id: Identity,
    admin: Mutex<K::Admin>,
    effective: BTreeMap<String, String>,
    /// Whether the server logs every statement with its work (`statement_log`).
    statement_log: bool,
}

impl<K: ServerKind> SqlServer<K> {
    /// The engine `config` describes: a running server when its settings give `url`, else
    /// one fathom starts from the install they name.
    pub fn open(kind: K, config: &EngineConfig) -> anyhow::Result<SqlServer<K>> {
        let s: ServerSettings<K> = settings::read(&config.settings)?;
        let mut setup = K::setup_lines(&config.options)?;
        if s.statement_log.value {
            if K::STATEMENT_LOG.is_empty() {
                anyhow::bail!(
                    "setting `statement_log`: {} logs no statements' work",
                    kind.name()
                );
            }
            if !s.url.is_empty() {
                anyhow::bail!(
                    "setting `statement_log`: only a server fathom starts logs its statements \
                     (it sets the server's config and reads its log); drop `url`, or set \
                     `statement_log=false`"
                );
            }
            // First: a setup line for the same variable wins.
            let mut lines: Vec<String> = K::STATEMENT_LOG.iter().map(|l| l.to_string()).collect();
            lines.append(&mut setup);
            setup = lines;
        }
        let mut engine = match kind.install(&s)? {
            Some(install) => Self::start(kind, config, &install, &setup, s.cache_size.value)?,
            None => Self::attach(kind, &s.url, &s.pid, &setup)?,
        };
        engine.own_client = s.client == K::OWN_CLIENT;
        engine.statement_log = s.statement_log.value;
        if s.watch_ms > 0 {
            // Optional: a server that refuses its views (an attached one, a user without the
            // privilege) runs without them, and says so.
            let every = std::time::Duration::from_millis(s.watch_ms);
            match engine.kind.watch(&engine.address) {
                Ok(look) => engine.watcher = look.map(|l| Watcher::start(every, l)),
                Err(e) => {
                    eprintln!(
                        "fathom: not looking at the server's views for its background events \
                         ({e:#}); `--set watch_ms=0` turns the look off"
                    );
                    (engine.effective).insert("fathom.watch".into(), format!("off: {e:#}"));
                }
            }
        }
        engine
            .effective
            .insert("fathom.client".into(), K::client_name(s.client).into());
        Ok(engine)
    }

    /// Starts a fresh server from `install` in `config.data_dir`.
    pub fn start(
        kind: K,
        config: &EngineConfig,
        install: &K::Install,
        setup: &[String],
        cache: u64,
    ) -> anyhow::Result<SqlServer<K>> {
        let owner = match K::RUN_AS {
            Some(user) if super::is_root() => Some(user_ids(user)?),
            _ => None,
        };
        let socket_dir = SocketDir::create(owner)?;
        let mut launch = kind.prepare(&Prepare {
            config,
            install,
            socket_dir: socket_dir.path(),
            setup,
            cache,
            owner,
            tcp: config.network.as_ref().map(|n| n.listen),
        })?;
        launch.user = owner;
        launch.netns = config.network.as_ref().and_then(|n| n.netns.clone());
        launch.groups = config.groups.clone();
        let server = Server::start(&kind.process(), launch)?;
        let local = K::local_url(socket_dir.path(), config.network.as_ref().map(|n| n.listen));
        let address = K::parse_url(&local)?;
        let mut admin = None;
        server.wait_ready(READY_WAIT, || {
            admin = Some(K::connect_admin(&address, true)?);
            Ok(())
        })?;
        let admin = admin.expect("connected");
        let (mut admin, address) = kind
            .use_database(admin, address, true)
            .map_err(|e| anyhow::anyhow!("{e:#}; {}", super::log_tail(server.log(), 20)))?;
        let version = K::version(&mut admin);
        let mut effective = K::variables(&mut admin, setup);
        effective.extend(K::install_record(install));
        let tcp_url = (config.network.as_ref()).map(|n| K::url_at(n.connect));
        let clients = tcp_url.as_deref().map(K::parse_url).transpose()?;
        Ok(SqlServer {
            watcher: None,
            kind,
            address,
            clients,
            url: tcp_url.unwrap_or(local),
            own_client: true,
            id: Identity::new(kind.name(), version, vec![config.data_dir.clone()])
                .running_as(vec![server.pid()]),
            managed: Managed::new(server, socket_dir),
            admin: Mutex::new(admin),
            effective,
            statement_log: false,
        })
    }

    /// Uses the running server at `url`, whose processes are `pid`.
    fn attach(kind: K, url: &str, pid: &str, setup: &[String]) -> anyhow::Result<SqlServer<K>> {
        let address = K::parse_url(url)?;
        // Checked before connecting: a bad pid is the user's input, not the server's fault.
        let pids = parse_pid(pid)?;
        let admin = K::connect_admin(&address, false)
            .with_context(|| format!("cannot connect to the server at {url}"))?;
        let (mut admin, address) = kind.use_database(admin, address, false)?;
        let version = K::version(&mut admin);
        let data_dirs = K::data_dir(&mut admin).filter(|d| d.exists());
        let effective = K::variables(&mut admin, setup);
        Ok(SqlServer {
            watcher: None,
            kind,
            address,
            clients: None,
            url: url.to_string(),
            own_client: true,
            managed: Managed::default(),
            id: Identity::new(kind.name(), version, data_dirs.into_iter().collect())
                .running_as(pids),
            admin: Mutex::new(admin),
            effective,
            statement_log: false,
        })
    }

    /// The admin connection (still usable after a panic elsewhere held it).
    fn admin(&self) -> MutexGuard<'_, K::Admin> {
        self.admin.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn address(&self) -> &K::Address {
        &self.address
    }
}

impl<K: ServerKind> Target for SqlServer<K> {
    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }
    fn identity(&self) -> &Identity {
        &self.id
    }
    fn counters(&self) -> Counters {
        let mut counters = K::counters(&mut self.admin());
        if let Some(w) = &self.watcher {
            w.discount(&mut counters);
        }
        counters
    }
    fn settle(&self) {
        K::settle(&mut self.admin())
    }
    fn check(&self) -> anyhow::Result<()> {
        self.managed.check()
    }
    fn effective_options(&self) -> BTreeMap<String, String> {
        self.effective.clone()
    }
    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        self.kind.maintain(&mut self.admin(), action)
    }
    fn events(&self, from_us: u64, to_us: u64) -> Vec<fathom_api::events::EngineEvent> {
        let text = self
            .managed
            .log()
            .and_then(|l| std::fs::read_to_string(l).ok());
        let mut events = text.map_or_else(Vec::new, |t| K::events(&t, from_us, to_us));
        if let Some(w) = &self.watcher {
            events.extend(w.events(from_us, to_us));
            events.sort_by_key(|e| (e.start_us, e.end_us));
        }
        events
    }
    fn keeps_events(&self) -> bool {
        K::KEEPS_EVENTS && self.managed.log().is_some()
            || self.watcher.as_ref().is_some_and(Watcher::working)
    }
    fn statements(&self, from_us: u64, to_us: u64) -> Option<fathom_api::work::StatementLog> {
        let log = self.managed.log().filter(|_| self.statement_log)?;
        match K::statements(&mut self.admin(), log, from_us, to_us) {
            Ok(statements) => Some(statements),
            Err(e) => {
                eprintln!("fathom: cannot read the server's log of statements: {e:#}");
                None
            }
        }
    }
}

impl<K: ServerKind> SqlEngine for SqlServer<K> {
    fn dialect(&self) -> Dialect {
        K::DIALECT
    }
    fn storage_engine(&self) -> Option<&str> {
        self.kind.storage_engine()
    }
    /// A workload's connection; when it cannot be made, the error says whether the server
    /// is still running.
    fn connect(&self) -> anyhow::Result<Box<dyn SqlConn + '_>> {
        let address = self.clients.as_ref().unwrap_or(&self.address);
        let conn = K::connect(address, self.own_client).map_err(|e| {
            let why = self
                .check()
                .err()
                .map(|e| format!("; {e}"))
                .unwrap_or_default();
            anyhow::anyhow!("cannot connect to {}: {e}{why}", self.kind.name())
        })?;
        if !self.statement_log {
            return Ok(conn);
        }
        Ok(Box::new(super::statements::Session::new(
            conn,
            K::SESSION_ID,
        )?))
    }
}
