//! What one operation did inside the engine — tombstones skipped, blocks read from files —
//! where the engine counts it per thread (RocksDB's perf context), so a step's slowest
//! operations can be set against the ones that ran beside them ("Why the slowest operations
//! were slow").

/// Counters an engine may count per operation, at most.
pub const MAX_COUNTERS: usize = 5;

/// One thread's counters, cumulative, in the order of the meter's `names`; unused ones 0.
pub type Counts = [u64; MAX_COUNTERS];

/// An engine's per-thread work counters.
pub trait WorkMeter: Send + Sync {
    /// What each counter counts, as reports name it (`tombstones skipped`); at most
    /// `MAX_COUNTERS`.
    fn names(&self) -> &'static [&'static str];
    /// Starts counting on the calling thread (a client's, before its first operation) and
    /// returns its reader there.
    fn on_this_thread(&self) -> Box<dyn ThreadWork>;
}

/// The calling thread's counters, read after each operation.
pub trait ThreadWork {
    /// The counters since counting began on this thread.
    fn read(&mut self, out: &mut Counts);
}
