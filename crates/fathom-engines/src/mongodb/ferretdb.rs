//! The document server fathom starts when given no URL: FerretDB (MongoDB's wire protocol,
//! `--handler=postgresql`), built by `scripts/fetch-engine.sh ferretdb VERSION`, over a
//! PostgreSQL fathom starts from Debian's packages. Both run in the run's data directory and
//! memory group, listen on unix sockets (FerretDB on TCP too when the run asks: `--network`),
//! and stop with the engine (FerretDB first). The sampled processes are both servers with their
//! children; the engine counters are PostgreSQL's.

use crate::postgres::{self, Postgres};
use crate::server::{Launch, Managed, Server, SocketDir};
use crate::{fetched, EngineConfig};
use anyhow::Context;
use fathom_api::target::{Counters, Maintenance, Target};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The FerretDB release fathom starts by default (the last with the PostgreSQL handler that
/// needs no extension).
pub const VERSION: &str = "1.24.0";

const SOCKET: &str = "mongodb.sock";

/// FerretDB's binary of release `version`, or an error naming the command that builds it.
fn binary(version: &str) -> anyhow::Result<PathBuf> {
    Ok(fetched::release("ferretdb", version, "bin/ferretdb")?.join("bin/ferretdb"))
}

/// The default release's version as it reports it, for `fathom engines`.
pub fn packaged_version() -> anyhow::Result<String> {
    let out = std::process::Command::new(binary(VERSION)?)
        .arg("--version")
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("version: v"))
        .map(|v| format!("FerretDB {v}"))
        .ok_or_else(|| anyhow::anyhow!("unexpected `ferretdb --version`: {text}"))
}

/// FerretDB and the PostgreSQL under it.
pub struct Ferret {
    /// Declared first: dropped (stopped) before its PostgreSQL.
    ferret: Managed,
    pid: u32,
    socket: PathBuf,
    /// Where the workloads connect over TCP (`--network`): FerretDB's address, or the relay's.
    tcp: Option<std::net::SocketAddr>,
    bin: PathBuf,
    pg: Postgres,
}

impl Ferret {
    /// Starts PostgreSQL, then FerretDB over it; `pushdown_indexes`: with the indexes its
    /// pushed-down filters can use (`pushdown`).
    pub fn start(
        config: &EngineConfig,
        version: &str,
        cache: u64,
        pushdown_indexes: bool,
    ) -> anyhow::Result<Ferret> {
        let bin = binary(version)?;
        let pg = postgres::start_backend(config, cache)?;
        if pushdown_indexes {
            super::pushdown::install(pg.address(), pg.database())
                .context("installing the pushdown indexes' trigger in FerretDB's PostgreSQL")?;
        }
        let pg_dir = pg
            .socket_dir()
            .ok_or_else(|| anyhow::anyhow!("the PostgreSQL under FerretDB has no socket"))?;
        let state = config.data_dir.join("ferretdb");
        std::fs::create_dir_all(&state)?;
        let sock_dir = SocketDir::create(None)?;
        let socket = sock_dir.path().join(SOCKET);
        let backend = format!(
            "postgres://postgres@/{}?host={}",
            pg.database(),
            pg_dir.display()
        );
        // No TCP listener unless the run asks (`--network`), no debug HTTP listener.
        let listen = (config.network.as_ref()).map_or(String::new(), |n| n.listen.to_string());
        let args = vec![
            "--handler=postgresql".into(),
            format!("--postgresql-url={backend}"),
            format!("--listen-addr={listen}"),
            format!("--listen-unix={}", socket.display()),
            "--debug-addr=-".into(),
            format!("--state-dir={}", state.display()),
            "--telemetry=disable".into(),
            "--log-level=warn".into(),
        ];
        let server = Server::start(
            "ferretdb",
            Launch {
                program: bin.clone(),
                args,
                log: config.data_dir.join("ferretdb.log"),
                user: None,
                groups: config.groups.clone(),
                stop_signal: libc::SIGTERM,
                netns: config.network.as_ref().and_then(|n| n.netns.clone()),
            },
        )?;
        server.wait_ready(Duration::from_secs(60), || {
            std::os::unix::net::UnixStream::connect(&socket)?;
            if let Some(n) = &config.network {
                std::net::TcpStream::connect(n.listen)?;
            }
            Ok(())
        })?;
        Ok(Ferret {
            pid: server.pid(),
            ferret: Managed::new(server, sock_dir),
            socket,
            tcp: config.network.as_ref().map(|n| n.connect),
            bin,
            pg,
        })
    }

    /// The workloads' URL: FerretDB's socket, or its TCP address (`--network`).
    pub fn url(&self) -> String {
        match self.tcp {
            Some(at) => format!("mongodb://{at}/"),
            None => self.admin_url(),
        }
    }

    /// fathom's own URL for its commands (counters, settings, maintenance): the socket, so
    /// they cost a run's network path nothing.
    pub fn admin_url(&self) -> String {
        format!("mongodb://{}/", percent_encoded(&self.socket))
    }

    /// FerretDB's and the postmaster's pids.
    pub fn pids(&self) -> Vec<u32> {
        let mut p = vec![self.pid];
        p.extend(self.pg.pids());
        p
    }

    pub fn postgres_version(&self) -> String {
        self.pg.version()
    }

    pub fn effective(&self) -> BTreeMap<String, String> {
        let mut e: BTreeMap<String, String> = self
            .pg
            .effective_options()
            .into_iter()
            .map(|(k, v)| (format!("postgres.{k}"), v))
            .collect();
        e.insert("fathom.ferretdb".into(), self.bin.display().to_string());
        e.insert("fathom.ferretdb.handler".into(), "postgresql".into());
        e
    }

    pub fn counters(&self) -> Counters {
        self.pg
            .counters()
            .into_iter()
            .map(|(k, v)| (format!("postgres.{k}"), v))
            .collect()
    }

    /// Waits until FerretDB's sessions' statistics have reached PostgreSQL's counters.
    pub fn settle(&self) {
        self.pg.settle()
    }

    /// Fails when FerretDB or its PostgreSQL has exited.
    pub fn check(&self) -> anyhow::Result<()> {
        self.ferret.check()?;
        self.pg.check()
    }

    /// A flush is the PostgreSQL's CHECKPOINT.
    pub fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        self.pg.maintain(action)
    }
}

/// A socket path as a MongoDB URL's host: every `/` as `%2F`.
fn percent_encoded(path: &Path) -> String {
    path.display()
        .to_string()
        .replace('%', "%25")
        .replace('/', "%2F")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_socket_path_is_a_url_host() {
        assert_eq!(
            super::percent_encoded(std::path::Path::new("/tmp/fathom-1-0/mongodb.sock")),
            "%2Ftmp%2Ffathom-1-0%2Fmongodb.sock"
        );
    }
}
