//! `--profile`: where each timed step's CPU went. Before a step, perf starts with its events
//! off — one per unwinding the processes doing the work need (fathom's own, a server's grouped
//! by executable), sampling every CPU where allowed and following the processes otherwise;
//! the driver switches the events on when the measured span begins and off when the step's
//! figures end; then the processes' samples are folded into `steps/NN-step.folded` and
//! described by the step's `ProfileRecord`.

mod collapse;
mod groups;
mod perf;

use anyhow::Context;
use fathom_engines::server::is_root;
use fathom_measure::driver::Watch;
use fathom_schema::profile::{ProfileRecord, ProfiledProcess, Unwinding};
use groups::Group;
use perf::{Recording, Scope};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Samples per second per CPU unless `--profile-hz` says: about 1% of one CPU's time in the
/// kernel's sampling and perf's writing (docs/performance.md).
pub const DEFAULT_HZ: u32 = 99;
/// The highest `--profile-hz` taken (the kernel throttles far above it anyway).
pub const MAX_HZ: u32 = 5000;

/// `kernel.perf_event_paranoid`: who may sample what (Debian's default, 2, when unreadable).
fn paranoid() -> i32 {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
        .unwrap_or(2)
}

/// Checks that perf runs and may sample this user's processes; the error names the fix.
pub fn check_perf() -> anyhow::Result<()> {
    let version = std::process::Command::new("perf").arg("--version").output();
    if !version.is_ok_and(|o| o.status.success()) {
        anyhow::bail!(
            "profiles need Linux perf, which is not installed or does not run: \
             `scripts/setup.sh --profile` installs it (Debian's linux-perf)"
        );
    }
    let paranoid = paranoid();
    if paranoid > 2 && !is_root() {
        anyhow::bail!(
            "perf may not sample processes here (kernel.perf_event_paranoid is {paranoid}); \
             allow it for your processes with `sudo sysctl kernel.perf_event_paranoid=2` \
             (1 to see kernel frames too), or run fathom as root"
        );
    }
    Ok(())
}

/// What profiles a run's steps.
pub struct Profiler {
    hz: u32,
    /// Function-name prefixes of an embedded engine's code.
    engine_code: Vec<String>,
    /// The server's processes (none for an embedded engine).
    server: Vec<u32>,
    /// What every step's profile cannot show.
    limits: Vec<String>,
    /// Where perf's data goes while a step runs: memory (`/dev/shm`), so its writes are not
    /// the disk's figures; removed once folded.
    scratch: PathBuf,
    /// The `cgroup.procs` perf moves to when fathom is under a memory limit, so its buffers
    /// are not charged to the engine's limit.
    outside: Option<PathBuf>,
    /// Sample every CPU and pick the processes out (root), or follow the processes.
    system: bool,
    /// Sessions started, to name their scratch files.
    started: std::sync::atomic::AtomicUsize,
}

impl Profiler {
    /// The profiler of a run on `engine`, whose work is done by `pids`.
    pub fn new(
        hz: u32,
        engine: &fathom_engines::EngineEntry,
        pids: &[u32],
        outside: Option<PathBuf>,
    ) -> anyhow::Result<Profiler> {
        let own = std::process::id();
        let server: Vec<u32> = pids.iter().copied().filter(|p| *p != own).collect();
        if engine.server && server.is_empty() {
            anyhow::bail!(
                "--profile: engine `{}` runs no process fathom knows of: name the server's with \
                 --set pid=PID[,PID...]",
                engine.name
            );
        }
        let code = engine.code.iter().map(|c| c.to_string()).collect();
        Profiler::of(hz, server, code, outside)
    }

    /// The profiler of fathom's process and the processes `others` (with their children),
    /// `engine_code` naming an embedded engine's functions.
    pub fn of(
        hz: u32,
        others: Vec<u32>,
        engine_code: Vec<String>,
        outside: Option<PathBuf>,
    ) -> anyhow::Result<Profiler> {
        let own = std::process::id();
        let mut limits = Vec::new();
        let paranoid = paranoid();
        let root = is_root();
        let system = root || paranoid <= 0;
        if !system {
            limits.push(format!(
                "perf followed the processes (kernel.perf_event_paranoid is {paranoid}, not \
                 root): its events cost every context switch, which slows a server's round \
                 trips (docs/performance.md); root or paranoid 0 samples every CPU instead"
            ));
        }
        if !root && paranoid > 1 {
            limits.push(
                "kernel frames are not sampled (kernel.perf_event_paranoid > 1): time in \
                 system calls is missing"
                    .into(),
            );
        }
        let shm = Path::new("/dev/shm");
        let scratch = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        }
        .join(format!("fathom-profile-{own}"));
        std::fs::create_dir_all(&scratch)
            .with_context(|| format!("--profile: creating {}", scratch.display()))?;
        Ok(Profiler {
            hz,
            engine_code,
            server: others,
            limits,
            scratch,
            outside,
            system,
            started: Default::default(),
        })
    }

    /// Attaches perf, events off, for step `index` named `step` of the run in `run_dir`: one
    /// perf per unwinding the processes need.
    pub fn start(&self, run_dir: &Path, index: usize, step: &str) -> anyhow::Result<Session> {
        let folded = fathom_schema::store::step_file(run_dir, index, step, "folded");
        self.start_into(run_dir, folded)
    }

    /// Attaches perf, events off, its folded stacks to go to `folded` (named in the record
    /// relative to `base`).
    pub fn start_into(&self, base: &Path, folded: PathBuf) -> anyhow::Result<Session> {
        let index = self
            .started
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let groups = groups::read(&self.server);
        let mut recordings = Vec::new();
        for (i, mode) in groups::modes(&groups).into_iter().enumerate() {
            let scope = if self.system {
                Scope::System
            } else {
                Scope::Processes(
                    groups
                        .iter()
                        .filter(|g| g.unwinding == mode)
                        .flat_map(|g| g.pids.iter().copied())
                        .collect(),
                )
            };
            let data = self.scratch.join(format!("{index:02}-{i}.perf"));
            let r = Recording::start(&scope, mode, self.hz, data, self.outside.as_deref())
                .with_context(|| format!("--profile: starting perf ({scope:?})"))?;
            recordings.push((mode, r));
        }
        Ok(Session {
            recordings,
            groups,
            server: self.server.clone(),
            errors: Vec::new(),
            run_dir: base.to_path_buf(),
            folded,
            hz: self.hz,
            engine_code: self.engine_code.clone(),
            limits: self.limits.clone(),
        })
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// One step's recordings, switched on and off by the driver.
pub struct Session {
    recordings: Vec<(Unwinding, Recording)>,
    groups: Vec<Group>,
    /// The server's processes, to read its groups again at the step's end.
    server: Vec<u32>,
    /// What went wrong while the step ran (the step itself goes on).
    errors: Vec<String>,
    run_dir: PathBuf,
    folded: PathBuf,
    hz: u32,
    engine_code: Vec<String>,
    limits: Vec<String>,
}

impl Watch for Session {
    fn measuring(&mut self) {
        for (_, r) in &mut self.recordings {
            if let Err(e) = r.enable() {
                self.errors.push(format!("{e:#}"));
            }
        }
    }

    fn ended(&mut self) {
        for (_, r) in &mut self.recordings {
            if let Err(e) = r.disable() {
                self.errors.push(format!("{e:#}"));
            }
        }
        groups::extend(&mut self.groups, groups::read(&self.server));
    }
}

impl Session {
    /// Stops perf, folds the samples into the step's `.folded` file and describes them.
    pub fn finish(mut self) -> anyhow::Result<ProfileRecord> {
        let by_pid = groups::by_pid(&self.groups);
        let labels: Vec<String> = self.groups.iter().map(|g| g.label.clone()).collect();
        let mut folded: Vec<collapse::Folded> =
            self.groups.iter().map(|_| Default::default()).collect();
        let mut lost = 0;
        let (mut seconds, mut perf_cpu_seconds) = (0.0f64, 0.0);
        for (mode, r) in &mut self.recordings {
            r.stop()?;
            seconds = seconds.max(r.seconds);
            perf_cpu_seconds += r.cpu_seconds;
            lost += perf::lost(&r.data).unwrap_or(0);
            // perf's `(N samples)` is not always printed: fold whatever it wrote.
            if r.data.metadata().is_ok_and(|m| m.len() > 0) {
                let groups = &self.groups;
                let mode = *mode;
                // This perf's samples of the groups it unwinds as they need.
                let group_of = |pid: u32| {
                    by_pid
                        .get(&pid)
                        .copied()
                        .filter(|g| groups[*g].unwinding == mode)
                };
                collapse::fold(&r.data, &group_of, &labels, &mut folded)?;
            }
            let _ = std::fs::remove_file(&r.data);
        }
        let text: String = folded.iter().map(|f| f.text.as_str()).collect();
        fathom_measure::sample::charge_results(|| std::fs::write(&self.folded, &text))
            .with_context(|| format!("writing {}", self.folded.display()))?;
        let mut thread_cpu_ns: BTreeMap<String, u64> = BTreeMap::new();
        for (thread, ns) in folded.iter().flat_map(|f| &f.threads) {
            *thread_cpu_ns.entry(thread.clone()).or_default() += ns;
        }
        // The sampled processes' samples: their CPU time over a sample's period (1/hz s).
        let cpu_ns: u64 = folded.iter().map(|f| f.cpu_ns).sum();
        let samples = (cpu_ns as f64 * f64::from(self.hz) / 1e9).round() as u64;
        let processes = self
            .groups
            .iter()
            .zip(&folded)
            .map(|(g, f)| ProfiledProcess {
                label: g.label.clone(),
                pids: g.pids.clone(),
                exe: g.exe.display().to_string(),
                unwinding: g.unwinding,
                cpu_ns: f.cpu_ns,
                unnamed_pct: f.unnamed_pct(),
            })
            .collect();
        let mut problems = std::mem::take(&mut self.limits);
        problems.append(&mut self.errors);
        Ok(ProfileRecord {
            folded: self
                .folded
                .strip_prefix(&self.run_dir)
                .unwrap_or(&self.folded)
                .display()
                .to_string(),
            frequency_hz: self.hz,
            seconds,
            perf_cpu_seconds,
            samples,
            cpu_ns,
            lost,
            processes,
            thread_cpu_ns,
            engine_code: self.engine_code.clone(),
            problems,
        })
    }
}
