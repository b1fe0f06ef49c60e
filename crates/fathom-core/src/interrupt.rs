//! One process-wide flag set by Ctrl-C (SIGINT) or SIGTERM, so the driver ends the current step
//! early and the run keeps every step that finished.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// True once the user asked to stop.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Marks the run as interrupted (the signal handler calls this; tests may too).
pub fn request() {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Clears the flag (for tests that run several steps in one process).
pub fn reset() {
    INTERRUPTED.store(false, Ordering::Relaxed);
}
