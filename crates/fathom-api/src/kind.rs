//! Operation kinds: a workload declares its kinds once, as an enum (`kinds!`), each with its
//! name (the original tool's, where it has one: `GET_LINKS_LIST`, `readrandom`'s `get`), its
//! role and what one operation is; a step lists the kinds it records (`StepKinds`), and clients
//! record operations by the enum's variants, so the recorder, summaries and reports treat kinds
//! by what they do, and no kind is a bare number.

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

/// Statements per operation by sysbench's classes: a statement returning rows is a read, one
/// changing rows a write, anything else (BEGIN, COMMIT) other. Queries per second are the
/// step's operations per second times their sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueryMix {
    pub read: f64,
    pub write: f64,
    pub other: f64,
}

impl QueryMix {
    pub fn total(&self) -> f64 {
        self.read + self.write + self.other
    }
}

/// One kind of operation as reports know it: its name, its role, what one operation is, and,
/// for an operation that is a transaction of several statements, how many of each class it
/// sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpKind {
    pub name: &'static str,
    pub role: Role,
    /// What one operation is (`fathom workloads` lists it).
    pub about: &'static str,
    /// Statements per operation (sysbench's events); `None` for one statement or call.
    pub queries: Option<QueryMix>,
}

impl OpKind {
    pub const fn new(name: &'static str, role: Role, about: &'static str) -> OpKind {
        OpKind {
            name,
            role,
            about,
            queries: None,
        }
    }
}

/// A workload's operation kinds as a type: an enum whose variants are the kinds (declared with
/// `kinds!`). Clients record an operation by its variant (`Done::of`).
pub trait Kind: Copy + 'static {
    /// Every kind, in declaration order.
    const ALL: &'static [Self];
    /// The enum's own mark (`tag_of` its path), which every `KindId` of it carries: a kind of
    /// another workload's enum at the same place is not this one's.
    const TAG: u32;
    /// The kind as reports know it.
    fn op(self) -> OpKind;
    /// The kind's place among `ALL`.
    fn id(self) -> KindId;
}

/// Declares a workload's operation kinds: an enum with, per variant, the kind's name, its role
/// and what one operation is.
///
/// ```
/// fathom_api::kinds! {
///     /// What the example's clients do.
///     pub enum ExampleKind {
///         Get = ("get", Read, "a point read of a random key"),
///         Put = ("put", Write, "a put of a random key"),
///     }
/// }
/// use fathom_api::kind::Kind;
/// assert_eq!(ExampleKind::Put.op().name, "put");
/// ```
#[macro_export]
macro_rules! kinds {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = ($kind:literal, $role:ident, $about:literal)),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// The kind's name, as reports print it.
            #[allow(dead_code)]
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $kind),+
                }
            }
        }

        impl $crate::kind::Kind for $name {
            const ALL: &'static [Self] = &[$($name::$variant),+];
            const TAG: u32 = $crate::kind::tag_of(concat!(module_path!(), "::", stringify!($name)));

            fn op(self) -> $crate::kind::OpKind {
                match self {
                    $($name::$variant => {
                        $crate::kind::OpKind::new($kind, $crate::kind::Role::$role, $about)
                    })+
                }
            }

            #[inline]
            fn id(self) -> $crate::kind::KindId {
                $crate::kind::KindId::new(<Self as $crate::kind::Kind>::TAG, self as usize)
            }
        }
    };
}

/// A kind as a `Done` carries it: its enum's mark and its place among the enum's variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindId {
    tag: u32,
    n: u16,
}

impl KindId {
    /// The id of the `n`th variant of the enum marked `tag` (for `kinds!`).
    #[doc(hidden)]
    #[inline]
    pub const fn new(tag: u32, n: usize) -> KindId {
        assert!(n < NONE as usize, "too many operation kinds");
        KindId { tag, n: n as u16 }
    }
}

/// An enum's mark: FNV-1a of its path (`kinds!` gives `module::Enum`).
pub const fn tag_of(path: &str) -> u32 {
    let bytes = path.as_bytes();
    let mut hash: u32 = 0x811c_9dc5;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u32;
        hash = hash.wrapping_mul(0x0100_0193);
        i += 1;
    }
    hash
}

/// No slot: the kind is not among the step's.
const NONE: u16 = u16::MAX;

/// The kinds one step records, in the order its reports list them, and where each of the
/// workload's kinds is recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepKinds {
    list: Vec<OpKind>,
    /// The mark of the enum the kinds are of.
    tag: u32,
    /// By kind id: the kind's position in `list`, or `NONE`.
    slots: Vec<u16>,
}

impl StepKinds {
    /// The step records `kinds`, in this order.
    pub fn of<K: Kind>(kinds: &[K]) -> StepKinds {
        let mut slots = vec![NONE; K::ALL.len()];
        for (i, k) in kinds.iter().enumerate() {
            slots[k.id().n as usize] = i as u16;
        }
        StepKinds {
            list: kinds.iter().map(|k| k.op()).collect(),
            tag: K::TAG,
            slots,
        }
    }

    /// The step records every kind of `K`.
    pub fn every<K: Kind>() -> StepKinds {
        StepKinds::of(K::ALL)
    }

    /// The same, with `kind` an operation of `mix` statements.
    pub fn with_queries<K: Kind>(mut self, kind: K, mix: QueryMix) -> StepKinds {
        if let Some(i) = self.slot(kind.id()) {
            self.list[i].queries = Some(mix);
        }
        self
    }

    /// The same, with `kind` printed as `name` (a workload file's script).
    pub fn named<K: Kind>(mut self, kind: K, name: &'static str) -> StepKinds {
        if let Some(i) = self.slot(kind.id()) {
            self.list[i].name = name;
        }
        self
    }

    /// The kinds, in the step's order.
    pub fn list(&self) -> &[OpKind] {
        &self.list
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Where kind `id` is recorded; `None` when the step does not record it (a kind of
    /// another enum included).
    #[inline]
    pub fn slot(&self, id: KindId) -> Option<usize> {
        if id.tag != self.tag {
            return None;
        }
        match self.slots.get(id.n as usize) {
            Some(&s) if s != NONE => Some(s as usize),
            _ => None,
        }
    }

    /// The statements per operation of the step's kind that sends several, if one does.
    pub fn query_mix(&self) -> Option<QueryMix> {
        self.list.iter().find_map(|k| k.queries)
    }
}

/// A client reported an operation of a kind its step does not record.
#[derive(Clone, Copy, Debug, thiserror::Error)]
#[error("an operation of kind #{} of an enum of kinds (mark {:08x}), which the step does not record", .0.n, .0.tag)]
pub struct UndeclaredKind(pub KindId);

/// What one operation was: its kind, the bytes it moved, how many times it was retried after a
/// deadlock or conflict before it succeeded, and how many rows it inserted (a batch insert is
/// one operation of many rows), and how long the client waited on another before the
/// operation began (iibench's inserter for its deleter: the original's queue wait, which its
/// latency leaves out, as this one's does). A `failed` operation ended in an error the workload
/// tolerates (LinkBench's `max_failed_requests`): it is counted apart, neither timed nor among
/// the operations. `counts_as` is how many operations the call counts for, as db_bench's
/// `FinishedOps(n)` (multireadrandom's MultiGet of 10 keys is 10, timed once); 0 is taken as 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub kind: KindId,
    pub bytes: u64,
    pub retries: u32,
    pub rows: u64,
    pub waited: std::time::Duration,
    pub failed: bool,
    pub counts_as: u32,
}

impl Done {
    /// An operation of `kind` that moved nothing, at its first try.
    pub fn of(kind: impl Kind) -> Done {
        Done {
            kind: kind.id(),
            bytes: 0,
            retries: 0,
            rows: 0,
            waited: std::time::Duration::ZERO,
            failed: false,
            counts_as: 1,
        }
    }

    /// True when the operation is of `kind`.
    pub fn is(&self, kind: impl Kind) -> bool {
        self.kind == kind.id()
    }
}

/// Kinds for the tests of this crate and of those that record kinds (the driver's, the
/// recorder's).
#[doc(hidden)]
pub mod testing {
    crate::kinds! {
        pub enum Test {
            A = ("a", Read, "a read"),
            B = ("b", Write, "a write"),
            C = ("c", Background, "a background write"),
        }
    }

    crate::kinds! {
        /// Another workload's kinds.
        pub enum Other {
            X = ("x", Read, "another workload's read"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Test;
    use super::*;

    #[test]
    fn a_step_records_its_kinds_in_its_order() {
        let kinds = StepKinds::of(&[Test::C, Test::A]);
        assert_eq!(kinds.slot(Test::C.id()), Some(0));
        assert_eq!(kinds.slot(Test::A.id()), Some(1));
        assert_eq!(kinds.slot(Test::B.id()), None);
        let names: Vec<_> = kinds.list().iter().map(|k| k.name).collect();
        assert_eq!(names, ["c", "a"]);
        assert_eq!(StepKinds::every::<Test>().len(), 3);
        let mix = QueryMix {
            read: 1.0,
            write: 2.0,
            other: 0.0,
        };
        let with = kinds.with_queries(Test::A, mix);
        assert_eq!(with.query_mix(), Some(mix));
        assert!(Done::of(Test::B).is(Test::B) && !Done::of(Test::B).is(Test::A));
    }

    /// Another enum's kind at a place this step records is not recorded as this step's.
    #[test]
    fn a_kind_of_another_enum_is_not_the_steps() {
        use super::testing::Other;
        let kinds = StepKinds::every::<Test>();
        assert_eq!(Other::X.id().n, Test::A.id().n);
        assert_eq!(kinds.slot(Test::A.id()), Some(0));
        assert_eq!(kinds.slot(Other::X.id()), None);
        assert!(!Done::of(Other::X).is(Test::A));
    }
}
