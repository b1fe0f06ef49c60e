//! A service time for a device of the run's own: its image served through a file system of
//! fathom's own (`serve`, in a process of its own) that answers each request no sooner than
//! the profile's service time after it arrived. The layer's own cost is measured when it
//! starts and taken off the hold, so a 4 KiB read at queue depth 1 takes the service time.

mod probe;
pub mod serve;

use crate::sample::process;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// Why the layer could not be had: a sentence.
pub type Why = String;

/// Why this host cannot serve an image held to a service time, if it cannot.
pub fn check() -> Result<(), Why> {
    if !Path::new("/dev/fuse").exists() {
        return Err(
            "a service time needs FUSE, and this host has no /dev/fuse (modprobe fuse)".into(),
        );
    }
    Ok(())
}

/// What the layer measured when it started: a 4 KiB read at queue depth 1 through it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Floor {
    /// The profile's service time, µs.
    pub service_us: f64,
    /// How long each request is held after it arrives, µs: the service time less the
    /// layer's own cost.
    pub hold_us: f64,
    /// The median 4 KiB read at queue depth 1 through the layer, µs.
    pub read_us: f64,
}

/// A served image: the serving process, told its hold on its standard input, which it
/// leaves (unmounting) when that input ends.
#[derive(Debug)]
pub struct HeldImage {
    child: Child,
    input: Option<ChildStdin>,
    mount: PathBuf,
    floor: Option<Floor>,
}

impl HeldImage {
    /// Serves `image` at `mount` (made if missing) in a process of its own, `depth` requests
    /// at once, each held `service_us`; returns when the served file is there.
    pub fn start(image: &Path, mount: &Path, service_us: f64, depth: u32) -> Result<Self, Why> {
        std::fs::create_dir_all(mount)
            .map_err(|e| format!("cannot create {}: {e}", mount.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("cannot find fathom: {e}"))?;
        let mut child = Command::new(&exe)
            .arg("held-image")
            .arg(image)
            .arg(mount)
            .args(["--service-us", &service_us.to_string()])
            .args(["--depth", &depth.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{} held-image`: {e}", exe.display()))?;
        // The server answers the kernel's writeback: outside the run's memory and blkio
        // groups, so neither a memory limit's reclaim nor the profile waits on it.
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for controller in ["memory", "blkio"] {
            if let Some(root) = crate::cgroup::mount_of(&mountinfo, controller) {
                let _ = std::fs::write(root.join("cgroup.procs"), child.id().to_string());
            }
        }
        let input = child.stdin.take();
        let mut held = HeldImage {
            child,
            input,
            mount: mount.to_path_buf(),
            floor: None,
        };
        let size = std::fs::metadata(image).map(|m| m.len()).unwrap_or(0);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if std::fs::metadata(held.file()).is_ok_and(|m| m.len() == size) {
                return Ok(held);
            }
            if let Ok(Some(status)) = held.child.try_wait() {
                return Err(format!(
                    "`fathom held-image` for {} ended: {status}",
                    image.display()
                ));
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not appear in 10 s", held.file().display()));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The served file, for the loop device to be made over.
    pub fn file(&self) -> PathBuf {
        self.mount.join(serve::FILE_NAME)
    }

    fn set_hold(&mut self, us: f64) -> Result<(), Why> {
        let ns = (us.max(0.0) * 1000.0).round() as u64;
        let input = self.input.as_mut().ok_or("the layer has stopped")?;
        writeln!(input, "{ns}").map_err(|e| format!("cannot tell the layer its hold: {e}"))
    }

    /// Measures the layer on `node` (the loop device over it, `image` below it, `fresh` if
    /// no file system is on it yet) and takes its own cost off the hold: 64 reads of 4 KiB at
    /// queue depth 1 held the service time, the excess of their median taken off, and the same
    /// 64 again to say what a read then takes. The reads are of pages that hold data
    /// (`probe`), so each goes to the disk below as the run's reads will.
    pub fn calibrate(
        &mut self,
        node: &Path,
        image: &Path,
        fresh: bool,
        service_us: f64,
    ) -> Result<Floor, Why> {
        let pages = probe::pages(image, node, fresh, 64)?;
        self.set_hold(service_us)?;
        let first = probe::qd1_read_us(node, &pages)?;
        let hold_us = (service_us - (first - service_us).max(0.0)).max(0.0);
        self.set_hold(hold_us)?;
        let floor = Floor {
            service_us,
            hold_us,
            read_us: probe::qd1_read_us(node, &pages)?,
        };
        self.floor = Some(floor);
        Ok(floor)
    }

    /// What the layer measured when it started, if it was.
    pub fn floor(&self) -> Option<Floor> {
        self.floor
    }

    /// The serving process's peak resident memory, MiB (its buffers: the host's memory, outside
    /// the run's limit).
    pub fn peak_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()));
        let bytes = status.ok().and_then(|s| process::status_kb(&s, "VmHWM:"));
        bytes.unwrap_or(0) as f64 / 1048576.0
    }

    /// CPU seconds the serving process has used.
    pub fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()));
        let ticks = stat
            .ok()
            .and_then(|s| process::parse_stat(&s))
            .map(|(user, system, _)| user + system);
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        ticks.unwrap_or(0) as f64 / hz
    }
}

impl Drop for HeldImage {
    fn drop(&mut self) {
        drop(self.input.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        serve::detach(&self.mount);
    }
}
