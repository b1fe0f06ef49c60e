//! The child side of a supervised run (`fathom child-run`): it reads the run handed on its
//! standard input, runs it in this process, and says how it ended on the supervisor's pipe.

use crate::place::{Observer, Place};
use crate::supervise::{ChildRun, Outcome, REPORT_FD};
use anyhow::Context;
use fathom_api::stop::Stop;
use fathom_measure::cgroup::MemoryLimit;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::path::PathBuf;

/// Runs the run handed on standard input in this process (`fathom child-run`), stopped by
/// `stop`, and says how it ended on `REPORT_FD`; a failure is said there, not returned.
pub fn run_child(stop: Stop, observer: &mut dyn Observer) -> anyhow::Result<bool> {
    let mut report = report_pipe()?;
    let outcome = match child_run(stop, observer) {
        Ok(dir) => Outcome::Finished(dir),
        Err(e) => Outcome::Failed(format!("{e:#}")),
    };
    serde_json::to_writer(&mut report, &outcome).context("saying how the run ended")?;
    report.flush()?;
    Ok(matches!(outcome, Outcome::Finished(_)))
}

fn child_run(stop: Stop, observer: &mut dyn Observer) -> anyhow::Result<PathBuf> {
    let handed: ChildRun = serde_json::from_reader(std::io::stdin().lock())
        .context("reading the run handed on standard input")?;
    // `--metrics`: the supervisor let go of the address for this process to serve.
    if let Err(e) = crate::live::start(&handed.spec.live) {
        eprintln!("fathom: {e:#}");
    }
    let limit = handed
        .memory_group
        .as_ref()
        .map(MemoryLimit::adopt)
        .transpose()
        .context("--memory-limit")?;
    let place = Place {
        stop,
        ..handed.place
    };
    crate::runner::run_here(&handed.spec, &place, observer, limit)
}

/// The pipe a supervisor opened at `REPORT_FD`, checked to be one.
fn report_pipe() -> anyhow::Result<std::fs::File> {
    // SAFETY: fstat writes into the zeroed struct it is given; a closed descriptor fails.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let open = unsafe { libc::fstat(REPORT_FD, &mut st) } == 0;
    if !open || st.st_mode & libc::S_IFMT != libc::S_IFIFO {
        anyhow::bail!(
            "fathom child-run runs a run its supervisor hands it and reports on descriptor              {REPORT_FD}, a pipe the supervisor opens; it is not for use by hand"
        );
    }
    // SAFETY: the descriptor is open (checked above) and this process owns it from here on.
    Ok(unsafe { std::fs::File::from_raw_fd(REPORT_FD) })
}
