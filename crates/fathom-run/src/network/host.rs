//! `--host-namespace`: a run as a client host of its own beside a server in a namespace of its
//! own (`fathom serve --network namespace`). The run's process moves into a new network
//! namespace, joined to the server's by a veth pair, so its clients reach the server from an
//! address of their own over the kernel's network stack, as another host's would. The namespace
//! is the process's own: it ends with the process (a kill included), and the pair with it.

use super::namespace::{self, Namespace};
use anyhow::Context;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

/// This process's place on the server's network, once it has joined.
#[derive(Clone, Debug)]
pub struct HostLink {
    /// This host's address.
    pub address: Ipv4Addr,
    /// The pair's end in the server's namespace: this host's way to every address there.
    pub server_end: Ipv4Addr,
    /// The server's namespace's file.
    pub server_ns: PathBuf,
    /// This host's end of the pair.
    pub link: String,
}

impl HostLink {
    pub fn describe(&self) -> String {
        format!(
            "this client host in a network namespace of its own at {} (--host-namespace), joined \
             to the server's namespace {} by the veth pair {}, no delay added",
            self.address,
            self.server_ns.display(),
            self.link
        )
    }
}

/// Moves this process into a network namespace of its own, joined to `server_ns` (a network
/// namespace's file: `/proc/PID/ns/net` as `fathom serve --network namespace` prints it, or
/// `/run/netns/NAME`). Call it before the threads that connect to the server exist: they
/// take the namespace of the thread that starts them.
pub fn join(server_ns: &Path) -> anyhow::Result<HostLink> {
    const KEY: &str = "--host-namespace";
    Namespace::check(KEY)?;
    if !server_ns.exists() {
        anyhow::bail!(
            "{KEY} {}: no such file; give the server's network namespace as `fathom serve \
             --network namespace` prints it (`netns /proc/PID/ns/net`), or /run/netns/NAME",
            server_ns.display()
        );
    }
    let pid = std::process::id();
    let (server_end, address) = namespace::subnet(pid);
    let (link, peer) = (format!("ftc{pid}"), format!("fhs{pid}"));
    // SAFETY: unshare takes a flag word; it moves the calling thread only.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error())
            .context(format!("{KEY}: unshare(CLONE_NEWNET)"));
    }
    let ns = server_ns.display().to_string();
    let made = (|| {
        namespace::ip(&[
            "link", "add", &link, "type", "veth", "peer", "name", &peer, "netns", &ns,
        ])?;
        namespace::ip_in(
            server_ns,
            &["addr", "add", &format!("{server_end}/30"), "dev", &peer],
        )?;
        namespace::ip_in(server_ns, &["link", "set", &peer, "up"])?;
        namespace::ip(&["addr", "add", &format!("{address}/30"), "dev", &link])?;
        namespace::ip(&["link", "set", &link, "up"])?;
        namespace::ip(&["link", "set", "lo", "up"])?;
        namespace::ip(&["route", "add", "default", "via", &server_end.to_string()])
    })();
    made.with_context(|| format!("{KEY}: joining {}", server_ns.display()))?;
    Ok(HostLink {
        address,
        server_end,
        server_ns: server_ns.to_path_buf(),
        link,
    })
}
