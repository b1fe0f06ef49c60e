//! One `perf record` with its events off: started before the step (attaching takes tens of
//! milliseconds), switched on and off through its control FIFO at the measured span's edges,
//! stopped with SIGINT. Dropped early (an error, Ctrl-C), it kills perf, so no recorder
//! outlives the run.

use anyhow::Context;
use fathom_schema::profile::Unwinding;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long perf may take to answer a control command (attaching to many threads included).
const ANSWER: Duration = Duration::from_secs(20);

/// What one perf samples.
#[derive(Clone, Debug)]
pub enum Scope {
    /// Every CPU: no cost when a sampled thread is switched in or out, so a server's round
    /// trips are not slowed; the processes are picked out of the samples afterwards. Needs
    /// root (or `perf_event_paranoid` 0 or less).
    System,
    /// These processes' threads (and children they fork): perf's events follow each thread
    /// through every context switch, which costs a round-trip-bound server a quarter of its
    /// throughput here.
    Processes(Vec<u32>),
}

pub struct Recording {
    child: Child,
    ctl: File,
    ack: File,
    fifos: [PathBuf; 2],
    /// perf's data file.
    pub data: PathBuf,
    stderr: PathBuf,
    enabled_at: Option<Instant>,
    /// Seconds its events were on.
    pub seconds: f64,
    /// perf's own CPU seconds while its events were on (reading and writing the samples).
    pub cpu_seconds: f64,
    cpu_at_enable: f64,
}

impl Recording {
    /// Starts perf on `scope` with its events off, and waits until it answers.
    pub fn start(
        scope: &Scope,
        unwinding: Unwinding,
        hz: u32,
        data: PathBuf,
        outside: Option<&Path>,
    ) -> anyhow::Result<Recording> {
        let (fifos, ctl, ack) = control_fifos(&data)?;
        let stderr = data.with_extension("log");
        let child = record(scope, unwinding, hz, &fifos, &data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&stderr)?)
            .spawn()
            .context("starting perf (install it with scripts/setup.sh --profile)")?;
        let mut r = Recording {
            child,
            ctl,
            ack,
            fifos,
            data,
            stderr,
            enabled_at: None,
            seconds: 0.0,
            cpu_seconds: 0.0,
            cpu_at_enable: 0.0,
        };
        if let Some(procs) = outside {
            std::fs::write(procs, r.child.id().to_string()).with_context(|| {
                format!("moving perf out of the memory limit: {}", procs.display())
            })?;
        }
        r.command("ping")?;
        Ok(r)
    }

    /// Sends a control command and waits for perf's `ack`.
    fn command(&mut self, what: &str) -> anyhow::Result<()> {
        self.ctl.write_all(format!("{what}\n").as_bytes())?;
        let deadline = Instant::now() + ANSWER;
        loop {
            let mut poll = libc::pollfd {
                fd: self.ack.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, waited on for at most 100 ms.
            let ready = unsafe { libc::poll(&mut poll, 1, 100) };
            if ready > 0 {
                let mut buf = [0u8; 16];
                let n = self.ack.read(&mut buf)?;
                if buf[..n].starts_with(b"ack") {
                    return Ok(());
                }
            }
            if let Some(status) = self.child.try_wait()? {
                anyhow::bail!("perf exited ({status}): {}", self.log().trim());
            }
            if Instant::now() > deadline {
                anyhow::bail!("perf did not answer `{what}` within {ANSWER:?}");
            }
        }
    }

    pub fn enable(&mut self) -> anyhow::Result<()> {
        self.command("enable")?;
        self.enabled_at = Some(Instant::now());
        self.cpu_at_enable = self.own_cpu();
        Ok(())
    }

    pub fn disable(&mut self) -> anyhow::Result<()> {
        self.command("disable")?;
        if let Some(at) = self.enabled_at.take() {
            self.seconds += at.elapsed().as_secs_f64();
            self.cpu_seconds += self.own_cpu() - self.cpu_at_enable;
        }
        Ok(())
    }

    /// Stops perf, its data file complete.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        // SAFETY: signals our own child, which has not been reaped yet.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        let deadline = Instant::now() + ANSWER;
        while self.child.try_wait()?.is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                anyhow::bail!("perf did not stop within {ANSWER:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// perf's CPU seconds so far (user and system).
    fn own_cpu(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()));
        let ticks = stat
            .ok()
            .and_then(|s| fathom_measure::sample::process::parse_stat(&s))
            .map_or(0, |(user, system, _)| user + system);
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1);
        ticks as f64 / hz as f64
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        for f in self.fifos.iter().chain([&self.stderr]) {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// perf's control FIFO and its answers beside `data`, both opened read-write: a FIFO so opened
/// never blocks on its other end.
fn control_fifos(data: &Path) -> anyhow::Result<([PathBuf; 2], File, File)> {
    let fifos = [data.with_extension("ctl"), data.with_extension("ack")];
    for f in &fifos {
        let _ = std::fs::remove_file(f);
        let c = std::ffi::CString::new(f.as_os_str().as_encoded_bytes())?;
        // SAFETY: mkfifo reads a NUL-terminated path.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("creating {}", f.display()));
        }
    }
    let open = |p: &Path| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(p)
            .with_context(|| format!("opening {}", p.display()))
    };
    let (ctl, ack) = (open(&fifos[0])?, open(&fifos[1])?);
    Ok((fifos, ctl, ack))
}

/// `perf record` of `scope` into `data`, its events off until the control FIFO says.
fn record(
    scope: &Scope,
    unwinding: Unwinding,
    hz: u32,
    fifos: &[PathBuf; 2],
    data: &Path,
) -> Command {
    let mut perf = Command::new("perf");
    // cpu-clock on every host (no hardware counters in most VMs): each sample then weighs its
    // period in nanoseconds of CPU.
    perf.args(["record", "-e", "cpu-clock", "-F", &hz.to_string()])
        .args(["--call-graph", unwinding.perf_mode()])
        // No build-id cache: perf would copy every binary it saw into ~/.debug (fathom's alone
        // is over a gigabyte with its line tables), and read them all at its exit.
        .args([
            "--no-buildid",
            "--no-buildid-cache",
            "-D",
            "-1",
            "--control",
        ])
        .arg(format!(
            "fifo:{},{}",
            fifos[0].display(),
            fifos[1].display()
        ));
    match scope {
        Scope::System => perf.arg("-a"),
        Scope::Processes(pids) => {
            let list: Vec<String> = pids.iter().map(u32::to_string).collect();
            perf.args(["-p", &list.join(",")])
        }
    };
    perf.arg("-o").arg(data);
    perf
}

/// Samples the kernel dropped, from `perf report --stats` (its LOST events).
pub fn lost(data: &Path) -> anyhow::Result<u64> {
    let out = Command::new("perf")
        .args(["report", "--stats", "-i"])
        .arg(data)
        .stderr(Stdio::null())
        .output()
        .context("running perf report --stats")?;
    Ok(lost_in_stats(&String::from_utf8_lossy(&out.stdout)))
}

/// The samples named in `LOST` and `LOST_SAMPLES` lines of `perf report --stats`. A LOST
/// event counts the records lost with it (its `lost` field), which the stats do not print:
/// a LOST event is counted as one, the lower bound.
fn lost_in_stats(stats: &str) -> u64 {
    let mut total = 0;
    for line in stats.lines() {
        let line = line.trim();
        if line.starts_with("LOST events:") || line.starts_with("LOST_SAMPLES events:") {
            total += line
                .split(':')
                .nth(1)
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_lost_samples() {
        let stats = "Aggregated stats:\n           TOTAL events:       1081\n\
                     LOST events:          3  ( 0.3%)\n   LOST_SAMPLES events:   40  ( 3.7%)\n";
        assert_eq!(lost_in_stats(stats), 43);
    }
}
