//! The driver's errors, classified as every family's: a duplicate key (E11000) is its own
//! type, which LinkBench's add of an existing link expects; a write conflict or a transient
//! transaction error is retryable (the workload runs the operation again); anything else
//! ends the step with the server's message.

use fathom_api::doc::DuplicateKey;
use fathom_api::retry::EngineError;
use mongodb::error::{Error, ErrorKind, WriteFailure, TRANSIENT_TRANSACTION_ERROR};

const DUPLICATE_KEY: i32 = 11000;
/// WriteConflict: another transaction changed the document first.
const WRITE_CONFLICT: i32 = 112;

/// The server's error codes in `e`: a command's, or each failed write's.
pub fn codes(e: &Error) -> Vec<i32> {
    match e.kind.as_ref() {
        ErrorKind::Command(c) => vec![c.code],
        ErrorKind::Write(WriteFailure::WriteError(w)) => vec![w.code],
        ErrorKind::InsertMany(m) => m.write_errors.iter().flatten().map(|w| w.code).collect(),
        _ => Vec::new(),
    }
}

/// The driver's error as fathom's.
pub fn classify(e: Error) -> anyhow::Error {
    let codes = codes(&e);
    if codes.contains(&DUPLICATE_KEY) {
        return DuplicateKey(e.to_string()).into();
    }
    let retryable =
        codes.contains(&WRITE_CONFLICT) || e.contains_label(TRANSIENT_TRANSACTION_ERROR);
    EngineError::classified(retryable, format!("mongodb: {e}"))
}
