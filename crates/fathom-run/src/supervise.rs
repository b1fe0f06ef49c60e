//! An embedded engine under a memory limit lives in fathom's own process, so the kernel's
//! out-of-memory killer would take fathom with it: no word, and no later run. Instead the run
//! goes to a process of its own, `fathom child-run`, handed the run (`ChildRun`: the resolved
//! spec, where it is written, and the memory group, made here) on its standard input; it joins
//! the limited group and runs while this process waits outside it, and says how the run ended
//! on a pipe of its own (`REPORT_FD`). A child the kernel kills is recorded as failed with the
//! cause (the group's OOM kills, peak and limit), its data directory removed, and the caller
//! goes on to the next run. A run with another C allocator (`--allocator`) gets such a process
//! too, started with the allocator preloaded.

use crate::place::{remove_dead_data_dirs, Place};
use crate::RunSpec;
use anyhow::Context;
use fathom_api::stop::Stop;
use fathom_measure::cgroup::{Handoff, MemoryLimit};
use fathom_schema::result::{now_utc, RunManifest, RunStatus};
use fathom_schema::store::{read_json, write_json_atomic, MANIFEST};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// The file descriptor a child run says how it ended on: a pipe its supervisor opened.
pub const REPORT_FD: i32 = 3;

/// A run handed to a process of its own: what `fathom child-run` reads on its standard input.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildRun {
    pub spec: RunSpec,
    pub place: Place,
    /// The group the child joins before the engine opens; its supervisor made it and removes it.
    pub memory_group: Option<Handoff>,
}

/// How a child run ended on its own, as it says on `REPORT_FD`.
#[derive(Serialize, Deserialize)]
pub(crate) enum Outcome {
    /// Its run directory.
    Finished(PathBuf),
    /// Its error, in full.
    Failed(String),
}

/// The run's result when it belongs in a process of its own: run there (this process waits),
/// or an error when it needs one and cannot have it. None: it runs here. An embedded engine
/// under a memory limit or with another allocator gets one when the place names fathom's
/// executable (`Place::launcher`).
pub fn in_own_process(spec: &RunSpec, place: &Place) -> Option<anyhow::Result<PathBuf>> {
    let own_process = spec.setup.memory_limit.is_some() || spec.setup.allocator.is_some();
    if let Some(exe) = place
        .launcher
        .as_deref()
        .filter(|_| own_process && !spec.setup.engine.server)
    {
        return Some(run_child_process(spec, place, exe));
    }
    let a = spec.setup.allocator.as_ref().filter(|a| !a.is_loaded())?;
    Some(Err(anyhow::anyhow!(
        "allocator {}: a run with it needs a process of its own, started with {} preloaded \
         (`fathom run` starts one; a caller of the library gives `Place::launcher`)",
        a.name,
        a.library
    )))
}

/// Runs `spec` in a child process of `exe` inside a fresh group limited as `spec` asks;
/// returns the run directory it made, or why it failed (recorded in its run.json when the
/// kernel killed it).
fn run_child_process(spec: &RunSpec, place: &Place, exe: &Path) -> anyhow::Result<PathBuf> {
    let limit = spec
        .setup
        .memory_limit
        .map(|bytes| MemoryLimit::create(bytes, &[]))
        .transpose()
        .context("--memory-limit")?;
    let kills_before = limit.as_ref().and_then(MemoryLimit::oom_kills).unwrap_or(0);
    let handed = ChildRun {
        spec: spec.clone(),
        place: place.clone(),
        memory_group: limit.as_ref().map(MemoryLimit::handoff),
    };
    // `--metrics`: the child serves the address while it runs.
    crate::live::pause();
    let spawned = spawn(exe, &handed, spec);
    let waited = spawned.and_then(|(mut child, said)| {
        let status = wait(&mut child, &place.stop);
        status.map(|s| (child, said, s))
    });
    crate::live::resume();
    let (child, said, status) = waited?;
    let said = said.join().unwrap_or_default();
    match serde_json::from_str::<Outcome>(&said) {
        Ok(Outcome::Finished(dir)) if status.success() => return Ok(dir),
        Ok(Outcome::Failed(error)) => anyhow::bail!("{error}"),
        _ => {}
    }
    let run_dir = run_dir_of(place, child.id());
    // A device profile's group the child made and could not remove.
    fathom_measure::throttle::remove_stale_groups();
    if place.data_dir.is_none() {
        remove_dead_data_dirs(&place.results.join(".data"));
    }
    let kills = limit
        .as_ref()
        .and_then(MemoryLimit::oom_kills)
        .unwrap_or(0)
        .saturating_sub(kills_before);
    let Some(cause) = killed(status, kills, limit.as_ref()) else {
        anyhow::bail!(
            "the run's process ended ({status}) without saying how the run went{}",
            run_dir.map_or(String::new(), |d| format!(
                "; see {}",
                d.join(MANIFEST).display()
            ))
        );
    };
    match run_dir {
        Some(dir) => record_kill(&dir, &cause, limit.as_ref())?,
        None => eprintln!("fathom: the run was killed before its run directory existed"),
    }
    anyhow::bail!("{cause}")
}

/// Starts `exe child-run` with `handed` on its standard input and the report pipe at
/// `REPORT_FD`; returns the child and a thread reading what it says there.
fn spawn(
    exe: &Path,
    handed: &ChildRun,
    spec: &RunSpec,
) -> anyhow::Result<(std::process::Child, std::thread::JoinHandle<String>)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("opening the run's report pipe");
    }
    // SAFETY: both descriptors were just opened and are owned here.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut command = Command::new(exe);
    command.arg("child-run");
    if let Some(a) = &spec.setup.allocator {
        command.env("LD_PRELOAD", a.library);
    }
    let write_fd = write_end.as_raw_fd();
    command
        .stdin(Stdio::piped())
        // Its own process group: a terminal's Ctrl-C reaches this process, which passes it on
        // once (a second one would make the child quit at once).
        .process_group(0);
    // SAFETY: prctl and dup2 are async-signal-safe; the child dies with this process, and its
    // report pipe is at REPORT_FD (dup2 leaves the copy open across exec).
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::dup2(write_fd, REPORT_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {} child-run for the run", exe.display()))?;
    drop(write_end);
    let mut stdin = child.stdin.take().expect("piped");
    serde_json::to_writer(&mut stdin, handed).context("handing the run to its process")?;
    drop(stdin);
    let said = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::fs::File::from(read_end).read_to_string(&mut text);
        text
    });
    Ok((child, said))
}

/// Waits for the child, passing a stop on to it once (as an interrupt).
fn wait(child: &mut std::process::Child, stop: &Stop) -> anyhow::Result<ExitStatus> {
    let mut passed_on = false;
    loop {
        if let Some(status) = child.try_wait().context("waiting for the run's process")? {
            return Ok(status);
        }
        if stop.requested() && !passed_on {
            // SAFETY: kill has no memory effects; the pid is our unreaped child's.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            passed_on = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Why a child that died of a signal died, in words; None when it exited on its own (its own
/// error is on stderr and in its run.json).
fn killed(status: ExitStatus, oom_kills: u64, limit: Option<&MemoryLimit>) -> Option<String> {
    let signal = status.signal()?;
    let group = limit.map_or(String::new(), |l| {
        let peak = l
            .peak_bytes()
            .map_or(String::new(), |p| format!(", peak {p} bytes"));
        format!("{}{peak}", l.describe())
    });
    Some(if oom_kills > 0 {
        format!(
            "killed by the kernel's out-of-memory killer: the run outgrew its memory limit \
             ({group}; the group counted {oom_kills} OOM kill{})",
            if oom_kills == 1 { "" } else { "s" }
        )
    } else if limit.is_some() {
        format!(
            "the run's process died of signal {signal} ({}); its memory group counted no \
             OOM kill ({group})",
            signal_name(signal)
        )
    } else {
        format!(
            "the run's process died of signal {signal} ({})",
            signal_name(signal)
        )
    })
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// The run directory the child made: the one named in `place`, else the one whose run.json
/// names the child's pid.
fn run_dir_of(place: &Place, pid: u32) -> Option<PathBuf> {
    if let Some(name) = &place.dir_name {
        let dir = place.results.join(name);
        return dir.join(MANIFEST).exists().then_some(dir);
    }
    std::fs::read_dir(&place.results)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|dir| read_json::<RunManifest>(&dir.join(MANIFEST)).is_ok_and(|m| m.pid == Some(pid)))
}

/// Marks a killed child's run failed with `cause`; its finished steps stay as they were saved.
fn record_kill(dir: &Path, cause: &str, limit: Option<&MemoryLimit>) -> anyhow::Result<()> {
    let path = dir.join(MANIFEST);
    let mut manifest: RunManifest = read_json(&path)?;
    manifest.status = RunStatus::Failed;
    manifest.error = Some(cause.to_string());
    manifest.finished_at = Some(now_utc());
    manifest.pid = None;
    if let Some((l, peak)) = limit.and_then(|l| Some((l, l.peak_bytes()?))) {
        manifest.host.memory_limit = Some(format!("{} (peak {peak} bytes)", l.describe()));
    }
    write_json_atomic(&path, &manifest)
}
