//! One retry policy for every workload, and the kinds of failure callers branch on. Engines
//! classify their failures: a deadlock, a lock wait timeout, a serialization failure, a write
//! conflict or a busy engine is retryable (the caller runs the operation again, as sysbench's
//! `--mysql-ignore-errors` and LinkStoreMysql do); a full disk is said as such (the runner
//! names the directory that filled); anything else is fatal and ends the step at once with the
//! engine's message.

use std::fmt;

/// Times one operation is run again in a row before its error is the step's.
pub const MAX_RETRIES: u32 = 1000;

/// What kind of failure an error is, as callers branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The operation may run again (a deadlock, a conflict, a busy engine).
    Retryable,
    /// The disk the engine writes to is full (ENOSPC, SQLite's SQLITE_FULL, PostgreSQL's
    /// disk_full).
    OutOfSpace,
    /// Anything else: the step ends.
    Fatal,
}

/// An engine's failure, classified.
#[derive(Debug)]
pub struct EngineError {
    pub failure: Failure,
    pub message: String,
}

impl EngineError {
    /// A failure the caller may retry.
    pub fn retryable(message: impl Into<String>) -> anyhow::Error {
        EngineError::classified(true, message)
    }

    /// A failure the engine classified as retryable or not.
    pub fn classified(retryable: bool, message: impl Into<String>) -> anyhow::Error {
        let failure = if retryable {
            Failure::Retryable
        } else {
            Failure::Fatal
        };
        EngineError::of(failure, message)
    }

    /// A failure of the kind `failure`.
    pub fn of(failure: Failure, message: impl Into<String>) -> anyhow::Error {
        EngineError {
            failure,
            message: message.into(),
        }
        .into()
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EngineError {}

/// True when `e`, or an error it wraps, is a retryable engine failure.
pub fn retryable(e: &anyhow::Error) -> bool {
    e.chain().any(|c| failure_of(c) == Some(Failure::Retryable))
}

/// The kind of failure one error in a chain says it is: an engine's classified failure, or an
/// OS error that says the disk is full (ENOSPC, EDQUOT).
pub fn failure_of(cause: &(dyn std::error::Error + 'static)) -> Option<Failure> {
    if let Some(e) = cause.downcast_ref::<EngineError>() {
        return Some(e.failure);
    }
    let io = cause.downcast_ref::<std::io::Error>()?;
    matches!(io.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)).then_some(Failure::OutOfSpace)
}

/// Runs `op` until it succeeds, again after each retryable failure (which `op` undoes itself
/// before it returns: a SQL client's ROLLBACK), at most `MAX_RETRIES` times; returns its value
/// and the retries. The first `AT_ONCE` retries are at once, as sysbench and LinkBench retry a
/// deadlock; after them the client backs off (`backoff`): an engine that fails a conflict
/// without waiting (WiredTiger's WT_ROLLBACK, an optimistic RocksDB commit) would otherwise be
/// asked a thousand times in a few milliseconds while the transaction it conflicts with still
/// runs, or waits for a CPU (a WiredTiger TPC-C run gave up so).
pub fn retrying<T>(mut op: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<(T, u32)> {
    let mut retries = 0;
    loop {
        match op() {
            Ok(v) => return Ok((v, retries)),
            Err(e) if retryable(&e) && retries < MAX_RETRIES => {
                backoff(retries);
                retries += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Retries in a row made at once, before backing off: a server's deadlock has waited already,
/// and MariaDB's and PostgreSQL's rarely come more than a few times in a row.
const AT_ONCE: u32 = 10;

/// The wait before retry `done + 1`: none for the first `AT_ONCE`, the CPU yielded for the
/// next three, then a sleep doubling from 10 µs to at most 5 ms (1000 retries span seconds).
fn backoff(done: u32) {
    match done {
        n if n < AT_ONCE => {}
        n if n < AT_ONCE + 3 => std::thread::yield_now(),
        n => {
            let us = (10u64 << (n - AT_ONCE - 3).min(9)).min(5_000);
            std::thread::sleep(std::time::Duration::from_micros(us));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_only_what_engines_call_retryable() {
        let mut n = 0;
        let (v, retries) = retrying(|| {
            n += 1;
            if n < 3 {
                Err(EngineError::retryable("conflict"))
            } else {
                Ok(n)
            }
        })
        .unwrap();
        assert_eq!((v, retries), (3, 2));
        let mut calls = 0;
        let e = retrying::<()>(|| {
            calls += 1;
            Err(anyhow::anyhow!("transactions need a setting"))
        })
        .unwrap_err();
        assert_eq!(calls, 1, "a fatal error is not retried: {e}");
        let wrapped = EngineError::retryable("deadlock").context("ADD_LINK");
        assert!(retryable(&wrapped));
        let full = anyhow::Error::from(std::io::Error::from_raw_os_error(libc::ENOSPC));
        let full = full.context("writing a step");
        assert_eq!(full.chain().find_map(failure_of), Some(Failure::OutOfSpace));
        assert!(!retryable(&full));
    }
}
