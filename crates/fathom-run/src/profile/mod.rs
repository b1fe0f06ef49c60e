//! `--profile`: where each timed step's CPU went. Before a step, perf attaches (events off)
//! to the processes doing its work — fathom's own, and a server's processes grouped by
//! executable, each unwound as its executable allows; the driver switches the events on when
//! the measured span begins and off when the step's figures end; then the samples are folded
//! into `steps/NN-step.folded` and described by the step's `ProfileRecord`.

mod collapse;
mod perf;
mod unwind;

use anyhow::Context;
use fathom_core::driver::Watch;
use fathom_core::profile::{ProfileRecord, ProfiledProcess, Unwinding, FATHOM};
use fathom_core::sample::process::with_descendants;
use perf::Recording;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Samples per second per CPU unless `--profile-hz` says: about 1% of one CPU's time in the
/// kernel's sampling and perf's writing (docs/performance.md).
pub const DEFAULT_HZ: u32 = 99;
/// The highest `--profile-hz` taken (the kernel throttles far above it anyway).
pub const MAX_HZ: u32 = 5000;

/// Checks that perf runs and may sample this user's processes; the error names the fix.
pub fn check_perf() -> anyhow::Result<()> {
    let version = std::process::Command::new("perf").arg("--version").output();
    if !version.is_ok_and(|o| o.status.success()) {
        anyhow::bail!(
            "profiles need Linux perf, which is not installed or does not run: \
             `scripts/setup.sh --profile` installs it (Debian's linux-perf)"
        );
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
        .unwrap_or(2);
    // SAFETY: geteuid has no preconditions.
    if paranoid > 2 && unsafe { libc::geteuid() } != 0 {
        anyhow::bail!(
            "perf may not sample processes here (kernel.perf_event_paranoid is {paranoid}); \
             allow it for your processes with `sudo sysctl kernel.perf_event_paranoid=2` \
             (1 to see kernel frames too), or run fathom as root"
        );
    }
    Ok(())
}

/// Processes sampled by one perf: one executable's.
struct Group {
    label: String,
    pids: Vec<u32>,
    exe: PathBuf,
    unwinding: Unwinding,
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
        let mut limits = Vec::new();
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok());
        // SAFETY: geteuid has no preconditions.
        if paranoid.is_some_and(|p| p > 1) && unsafe { libc::geteuid() } != 0 {
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
            engine_code: engine.code.iter().map(|c| c.to_string()).collect(),
            server,
            limits,
            scratch,
            outside,
        })
    }

    /// The processes to sample now, one group per executable: fathom's first.
    fn groups(&self) -> Vec<Group> {
        let mut by_exe: BTreeMap<PathBuf, Vec<u32>> = BTreeMap::new();
        for pid in with_descendants(&self.server) {
            if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) {
                by_exe.entry(exe).or_default().push(pid);
            }
        }
        let own = std::env::current_exe().unwrap_or_default();
        std::iter::once((own, vec![std::process::id()]))
            .chain(by_exe)
            .enumerate()
            .map(|(i, (exe, pids))| Group {
                label: if i == 0 {
                    FATHOM.to_string()
                } else {
                    exe.file_name()
                        .map_or("server".into(), |n| n.to_string_lossy().into_owned())
                },
                unwinding: unwind::unwinding(&exe),
                pids,
                exe,
            })
            .collect()
    }

    /// Attaches perf, events off, for step `index` named `step` of the run in `run_dir`.
    pub fn start(&self, run_dir: &Path, index: usize, step: &str) -> anyhow::Result<Session> {
        let folded = fathom_core::store::step_file(run_dir, index, step, "folded");
        let mut recordings = Vec::new();
        for (i, g) in self.groups().into_iter().enumerate() {
            let data = self.scratch.join(format!("{index:02}-{i}.perf"));
            let r = Recording::start(&g.pids, g.unwinding, self.hz, data, self.outside.as_deref())
                .with_context(|| format!("--profile: sampling {} ({:?})", g.label, g.pids))?;
            recordings.push((g, r));
        }
        Ok(Session {
            recordings,
            errors: Vec::new(),
            run_dir: run_dir.to_path_buf(),
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
    recordings: Vec<(Group, Recording)>,
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
        for (g, r) in &mut self.recordings {
            if let Err(e) = r.enable() {
                self.errors.push(format!("{}: {e:#}", g.label));
            }
        }
    }

    fn ended(&mut self) {
        for (g, r) in &mut self.recordings {
            if let Err(e) = r.disable() {
                self.errors.push(format!("{}: {e:#}", g.label));
            }
        }
    }
}

impl Session {
    /// Stops perf, folds the samples into the step's `.folded` file and describes them.
    pub fn finish(mut self) -> anyhow::Result<ProfileRecord> {
        let mut text = String::new();
        let mut processes = Vec::new();
        let (mut samples, mut cpu_ns, mut lost, mut seconds) = (0, 0, 0, 0.0f64);
        for (g, r) in &mut self.recordings {
            let log = r.stop()?;
            seconds = seconds.max(r.seconds);
            let written = perf::samples_written(&log);
            lost += perf::lost(&r.data).unwrap_or(0);
            let folded = if written > 0 {
                collapse::fold(&r.data, &g.label)?
            } else {
                collapse::Folded {
                    text: String::new(),
                    cpu_ns: 0,
                    unnamed_pct: 0.0,
                }
            };
            let _ = std::fs::remove_file(&r.data);
            samples += written;
            cpu_ns += folded.cpu_ns;
            text += &folded.text;
            processes.push(ProfiledProcess {
                label: g.label.clone(),
                pids: g.pids.clone(),
                exe: g.exe.display().to_string(),
                unwinding: g.unwinding,
                cpu_ns: folded.cpu_ns,
                unnamed_pct: folded.unnamed_pct,
            });
        }
        fathom_core::sample::charge_results(|| std::fs::write(&self.folded, &text))
            .with_context(|| format!("writing {}", self.folded.display()))?;
        let stacks = fathom_core::profile::Stacks::parse(&text)?;
        let mut thread_cpu_ns: BTreeMap<String, u64> = BTreeMap::new();
        for (stack, count) in &stacks.lines {
            if let Some(t) = stack.get(1) {
                *thread_cpu_ns.entry(t.clone()).or_default() += count;
            }
        }
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
