//! RocksDB retries a flush or compaction that failed for want of space until space appears,
//! with writes stopped meanwhile: on a full disk a step would wait forever. This notices the
//! state (writes stopped after a background error, for several checks in a row) and says so
//! with the error RocksDB's LOG recorded.

use fathom_api::retry::{EngineError, Failure};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

/// Checks in a row (one per interval of a step) that find writes stopped after a background
/// error before the step is failed: a stop for too many L0 files passes within them.
const STALLED_CHECKS: u32 = 5;

/// Counts checks in a row that found writes stopped after a background error.
#[derive(Default)]
pub(super) struct Stall(AtomicU32);

impl Stall {
    /// `stopped`: the `rocksdb.is-write-stopped` property; `errors`: `rocksdb.background-errors`.
    pub(super) fn check(&self, stopped: u64, errors: u64, dir: &Path) -> anyhow::Result<()> {
        if stopped == 0 || errors == 0 {
            self.0.store(0, Ordering::Relaxed);
            return Ok(());
        }
        if self.0.fetch_add(1, Ordering::Relaxed) + 1 < STALLED_CHECKS {
            return Ok(());
        }
        let (logged, no_space) = last_error(dir);
        // RocksDB's IOError for a full device (its kNoSpace) says so only in its text: the C
        // API hands back a status as its message, without the subcode.
        let failure = if no_space {
            Failure::OutOfSpace
        } else {
            Failure::Fatal
        };
        Err(EngineError::of(
            failure,
            format!(
                "RocksDB stopped writes after {errors} background error{} and has not resumed; \
                 {logged}",
                if errors == 1 { "" } else { "s" },
            ),
        ))
    }
}

/// The last line of `DIR/LOG` that reports an error, or where to look; and whether its recent
/// lines say the device is full. The statistics RocksDB dumps into its LOG every few minutes
/// are left out: their names (`rocksdb.error.handler...`) say "error" too, and a dump after
/// the failure once hid it.
fn last_error(dir: &Path) -> (String, bool) {
    let log = dir.join("LOG");
    let text = std::fs::read(&log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text[text.len().saturating_sub(256 * 1024)..]);
    let events = || {
        text.lines().rev().filter(|l| {
            let l = l.trim();
            !l.starts_with("rocksdb.") && !l.contains(" COUNT : ") && !l.contains("** ")
        })
    };
    let no_space = events().any(|l| l.contains("No space left on device"));
    let line = events().find(|l| l.contains("error") || l.contains("Error"));
    let said = match line {
        Some(line) => format!("its LOG ({}) says: {}", log.display(), line.trim()),
        None => format!("see its LOG ({})", log.display()),
    };
    (said, no_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fails_only_after_checks_in_a_row() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("LOG"),
            "ok line\n[ERROR] Background IO error IO error: No space left on device\nlater\n",
        )
        .unwrap();
        let s = Stall::default();
        for _ in 0..STALLED_CHECKS - 1 {
            s.check(1, 1, dir.path()).unwrap();
        }
        s.check(0, 1, dir.path()).unwrap();
        for _ in 0..STALLED_CHECKS - 1 {
            s.check(1, 2, dir.path()).unwrap();
        }
        let e = s.check(1, 2, dir.path()).unwrap_err();
        assert_eq!(
            crate::failure::failure(&e),
            Some(Failure::OutOfSpace),
            "a full device is said as one"
        );
        let e = e.to_string();
        assert!(
            e.contains("No space left on device") && e.contains("2 background errors"),
            "{e}"
        );
    }

    /// A statistics dump written after the failure (as a CI run met) neither hides the full
    /// device nor stands in for the error line.
    #[test]
    fn a_statistics_dump_after_the_error_is_not_the_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("LOG"),
            "2026/11/29-19:13:38.396413 30046 [WARN] [db/db_impl/db_impl.cc:572] Shutdown flush \
             failed: IO error: No space left on device: While appending to file: 000012.sst\n\
             ** DB Stats **\n\
             rocksdb.error.handler.bg.error.count COUNT : 2\n\
             rocksdb.error.handler.autoresume.retry.count P50 : 0.000000 P95 : 0.000000 COUNT : 0 SUM : 0\n",
        )
        .unwrap();
        let (said, no_space) = last_error(dir.path());
        assert!(no_space);
        assert!(said.contains("Shutdown flush failed"), "{said}");
    }
}
