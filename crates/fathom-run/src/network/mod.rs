//! The network a run's clients reach a server fathom starts over (`--network`): the server on
//! TCP, through fathom's delay relay when the profile has a round trip or a bandwidth cap, and
//! the meter that says what each step's operations cost on it (bytes and round trips an
//! operation from the clients' socket calls, the path's round trip measured at the step's end,
//! the relay's own CPU).

pub mod host;
pub mod namespace;
pub mod profile;
pub mod relay;

use anyhow::Context;
use fathom_engines::netbuf::{Wire, WIRE};
use fathom_engines::server::TcpPath;
use fathom_measure::driver::Watch;
use fathom_schema::result::network::{NetworkFigures, NetworkProfile};
use std::io::BufRead;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

/// The fewest clock ticks of the relay's CPU a step's figure is given from (a tick is 10 ms:
/// fewer say too little), unless the step ran 10 s or more (then none is a figure too).
const MIN_TICKS: u64 = 10;

/// The relay process of a run: killed when dropped (and by the kernel when fathom dies).
struct Relay {
    child: Child,
    ready: relay::Ready,
    /// The relay's standard output, where it answers.
    said: std::io::BufReader<std::process::ChildStdout>,
}

impl Relay {
    /// Has the relay measure its own round trip and hops again (`calibrate`), and keeps its
    /// answer (its ready line, with the new figures).
    fn calibrate(&mut self) -> anyhow::Result<()> {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("piped");
        writeln!(stdin, "calibrate")?;
        stdin.flush()?;
        let mut line = String::new();
        self.said.read_line(&mut line)?;
        self.ready = relay::Ready::parse(&line).ok_or_else(|| {
            anyhow::anyhow!("the relay said `{}`, not its round trip", line.trim())
        })?;
        Ok(())
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A run's network: where its server listens and its clients connect.
pub struct RunNetwork {
    pub profile: NetworkProfile,
    /// Where the server fathom starts listens; None for a client host's own (`joined`).
    pub path: Option<TcpPath>,
    relay: Option<Relay>,
    /// A client host's own namespace (`--host-namespace`), described.
    joined: Option<String>,
    /// Dropped after the relay (fields drop in order): the relay's connections end first.
    namespace: Option<namespace::Namespace>,
}

impl RunNetwork {
    /// The path `profile` asks for, in place before the server starts: none for the unix
    /// socket; else a free loopback port for the server and, for a delayed or capped path,
    /// the relay in front of it.
    /// `data_dir` names the run on the relay's command line (as a server's names it), so
    /// what a killed run left is found by it.
    pub fn start(profile: &NetworkProfile, data_dir: &Path) -> anyhow::Result<Option<RunNetwork>> {
        if !profile.tcp {
            return Ok(None);
        }
        WIRE.count();
        let port = free_port().context("--network: finding a free TCP port")?;
        let namespace = (profile.namespace)
            .then(|| namespace::Namespace::make(data_dir))
            .transpose()
            .context("--network: making the server's network namespace")?;
        let listen = match &namespace {
            Some(ns) => SocketAddr::from((ns.inner, port.port())),
            None => port,
        };
        let relay = if profile.relayed() {
            let relay = spawn_relay(listen, profile, data_dir);
            Some(relay.context("--network: starting the delay relay")?)
        } else {
            None
        };
        let connect = relay.as_ref().map_or(listen, |r| r.ready.listen);
        Ok(Some(RunNetwork {
            profile: profile.clone(),
            path: Some(TcpPath {
                listen,
                connect,
                netns: namespace.as_ref().map(namespace::Namespace::path),
            }),
            relay,
            joined: None,
            namespace,
        }))
    }

    /// The network of a run that is a client host of its own (`--host-namespace`, `how` its
    /// link described), driving a server another fathom serves: no server to place, its
    /// clients' bytes and round trips metered as any networked run's.
    pub fn joined(how: &str) -> RunNetwork {
        WIRE.count();
        RunNetwork {
            profile: profile::bundled_named("namespace"),
            path: None,
            relay: None,
            joined: Some(how.to_string()),
            namespace: None,
        }
    }

    /// The server's namespace's file, when it has one of its own: what a client host joins
    /// (`--host-namespace`).
    pub fn namespace_file(&self) -> Option<std::path::PathBuf> {
        self.namespace.as_ref().map(namespace::Namespace::path)
    }

    /// Once the server is up and idle: the relay's own round trip measured again (it was
    /// measured while the server started), the delay it adds set to the rest.
    pub fn settle(&mut self) -> anyhow::Result<()> {
        match &mut self.relay {
            Some(r) => r
                .calibrate()
                .context("--network: calibrating the delay relay"),
            None => Ok(()),
        }
    }

    /// A meter of one step's span on this path.
    pub fn meter(&self) -> Meter {
        Meter {
            shared_server: self.joined.is_some(),
            profile: self.profile.clone(),
            relay: self.relay.as_ref().map(|r| (r.child.id(), r.ready)),
            begun: None,
            ended: None,
        }
    }

    /// How the path was made, for the run's host facts.
    pub fn describe(&self) -> String {
        let Some(tcp) = &self.path else {
            return self.joined.clone().unwrap_or_default();
        };
        let path = match &self.relay {
            Some(r) => format!(
                "server on TCP {}, clients through fathom's delay relay at {} (its own round trip \
                 {:.0} µs, taken off the delay)",
                tcp.listen, r.ready.listen, r.ready.own_rtt_us
            ),
            None => format!("server on TCP {}, no delay added", tcp.listen),
        };
        match &self.namespace {
            Some(ns) => format!("{path}; {}", ns.describe()),
            None => path,
        }
    }
}

/// A loopback port no one listens on now (the server binds it a moment later), below the
/// kernel's range of ports for `bind(0)` and outgoing connections (32768 up), so another
/// process's listener or connection cannot take it meanwhile.
fn free_port() -> std::io::Result<SocketAddr> {
    let mut seed = u64::from(std::process::id()) << 20
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.subsec_nanos() as u64);
    for _ in 0..200 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let port = 20_000 + (seed >> 33) as u16 % 12_000;
        if let Ok(l) = TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
            return l.local_addr();
        }
    }
    Err(std::io::Error::other(
        "no free port in 20000-31999 after 200 tries",
    ))
}

/// A helper process of fathom's own (`fathom relay`, `fathom hold-namespace`) with `args`: in its
/// own process group (a terminal's Ctrl-C reaches fathom only), dying with fathom (a
/// parent-death signal); returns it, its standard output, and the first line it said there.
pub(crate) fn spawn_helper(
    args: &[String],
) -> anyhow::Result<(Child, std::io::BufReader<ChildStdout>, String)> {
    let exe = std::env::current_exe().context("finding fathom's own executable")?;
    let mut cmd = Command::new(&exe);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0);
    // SAFETY: prctl and getppid are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() == 1 {
                return Err(std::io::Error::other("fathom exited"));
            }
            Ok(())
        });
    }
    let mut child =
        (cmd.spawn()).with_context(|| format!("starting {} {}", exe.display(), args[0]))?;
    let mut said = std::io::BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    if let Err(e) = said.read_line(&mut line) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e.into());
    }
    Ok((child, said, line))
}

/// `fathom relay` in front of `upstream`: a process of its own, so its CPU is apart.
fn spawn_relay(upstream: SocketAddr, p: &NetworkProfile, run: &Path) -> anyhow::Result<Relay> {
    let mut args = vec![
        "relay".to_string(),
        format!("--to={upstream}"),
        format!("--rtt-us={}", p.rtt_us),
        format!("--jitter-us={}", p.jitter_us),
        format!("--for={}", run.display()),
    ];
    args.extend(p.mbit.map(|m| format!("--mbit={m}")));
    let (mut child, said, line) = spawn_helper(&args)?;
    match relay::Ready::parse(&line) {
        Some(ready) => Ok(Relay { child, ready, said }),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("the relay said `{}`, not where it listens", line.trim())
        }
    }
}

/// The clients' counts and the relay's CPU at one end of a step's span.
#[derive(Clone, Copy, Debug)]
struct Reading {
    wire: Wire,
    relay_ticks: Option<u64>,
    /// What the relay had held.
    held: Option<relay::Held>,
}

/// A step's network meter: told when the span begins and ends (a `Watch`).
pub struct Meter {
    profile: NetworkProfile,
    /// The server serves other hosts' clients too (`--host-namespace`): its time is theirs too.
    shared_server: bool,
    relay: Option<(u32, relay::Ready)>,
    begun: Option<Reading>,
    ended: Option<Reading>,
}

impl Meter {
    fn read(&self) -> Reading {
        let relay_ticks = self.relay.and_then(|(pid, _)| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (user, system, _) = fathom_measure::sample::process::parse_stat(&text)?;
            Some(user + system)
        });
        Reading {
            wire: WIRE.read(),
            relay_ticks,
            held: self.relay.and_then(|(_, r)| relay::held(r.control).ok()),
        }
    }

    /// The step's figures over its `ops` operations in `seconds`, with the server's own time
    /// on the step's statements (`statement_us`, its counter's growth over the step) when it
    /// counts it; None when the span never began or nothing was sent.
    pub fn finish(
        &self,
        ops: u64,
        seconds: f64,
        statement_us: Option<f64>,
    ) -> Option<NetworkFigures> {
        let (a, b) = (self.begun?, self.ended?);
        let per_op = |x: u64| x as f64 / ops.max(1) as f64;
        let round_trips = b.wire.round_trips.saturating_sub(a.wire.round_trips);
        let sent = b.wire.sent.saturating_sub(a.wire.sent);
        let received = b.wire.received.saturating_sub(a.wire.received);
        if ops == 0 || round_trips == 0 {
            return None;
        }
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        // Clock ticks (10 ms): fewer than `MIN_TICKS` say too little to print.
        let relay_cpu = match (a.relay_ticks, b.relay_ticks) {
            (Some(x), Some(y)) if y.saturating_sub(x) >= MIN_TICKS || seconds >= 10.0 => {
                Some(y.saturating_sub(x) as f64 / hz * 1e6 / ops as f64)
            }
            _ => None,
        };
        let busier = sent.max(received) as f64 * 8.0 / 1e6 / seconds.max(1e-9);
        // The path's round trip as the step's own traffic found it: each way's mean hold of
        // a chunk, plus the hops outside the relay as calibration measured them.
        let rtt_us = match (a.held, b.held, self.relay) {
            (Some(x), Some(y), Some((_, r))) => y.round_trip_since(&x).map(|h| h + r.hops_us),
            _ => None,
        };
        Some(NetworkFigures {
            profile: self.profile.name.clone(),
            round_trips_per_op: per_op(round_trips),
            sent_bytes_per_op: per_op(sent),
            received_bytes_per_op: per_op(received),
            rtt_us,
            relay_own_rtt_us: self.relay.map(|r| r.1.own_rtt_us),
            relay_cpu_us_per_op: relay_cpu,
            wire_us_per_op: rtt_us.map(|r| r * per_op(round_trips)),
            server_us_per_op: statement_us
                .filter(|_| !self.shared_server)
                .map(|t| t / ops as f64),
            bandwidth_used: self.profile.mbit.map(|m| busier / m),
        })
    }
}

impl Watch for Meter {
    fn measuring(&mut self) {
        self.begun = Some(self.read());
    }

    fn ended(&mut self) {
        self.ended = Some(self.read());
    }
}
