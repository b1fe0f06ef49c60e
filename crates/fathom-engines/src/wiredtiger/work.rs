//! WiredTiger's per-session statistics as fathom's per-operation work counters, as MongoDB's
//! slow-operation log reads them: after each operation a client's session says how many bytes
//! it read into the cache and how long the reads took, how long it waited for room in the
//! cache (evicting pages itself, or waiting for eviction), what it wrote from the cache, and
//! how long it waited for WiredTiger's locks — so a slow operation reads as storage's or as
//! WiredTiger's own.
//!
//! The statistics are a session's, and the driver starts counting on a client's thread before
//! the client's first operation, so each session marks itself as the one its thread uses
//! (`used_here`) and a thread's counter reads the session its thread used last since it began
//! counting.

use super::api::{Cur, Sess};
use super::Lib;
use fathom_api::work::{Counts, ThreadWork, WorkMeter, MAX_COUNTERS};
use std::cell::Cell;
use std::ptr;

/// What each counter counts, as reports name it (the shim's order).
const NAMES: [&str; MAX_COUNTERS] = [
    "bytes read into the cache",
    "µs reading pages",
    "µs waiting for cache room",
    "bytes written from the cache",
    "µs waiting for locks",
];

thread_local! {
    /// The session this thread used last, and how many of its sessions have closed (a closed
    /// session's slot, and its address, can be another's next).
    static USED: Cell<(Sess, u64)> = const { Cell::new((ptr::null_mut(), 0)) };
}

/// The calling thread works with `session` now.
#[inline]
pub(super) fn used_here(session: Sess) {
    USED.with(|u| {
        let (_, closed) = u.get();
        u.set((session, closed));
    });
}

/// `session` closes: a counter on this thread no longer reads it.
pub(super) fn closed_here(session: Sess) {
    USED.with(|u| {
        if u.get().0 == session {
            forget(u);
        }
    });
}

/// The thread's last session is not read again (until it is used again).
fn forget(used: &Cell<(Sess, u64)>) {
    let (_, closed) = used.get();
    used.set((ptr::null_mut(), closed + 1));
}

/// The meter: one statistics cursor per client session.
pub(super) struct SessionWork {
    pub(super) lib: Lib,
}

impl WorkMeter for SessionWork {
    fn names(&self) -> &'static [&'static str] {
        &NAMES
    }

    fn on_this_thread(&self) -> Box<dyn ThreadWork> {
        // Only a session used from here on is read: one this thread used before may since have
        // closed on another thread.
        USED.with(forget);
        Box::new(ThreadStats {
            lib: self.lib,
            on: (ptr::null_mut(), 0),
            cursor: ptr::null_mut(),
            total: Counts::default(),
            broken: false,
        })
    }
}

/// One client thread's counters, summed over what each read cleared.
struct ThreadStats {
    lib: Lib,
    /// The session (and its thread's closed count) the cursor is open on.
    on: (Sess, u64),
    cursor: Cur,
    total: Counts,
    /// The release refused its session statistics: counting stops at zero.
    broken: bool,
}

impl ThreadWork for ThreadStats {
    fn read(&mut self, out: &mut Counts) {
        let used = USED.with(Cell::get);
        if !used.0.is_null() && !self.broken {
            if used != self.on {
                // Another session (the cursor on the old one closes with it).
                self.on = used;
                self.cursor = ptr::null_mut();
            }
            let mut op = [0i64; MAX_COUNTERS];
            // SAFETY: the session is live (it has not closed on this thread) and is this
            // thread's; the cursor is null or was opened on it; `op` holds five values.
            let rc = unsafe {
                (self.lib.api.fwt_session_work)(used.0, &mut self.cursor, op.as_mut_ptr())
            };
            if rc == 0 {
                for (t, n) in self.total.iter_mut().zip(op) {
                    *t += n.max(0) as u64;
                }
            } else {
                self.broken = true;
            }
        }
        *out = self.total;
    }
}

impl Drop for ThreadStats {
    fn drop(&mut self) {
        // The cursor closes here if its session is still open on this thread (the driver drops
        // the counter before the client), else it closed with its session.
        if !self.cursor.is_null() && USED.with(Cell::get) == self.on {
            // SAFETY: a live cursor of a live session, closed once.
            unsafe { (self.lib.api.fwt_cursor_close)(self.cursor) };
        }
    }
}
