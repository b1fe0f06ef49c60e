//! An embedded engine under a memory limit lives in fathom's own process, so the kernel's
//! out-of-memory killer would take fathom with it: no word, and no later run. Instead the run
//! goes to a child process of fathom's own (the same command line, told which run it is), which
//! joins the limited group while this process waits outside it. A child the kernel kills is
//! recorded as failed with the cause (the group's OOM kills, peak and limit), its data directory
//! removed, and the caller goes on to the next run. A run with another C allocator
//! (`--allocator`) gets such a process too, started with the allocator preloaded.

use crate::runner::{remove_dead_data_dirs, Place};
use crate::RunSpec;
use anyhow::Context;
use fathom_core::cgroup::MemoryLimit;
use fathom_core::interrupt;
use fathom_core::result::{now_utc, RunManifest, RunStatus};
use fathom_core::store::{read_json, write_json_atomic, MANIFEST};
use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// The environment variable that hands the limited group to the child (`MemoryLimit::handoff`).
const GROUP_ENV: &str = "FATHOM_MEMORY_GROUP";

/// The group this process was handed by a supervising fathom, joined; None when it was not.
pub fn adopted() -> anyhow::Result<Option<MemoryLimit>> {
    let Some(text) = std::env::var_os(GROUP_ENV) else {
        return Ok(None);
    };
    std::env::remove_var(GROUP_ENV);
    let limit = MemoryLimit::adopt(&text.to_string_lossy()).context("--memory-limit")?;
    Ok(Some(limit))
}

/// The command line that runs `spec` alone in a child process, when it should: an embedded
/// engine under a memory limit or with another allocator, with the caller able to relaunch it
/// (the child itself is given no `relaunch`).
fn relaunch<'p>(spec: &RunSpec, place: &'p Place) -> Option<&'p [OsString]> {
    let own_process = spec.setup.memory_limit.is_some() || spec.setup.allocator.is_some();
    place
        .relaunch
        .as_deref()
        .filter(|_| own_process && !spec.setup.engine.server)
}

/// The run's result when it belongs in a process of its own: run there (this process waits),
/// or an error when it needs one and cannot have it. None: it runs here.
pub fn in_own_process(spec: &RunSpec, place: &Place) -> Option<anyhow::Result<PathBuf>> {
    if let Some(args) = relaunch(spec, place) {
        return Some(run_child(spec, place, args));
    }
    let a = spec.setup.allocator.as_ref().filter(|a| !a.is_loaded())?;
    Some(Err(anyhow::anyhow!(
        "allocator {}: a run with it needs a process of its own, started with {} preloaded \
         (`fathom run` starts one; a caller of the library gives `Place::relaunch`)",
        a.name,
        a.library
    )))
}

/// Runs the child `args` describe inside a fresh group limited as `spec` asks; returns the run
/// directory it made, or why it failed (recorded in its run.json when the kernel killed it).
fn run_child(spec: &RunSpec, place: &Place, args: &[OsString]) -> anyhow::Result<PathBuf> {
    let limit = spec
        .setup
        .memory_limit
        .map(|bytes| MemoryLimit::create(bytes, &[]))
        .transpose()
        .context("--memory-limit")?;
    let kills_before = limit.as_ref().and_then(MemoryLimit::oom_kills).unwrap_or(0);
    let exe = std::env::current_exe().context("finding fathom's own executable")?;
    let mut command = Command::new(&exe);
    command.args(args);
    if let Some(limit) = &limit {
        command.env(GROUP_ENV, limit.handoff());
    }
    if let Some(a) = &spec.setup.allocator {
        command.env("LD_PRELOAD", a.library);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // Its own process group: a terminal's Ctrl-C reaches this process, which passes it on
        // once (a second one would make the child quit at once).
        .process_group(0);
    // SAFETY: prctl is async-signal-safe; the child dies with this process.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {} for the run", exe.display()))?;
    let status = wait(&mut child)?;
    let mut said = String::new();
    if let Some(mut out) = child.stdout.take() {
        use std::io::Read;
        let _ = out.read_to_string(&mut said);
    }
    if status.success() {
        return Ok(PathBuf::from(said.trim()));
    }
    let run_dir = run_dir_of(place, child.id());
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
            "the run failed ({status}); its error is above{}",
            run_dir.map_or(String::new(), |d| format!(
                " and in {}",
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

/// Waits for the child, passing an interrupt on to it once.
fn wait(child: &mut std::process::Child) -> anyhow::Result<ExitStatus> {
    let mut passed_on = false;
    loop {
        if let Some(status) = child.try_wait().context("waiting for the run's process")? {
            return Ok(status);
        }
        if interrupt::requested() && !passed_on {
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
