//! Ctrl-C: the first asks the command to wind down (a run's current step finishes its records,
//! so every finished step stays readable; a served server stops), a second exits at once. The
//! command's stop token is the one thing here; the libraries are handed it.

use fathom_core::stop::Stop;

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
            std::process::exit(130);
        }
        eprintln!("\nfathom: interrupted; {doing} (Ctrl-C again to quit now)");
        asked.request();
    });
    stop
}
