//! Ctrl-C: the first asks the command to wind down (a run's current step finishes its records,
//! so every finished step stays readable; a served server stops), a second exits at once. The
//! command's stop token is the one thing here; the libraries are handed it.

use fathom_api::stop::Stop;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first Ctrl-C: a command that then ends in an error ended because it was
/// interrupted, and exits 130 as a shell reports an interrupted command.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C interrupted the command.
pub fn happened() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The exit status of an interrupted command.
pub const EXIT_STATUS: i32 = 130;

/// A step's records are finished before a run stops.
pub const RUN: &str = "finishing the current step's records";
/// A served server is stopped before fathom exits.
pub const SERVE: &str = "stopping the server";

/// Installs the handler; the first Ctrl-C says `doing` (`RUN`, `SERVE`) and requests the
/// returned token's stop.
pub fn install_handler(doing: &'static str) -> Stop {
    let stop = Stop::new();
    let asked = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if asked.requested() {
            eprintln!("\nfathom: second interrupt, exiting now");
            std::process::exit(EXIT_STATUS);
        }
        eprintln!("\nfathom: interrupted; {doing} (Ctrl-C again to quit now)");
        INTERRUPTED.store(true, Ordering::Relaxed);
        asked.request();
    });
    stop
}
