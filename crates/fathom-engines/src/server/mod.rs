//! Managed database servers: fathom starts each from Debian's packages in its own data
//! directory with its own config and unix socket, watches it, and stops it. The process runs
//! in its own process group (a terminal's Ctrl-C reaches fathom only, which then finishes the
//! step), inside the run's memory cgroup when there is one, and with a parent-death signal so
//! it cannot outlive fathom even when fathom is killed.

pub mod bootstrap;
pub mod settings;
pub mod statements;
pub mod watch;

use anyhow::Context;
use fathom_api::leftovers;
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where a server fathom starts takes its workloads' connections besides its unix socket
/// (`--network`): TCP at `listen`, the clients connecting to `connect` (a delay relay's
/// address, or `listen` itself). fathom's own admin connection stays on the unix socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpPath {
    pub listen: std::net::SocketAddr,
    pub connect: std::net::SocketAddr,
    /// The network namespace the server joins as it starts (its `/proc/PID/ns/net`), when it
    /// runs in one of its own.
    pub netns: Option<PathBuf>,
}

/// How to start one server process.
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Where the server's stdout and stderr go (and the log whose tail errors show).
    pub log: PathBuf,
    /// Run as this (uid, gid) instead of root.
    pub user: Option<(u32, u32)>,
    /// The `cgroup.procs` files of the groups the process joins before it starts (the run's
    /// memory limit, its device profile).
    pub groups: Vec<PathBuf>,
    /// The signal that asks the server for a clean, quick shutdown.
    pub stop_signal: i32,
    /// The network namespace the process joins before it starts (`--network namespace`).
    pub netns: Option<PathBuf>,
}

/// A running server process.
pub struct Server {
    what: String,
    child: Mutex<Child>,
    pid: u32,
    log: PathBuf,
    stop_signal: i32,
}

/// A short directory for a unix socket (paths over 107 bytes do not fit a socket address),
/// removed when dropped — also when the server never got to start.
pub struct SocketDir(PathBuf);

impl SocketDir {
    pub fn create(owner: Option<(u32, u32)>) -> anyhow::Result<SocketDir> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        // A killed fathom could not remove its own: the next one does.
        leftovers::remove_dead(
            &std::env::temp_dir(),
            "socket directory",
            |n| leftovers::pid_after(n, "fathom-", Some('-')),
            |p: &Path| std::fs::remove_dir_all(p),
        );
        let dir = std::env::temp_dir().join(format!(
            "fathom-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let made = SocketDir(dir);
        if let Some((uid, gid)) = owner {
            chown(&made.0, uid, gid)?;
        }
        Ok(made)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for SocketDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn chown(path: &Path, uid: u32, gid: u32) -> anyhow::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .with_context(|| format!("chown {} to {uid}:{gid}", path.display()))
}

/// The `pid` setting of a server fathom is pointed at: none, or live processes, comma-separated
/// (FerretDB and the PostgreSQL under it; a mongos and its mongods).
pub fn parse_pid(pid: &str) -> anyhow::Result<Vec<u32>> {
    if pid.is_empty() {
        return Ok(Vec::new());
    }
    pid.split(',')
        .map(|one| {
            let p: u32 = one.trim().parse().map_err(|_| {
                anyhow::anyhow!("setting `pid`: `{one}` is not a process id (pid=PID or PID,PID)")
            })?;
            if !Path::new(&format!("/proc/{p}")).exists() {
                anyhow::bail!("setting `pid`: there is no process {p}");
            }
            Ok(p)
        })
        .collect()
}

/// Whether fathom runs as root: servers then run as their own system user where they must
/// (PostgreSQL), else as fathom's user.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The uid and gid of a system user (`postgres`).
pub fn user_ids(name: &str) -> anyhow::Result<(u32, u32)> {
    let c = CString::new(name)?;
    // SAFETY: getpwnam takes a NUL-terminated name and returns a pointer into static storage
    // (or null), read at once on this thread.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        anyhow::bail!("there is no system user `{name}` (is the server's package installed? run scripts/setup.sh --servers)");
    }
    // SAFETY: pw is non-null and points to a valid passwd record.
    Ok(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

/// A server setup's config lines, one per line (blank ones skipped), each checked to begin with
/// a variable name (letters, digits, `_` and `extra`), with `=` and a value when `need_value`;
/// `example` is what a line should look like.
pub fn config_lines(
    options: &str,
    extra: char,
    need_value: bool,
    example: &str,
) -> anyhow::Result<Vec<String>> {
    let mut lines = Vec::new();
    for line in options.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let name = line.split('=').next().unwrap_or("").trim();
        let named = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == extra);
        if !named || (need_value && !line.contains('=')) {
            anyhow::bail!("setup line `{line}`: expected {example}");
        }
        lines.push(line.to_string());
    }
    Ok(lines)
}

/// Refuses setup lines that would set one of `names` (a server's listening address, port or
/// socket): a server fathom starts listens only on its own unix socket. `-` and `_` are one.
pub fn refuse_listening(lines: &[String], names: &[&str]) -> anyhow::Result<()> {
    for line in lines {
        let name = line
            .split('=')
            .next()
            .unwrap_or("")
            .trim()
            .replace('-', "_");
        if names.contains(&name.to_ascii_lowercase().as_str()) {
            anyhow::bail!(
                "setup line `{line}`: a server fathom starts listens only on its own unix \
                 socket, so `{name}` cannot be set (to measure a server listening elsewhere, \
                 start it yourself and give --set url=...)"
            );
        }
    }
    Ok(())
}

/// The last `lines` lines of a log file, indented, for error messages; lines saying ERROR or
/// FATAL further up (a tool's help text may follow the error) come first.
pub fn log_tail(path: &Path, lines: usize) -> String {
    let mut text = String::new();
    if let Ok(mut f) = File::open(path) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
        let mut buf = Vec::new();
        let _ = f.read_to_end(&mut buf);
        text = String::from_utf8_lossy(&buf).into_owned();
    }
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = all.len().saturating_sub(lines);
    let tail = &all[start..];
    if tail.is_empty() {
        return format!("(the log {} is empty or missing)", path.display());
    }
    let errors: Vec<&str> = all[..start]
        .iter()
        .filter(|l| l.contains("ERROR") || l.contains("FATAL"))
        .copied()
        .take(5)
        .collect();
    let mut out = String::new();
    if !errors.is_empty() {
        out = format!(
            "errors in {}:\n    {}\n",
            path.display(),
            errors.join("\n    ")
        );
    }
    out + &format!(
        "last lines of {}:\n    {}",
        path.display(),
        tail.join("\n    ")
    )
}

/// Runs a setup command (mariadb-install-db, initdb) to completion, its output in `log`.
pub fn run_tool(
    what: &str,
    cmd: &mut Command,
    log: &Path,
    user: Option<(u32, u32)>,
) -> anyhow::Result<()> {
    let out = File::create(log).with_context(|| format!("creating {}", log.display()))?;
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
    }
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {what} ({:?})", cmd.get_program()))?;
    if !status.success() {
        anyhow::bail!("{what} failed ({status}); {}", log_tail(log, 15));
    }
    Ok(())
}

impl Server {
    pub fn start(what: &str, launch: Launch) -> anyhow::Result<Server> {
        let out = File::create(&launch.log)
            .with_context(|| format!("creating {}", launch.log.display()))?;
        if let Some((uid, gid)) = launch.user {
            chown(&launch.log, uid, gid)?;
        }
        let groups = (launch.groups.iter())
            .map(|p| CString::new(p.as_os_str().as_encoded_bytes()))
            .collect::<Result<Vec<_>, _>>()?;
        let user = launch.user;
        let netns = (launch.netns.as_ref())
            .map(|p| CString::new(p.as_os_str().as_encoded_bytes()))
            .transpose()?;
        let mut cmd = Command::new(&launch.program);
        cmd.args(&launch.args)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        // SAFETY: the closure runs in the forked child before exec and calls only
        // async-signal-safe functions (setpgid, open, setns, write, close, setgroups, setgid,
        // setuid, prctl, getppid) on memory prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                libc::setpgid(0, 0);
                // Before the credentials change: joining a namespace takes CAP_SYS_ADMIN.
                if let Some(ns) = &netns {
                    let fd = libc::open(ns.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
                    if fd < 0 || libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    libc::close(fd);
                }
                for g in &groups {
                    let fd = libc::open(g.as_ptr(), libc::O_WRONLY);
                    if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    libc::close(fd);
                }
                if let Some((uid, gid)) = user {
                    if libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(gid) != 0
                        || libc::setuid(uid) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                // After the credentials change, which would clear it.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() == 1 {
                    return Err(std::io::Error::other("fathom exited"));
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {what} ({})", launch.program.display()))?;
        Ok(Server {
            what: what.to_string(),
            pid: child.id(),
            child: Mutex::new(child),
            log: launch.log,
            stop_signal: launch.stop_signal,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Fails, with the tail of the server's log, when the server has exited.
    pub fn check_alive(&self) -> anyhow::Result<()> {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        match child.try_wait() {
            Ok(Some(status)) => anyhow::bail!(
                "{} (pid {}) exited ({status}); {}",
                self.what,
                self.pid,
                log_tail(&self.log, 20)
            ),
            _ => Ok(()),
        }
    }

    /// Polls `ready` until it answers true, failing if the server exits or `timeout` passes.
    pub fn wait_ready(
        &self,
        timeout: Duration,
        mut ready: impl FnMut() -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let start = Instant::now();
        loop {
            self.check_alive()
                .with_context(|| format!("{} did not start", self.what))?;
            let last = match ready() {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if start.elapsed() > timeout {
                anyhow::bail!(
                    "{} did not accept connections within {}s (last error: {last:#}); {}",
                    self.what,
                    timeout.as_secs(),
                    log_tail(&self.log, 20)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Asks the server to shut down and waits for it; kills it after `grace`.
    pub fn stop(&self, grace: Duration) {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        // SAFETY: kill has no memory-safety preconditions; the pid is our unreaped child.
        unsafe { libc::kill(self.pid as i32, self.stop_signal) };
        let start = Instant::now();
        while start.elapsed() < grace {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "fathom: {} did not stop within {}s; killing it",
            self.what,
            grace.as_secs()
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The server an engine started, with its socket directory — or nothing, when the engine was
/// pointed at a running server. Dropping it stops the server and removes the directory.
#[derive(Default)]
pub struct Managed {
    server: Option<Server>,
    socket_dir: Option<SocketDir>,
}

impl Managed {
    pub fn new(server: Server, socket_dir: SocketDir) -> Managed {
        Managed {
            server: Some(server),
            socket_dir: Some(socket_dir),
        }
    }

    /// The log of the server fathom started; none for a running server fathom reached.
    pub fn log(&self) -> Option<&Path> {
        self.server.as_ref().map(|s| s.log.as_path())
    }

    /// Fails, with the tail of its log, when the server fathom started has exited.
    pub fn check(&self) -> anyhow::Result<()> {
        self.server.as_ref().map_or(Ok(()), Server::check_alive)
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        // The server stops before its socket directory goes.
        if let Some(s) = self.server.take() {
            s.stop(Duration::from_secs(120));
        }
        self.socket_dir.take();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(60));
    }
}
