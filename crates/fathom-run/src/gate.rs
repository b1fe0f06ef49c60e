//! Steps that start together on several client hosts: `--start-at TIME` holds the first step
//! until a wall-clock time, and `--barrier DIR` makes each step wait, its clients ready, until
//! every host has marked itself ready for it in a directory they share (the shared results
//! volume), or fails after a timeout naming the hosts that were ready.

use anyhow::Context;
use fathom_api::stop::Stop;
use fathom_api::units::parse_time;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// How often a waiting host looks for the others' marks.
const POLL: Duration = Duration::from_millis(20);

/// A barrier through a shared directory.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Barrier {
    pub dir: PathBuf,
    /// How many hosts meet at each step.
    pub hosts: usize,
    pub timeout: Duration,
}

/// The flags that make several client hosts start their steps together.
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Several client hosts")]
pub struct GateInput {
    /// Hold the first step until this time: RFC 3339 UTC (2026-11-26T07:00:00Z) or Unix
    /// seconds; for client hosts started by a scheduler at different moments.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub start_at: Option<SystemTime>,
    /// A directory every client host shares (the results volume): before each step, with its
    /// clients ready, each host marks itself there and waits for the others
    /// (--barrier-hosts), so steps start together. A fresh directory per coordinated run.
    #[arg(long, value_name = "DIR", requires = "barrier_hosts")]
    pub barrier: Option<PathBuf>,
    /// How many hosts meet at the barrier.
    #[arg(long, value_name = "N", requires = "barrier")]
    pub barrier_hosts: Option<usize>,
    /// How long a host waits at the barrier for the others before failing.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = fathom_api::units::parse_duration)]
    pub barrier_timeout: Duration,
    /// Be a client host of its own beside a server in a namespace of its own: this run moves
    /// into a new network namespace joined to NETNS (as `fathom serve --network namespace`
    /// prints it: /proc/PID/ns/net) by a veth pair, with an address of its own (root).
    #[arg(long, value_name = "NETNS")]
    pub host_namespace: Option<PathBuf>,
}

impl GateInput {
    /// `--host-namespace`: moves this process into a namespace of its own, joined to the
    /// server's, and says how (for `Place::host_link`). Call it before any thread that
    /// connects to the server exists.
    pub fn join_host(&self) -> anyhow::Result<Option<String>> {
        let joined = (self.host_namespace.as_deref()).map(crate::network::host::join);
        Ok(joined.transpose()?.map(|link| link.describe()))
    }

    /// When steps may start, as the flags say.
    pub fn gate(&self) -> Gate {
        Gate {
            start_at: self.start_at,
            barrier: self
                .barrier
                .clone()
                .zip(self.barrier_hosts)
                .map(|(dir, hosts)| Barrier {
                    dir,
                    hosts,
                    timeout: self.barrier_timeout,
                }),
        }
    }
}

/// When a run's steps may start.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Gate {
    /// The first step waits until then.
    pub start_at: Option<SystemTime>,
    pub barrier: Option<Barrier>,
}

impl Gate {
    /// Waits until step `index` (from 1) may start, or `stop` is requested.
    pub fn wait(&self, index: usize, step: &str, stop: &Stop) -> anyhow::Result<()> {
        if let (1, Some(at)) = (index, self.start_at) {
            while let Ok(left) = at.duration_since(SystemTime::now()) {
                if stop.requested() {
                    anyhow::bail!("interrupted while waiting for --start-at");
                }
                std::thread::sleep(left.min(Duration::from_millis(200)));
            }
        }
        match &self.barrier {
            Some(b) => b.meet(index, step, stop),
            None => Ok(()),
        }
    }
}

/// This host's mark: its name and fathom's pid, unique across hosts and runs on one.
fn mark() -> String {
    format!(
        "{}.{}",
        fathom_schema::store::this_host(),
        std::process::id()
    )
}

impl Barrier {
    /// Marks this host ready for step `index` and waits for the others (or `stop`).
    pub fn meet(&self, index: usize, step: &str, stop: &Stop) -> anyhow::Result<()> {
        let dir = self.dir.join(format!("{index:02}-{step}"));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("--barrier: creating {}", dir.display()))?;
        let me = dir.join(mark());
        std::fs::write(&me, b"").with_context(|| format!("--barrier: marking {}", me.display()))?;
        let started = Instant::now();
        loop {
            let ready = ready(&dir)?;
            if ready.len() >= self.hosts {
                return Ok(());
            }
            if stop.requested() {
                anyhow::bail!("interrupted at the barrier before step {step}");
            }
            if started.elapsed() >= self.timeout {
                anyhow::bail!(
                    "--barrier: {} of {} hosts were ready for step {step} after {}s ({}: {}); \
                     the others did not arrive (started late, failed, or do not share the directory)",
                    ready.len(),
                    self.hosts,
                    self.timeout.as_secs(),
                    dir.display(),
                    ready.join(", ")
                );
            }
            std::thread::sleep(POLL);
        }
    }
}

/// The hosts marked ready in a step's directory.
fn ready(dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("--barrier: reading {}", dir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_meet_at_each_step_or_fail_naming_the_ready_ones() {
        let dir = tempfile::tempdir().unwrap();
        let barrier = Barrier {
            dir: dir.path().to_path_buf(),
            hosts: 2,
            timeout: Duration::from_millis(200),
        };
        let e = barrier
            .meet(1, "fillseq", &Stop::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1 of 2 hosts were ready for step fillseq"),
            "{e}"
        );
        // Another host's mark lets this one through.
        std::fs::write(dir.path().join("01-fillseq/other.1"), b"").unwrap();
        barrier.meet(1, "fillseq", &Stop::new()).unwrap();
        assert_eq!(
            parse_time("2026-11-26T07:00:00Z"),
            Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_676_400))
        );
        assert!(parse_time("soon").unwrap_err().contains("RFC 3339"));
    }
}
