//! Ctrl-C: the first asks the command to wind down (a run's current step finishes its records,
//! so every finished step stays readable; a served server stops), a second exits at once.

use fathom_core::interrupt;

/// A step's records are finished before a run stops.
pub const RUN: &str = "finishing the current step's records";
/// A served server is stopped before fathom exits.
pub const SERVE: &str = "stopping the server";

/// Installs the handler; the first Ctrl-C says `doing` (`RUN`, `SERVE`).
pub fn install_handler(doing: &'static str) {
    let _ = ctrlc::set_handler(move || {
        if interrupt::requested() {
            eprintln!("\nfathom: second interrupt, exiting now");
            std::process::exit(130);
        }
        eprintln!("\nfathom: interrupted; {doing} (Ctrl-C again to quit now)");
        interrupt::request();
    });
}
