//! What one operation did inside the engine — tombstones skipped, blocks read from files —
//! where the engine counts it per thread (RocksDB's perf context), so a step's slowest
//! operations can be set against the ones that ran beside them ("Why the slowest operations
//! were slow"). A server's clients run on other processes: there, the statements the server
//! logged (`StatementLog`) are joined to the operations after the step, by the session each
//! client thread last used (`use_session`).

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

/// One statement as a server logged it (`Target::statements`): the session that sent it, when
/// it ran, its shape (its text with literals as `?`), and what it did, in the order of the
/// log's `names`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub session: u64,
    pub start_us: u64,
    pub end_us: u64,
    pub shape: String,
    pub counts: Counts,
}

/// The statements a server logged over a step, with what each counted: the work of a server's
/// operations, joined to the kept ones by session and time after the step.
#[derive(Clone, Debug, Default)]
pub struct StatementLog {
    /// What each counter counts (`rows examined`); at most `MAX_COUNTERS`.
    pub names: &'static [&'static str],
    /// Oldest first.
    pub statements: Vec<Statement>,
    /// How far a logged moment may lie from the true one, µs (PostgreSQL stamps its log to
    /// the millisecond).
    pub slack_us: u64,
}

thread_local! {
    /// The server session the calling thread's connection last sent a statement on; 0: none.
    static SESSION: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Says that the calling thread now sends its statements on server session `id` (a
/// PostgreSQL backend's pid, a MariaDB connection id), for its slow operations to be joined to
/// what the server logged of them.
pub fn use_session(id: u64) {
    SESSION.with(|s| s.set(id));
}

/// The server session the calling thread last sent a statement on; 0 when it sent none on a
/// session that says which.
pub fn session_here() -> u64 {
    SESSION.with(std::cell::Cell::get)
}
