//! Operation kinds: a workload declares each kind a step records once, with its name (the
//! original tool's, where it has one: `GET_LINKS_LIST`, `readrandom`'s `get`) and its role, so
//! the recorder, summaries and reports can treat kinds by what they do, not by their names.

use serde::{Deserialize, Serialize};

/// What an operation does, as reports group operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads one row or key (or a few by key).
    Read,
    /// Changes existing rows or keys (an update, an overwrite, a transaction that writes).
    Write,
    /// Adds new rows (a batch insert is one operation of many rows).
    Insert,
    /// Removes rows.
    Delete,
    /// Reads a range in key or index order.
    Scan,
    /// Bulk-loads a table before the measured work.
    Load,
    /// Verifies the data (LinkBench's count check).
    Check,
    /// An engine or schema action: index creation, ANALYZE, flush, compaction, a settle wait.
    Maintenance,
    /// A rate-limited writer beside the measured operations, reported apart.
    Background,
}

impl Role {
    /// True for operations that add or remove rows (the insert benchmark's per-insert steps).
    pub fn inserts_or_deletes(self) -> bool {
        matches!(self, Role::Insert | Role::Delete)
    }
}

/// One kind of operation a step records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpKind {
    pub name: &'static str,
    pub role: Role,
}

impl OpKind {
    pub const fn new(name: &'static str, role: Role) -> OpKind {
        OpKind { name, role }
    }
}

/// The index (a `Done::kind`) of the kind named `name` in `kinds`, for a workload's constants:
/// a name not in the list fails the build.
pub const fn index_of(kinds: &[OpKind], name: &str) -> usize {
    let mut i = 0;
    while i < kinds.len() {
        if same_bytes(kinds[i].name.as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("no operation kind of that name")
}

const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// What one operation was: its kind (an index into the step's kinds), the bytes it moved, how
/// many times it was retried after a deadlock or conflict before it succeeded, and how many
/// rows it inserted (a batch insert is one operation of many rows), and how long the client
/// waited on another before the operation began (iibench's inserter for its deleter: the
/// original's queue wait, which its latency leaves out, as this one's does). A `failed`
/// operation ended in an error the workload tolerates (LinkBench's `max_failed_requests`): it is
/// counted apart, neither timed nor among the operations. `counts_as` is how many operations
/// the call counts for, as db_bench's `FinishedOps(n)` (multireadrandom's MultiGet of 10 keys is
/// 10, timed once); 0 is taken as 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Done {
    pub kind: usize,
    pub bytes: u64,
    pub retries: u32,
    pub rows: u64,
    pub waited: std::time::Duration,
    pub failed: bool,
    pub counts_as: u32,
}

impl Done {
    /// An operation of the step's first kind that moved `bytes`, after `retries` retries.
    pub fn after_retries(bytes: u64, retries: u32) -> Done {
        Done {
            bytes,
            retries,
            ..Done::default()
        }
    }
}
