//! A network namespace of the run's own for the server it starts (`--network namespace`, or a
//! profile file's `namespace = true`): a process of fathom's holds it (`fathom hold-namespace`),
//! a veth pair joins it to fathom's, and the server joins it as it starts. The kernel removes a
//! namespace with its last process and a veth pair with its namespace, and the holder and the
//! server die with fathom (a parent-death signal), so a killed run leaves neither behind.

use anyhow::Context;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The addresses namespaces take: 10.128.0.0/9, a /30 per fathom process (by its pid), so two
/// runs at once on one host never share a subnet.
const BASE: u32 = 0x0a80_0000;

/// A namespace of the run's own, joined to fathom's by a veth pair.
pub struct Namespace {
    holder: Child,
    /// fathom's end of the pair (`fth<pid>`), and its address.
    host_link: String,
    pub host: Ipv4Addr,
    /// The server's end's address, inside the namespace.
    pub inner: Ipv4Addr,
}

impl Namespace {
    /// Whether this process can make one: root (CAP_NET_ADMIN and CAP_SYS_ADMIN), and `ip`.
    pub fn check(key: &str) -> anyhow::Result<()> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            anyhow::bail!(
                "{key}: a network namespace and a veth pair need root (CAP_NET_ADMIN); run as \
                 root, or use a profile without a namespace (loopback-tcp, same-az, ...)"
            );
        }
        let ip = Command::new("ip").arg("-V").output();
        if !ip.is_ok_and(|o| o.status.success()) {
            anyhow::bail!(
                "{key}: a network namespace needs `ip` (iproute2), which is not installed: run \
                 scripts/setup.sh --servers"
            );
        }
        Ok(())
    }

    /// Makes the namespace and the pair; `run` names the holder's command line.
    pub fn make(run: &Path) -> anyhow::Result<Namespace> {
        let pid = std::process::id();
        let (host, inner) = subnet(pid);
        let (host_link, inner_link) = (format!("fth{pid}"), format!("ftn{pid}"));
        // A pair left by a killed fathom of the same pid (its namespace gone, fathom's end
        // would have gone with it: this only clears a half-made one).
        let _ = Command::new("ip")
            .args(["link", "del", &host_link])
            .output();
        let holder = spawn_holder(run)?;
        let made = Namespace {
            host_link: host_link.clone(),
            holder,
            host,
            inner,
        };
        let ns = made.path();
        let hpid = made.holder.id().to_string();
        ip(&[
            "link",
            "add",
            &host_link,
            "type",
            "veth",
            "peer",
            "name",
            &inner_link,
            "netns",
            &hpid,
        ])?;
        ip(&["addr", "add", &format!("{host}/30"), "dev", &host_link])?;
        ip(&["link", "set", &host_link, "up"])?;
        let inside = |args: &[&str]| ip_in(&ns, args);
        inside(&["addr", "add", &format!("{inner}/30"), "dev", &inner_link])?;
        inside(&["link", "set", &inner_link, "up"])?;
        inside(&["link", "set", "lo", "up"])?;
        Ok(made)
    }

    /// The namespace's file, which a process joins it by.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/ns/net", self.holder.id()))
    }

    pub fn describe(&self) -> String {
        format!(
            "the server in a network namespace of its own ({} over the veth pair {}, fathom's end {})",
            self.inner, self.host_link, self.host
        )
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
        // Gone with the namespace once its last process has ended; said again in case the
        // server outlived the holder a moment.
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_link])
            .stderr(Stdio::null())
            .output();
    }
}

/// The /30 of 10.128.0.0/9 process `pid` takes: its first address (the end of a pair outside
/// the namespace `pid` makes or joins) and its second (the end inside).
pub(super) fn subnet(pid: u32) -> (Ipv4Addr, Ipv4Addr) {
    let net = BASE + ((pid & 0x1f_ffff) << 2);
    (Ipv4Addr::from(net + 1), Ipv4Addr::from(net + 2))
}

pub(super) fn ip(args: &[&str]) -> anyhow::Result<()> {
    run_tool(Command::new("ip").args(args))
}

/// `ip` with `args` inside the namespace whose file is `ns`.
pub(super) fn ip_in(ns: &Path, args: &[&str]) -> anyhow::Result<()> {
    run_tool(
        Command::new("nsenter")
            .arg(format!("--net={}", ns.display()))
            .arg("ip")
            .args(args),
    )
}

fn run_tool(cmd: &mut Command) -> anyhow::Result<()> {
    let out = cmd
        .output()
        .with_context(|| format!("running {:?}", cmd.get_program()))?;
    if !out.status.success() {
        anyhow::bail!(
            "{:?} {:?} failed: {}",
            cmd.get_program(),
            cmd.get_args().collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// `fathom hold-namespace`: a process in a new network namespace; returns once it says it is in
/// it.
fn spawn_holder(run: &Path) -> anyhow::Result<Child> {
    let args = [
        "hold-namespace".to_string(),
        format!("--for={}", run.display()),
    ];
    let (mut child, _, line) = super::spawn_helper(&args)?;
    if line.trim() != "ready" {
        let _ = child.kill();
        let _ = child.wait();
        anyhow::bail!("the namespace's holder said `{}`, not `ready`", line.trim());
    }
    Ok(child)
}

/// What `fathom hold-namespace` does: moves this process into a new network namespace, says
/// `ready`, and holds it until standard input closes.
pub fn hold() -> anyhow::Result<()> {
    use std::io::{Read, Write};
    // SAFETY: unshare takes a flag word.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error()).context("unshare(CLONE_NEWNET)");
    }
    let mut out = std::io::stdout();
    writeln!(out, "ready")?;
    out.flush()?;
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    Ok(())
}
