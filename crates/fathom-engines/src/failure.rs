//! Why a run failed, as a kind callers branch on (`fathom_api::retry::Failure`), from the
//! engines' own error types: an engine's classified failure, an OS error, SQLite's
//! SQLITE_FULL, RocksDB's IO error for a full device, PostgreSQL's disk_full.

use fathom_api::retry::{failure_of, Failure};

/// The kind of failure `e` is, from the first error in its chain that says: `None` when none
/// does (a fatal failure of no particular kind).
pub fn failure(e: &anyhow::Error) -> Option<Failure> {
    e.chain()
        .find_map(|cause| failure_of(cause).or_else(|| of_library(cause)))
}

/// A full disk in an engine library's own error type.
fn of_library(cause: &(dyn std::error::Error + 'static)) -> Option<Failure> {
    #[cfg(feature = "sqlite")]
    if let Some(e) = cause.downcast_ref::<rusqlite::Error>() {
        return (e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull))
            .then_some(Failure::OutOfSpace);
    }
    #[cfg(feature = "bundled-rocksdb")]
    if let Some(e) = cause.downcast_ref::<rocksdb::Error>() {
        // RocksDB's Status names its IOError's subcode kNoSpace only in its text.
        let no_space = e.kind() == rocksdb::ErrorKind::IOError
            && e.as_ref().contains("No space left on device");
        return no_space.then_some(Failure::OutOfSpace);
    }
    if let Some(e) = cause.downcast_ref::<postgres::Error>() {
        return (e.code() == Some(&postgres::error::SqlState::DISK_FULL))
            .then_some(Failure::OutOfSpace);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_said_by_its_type() {
        let io = anyhow::Error::from(std::io::Error::from_raw_os_error(libc::ENOSPC));
        assert_eq!(failure(&io.context("saving")), Some(Failure::OutOfSpace));
        let other = anyhow::Error::from(std::io::Error::from_raw_os_error(libc::EACCES));
        assert_eq!(failure(&other), None);
        let classified = fathom_api::retry::EngineError::of(Failure::OutOfSpace, "full");
        assert_eq!(failure(&classified), Some(Failure::OutOfSpace));
        #[cfg(feature = "sqlite")]
        {
            let sqlite = rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
                None,
            );
            assert_eq!(failure(&sqlite.into()), Some(Failure::OutOfSpace));
        }
    }
}
