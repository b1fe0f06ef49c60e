//! One retry policy for every workload. Engines classify their failures: a deadlock, a lock
//! wait timeout, a serialization failure, a write conflict or a busy engine is retryable (the
//! caller runs the operation again, as sysbench's `--mysql-ignore-errors` and LinkStoreMysql
//! do); anything else is fatal and ends the step at once with the engine's message.

use std::fmt;

/// Times one operation is run again in a row before its error is the step's.
pub const MAX_RETRIES: u32 = 1000;

/// An engine's failure, classified.
#[derive(Debug)]
pub struct EngineError {
    pub retryable: bool,
    pub message: String,
}

impl EngineError {
    /// A failure the caller may retry.
    pub fn retryable(message: impl Into<String>) -> anyhow::Error {
        EngineError::classified(true, message)
    }

    /// A failure the engine classified as retryable or not.
    pub fn classified(retryable: bool, message: impl Into<String>) -> anyhow::Error {
        EngineError {
            retryable,
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
    e.chain()
        .any(|c| c.downcast_ref::<EngineError>().is_some_and(|x| x.retryable))
}

/// Runs `op` until it succeeds, again after each retryable failure (which `op` undoes itself
/// before it returns: a SQL client's ROLLBACK), at most `MAX_RETRIES` times; returns its value
/// and the retries.
pub fn retrying<T>(mut op: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<(T, u32)> {
    let mut retries = 0;
    loop {
        match op() {
            Ok(v) => return Ok((v, retries)),
            Err(e) if retryable(&e) && retries < MAX_RETRIES => {
                retries += 1;
            }
            Err(e) => return Err(e),
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
    }
}
