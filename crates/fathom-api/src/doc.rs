//! The document family: a server speaking MongoDB's wire protocol (mongod, or FerretDB), one
//! session per client, with documents and filters written in BSON as the originals' Java and
//! Python clients send them. Workloads build the statements; engines only carry them.

use crate::target::Target;
pub use bson;
use bson::{Document, RawDocument};

/// A `find`: its filter, and the projection, sort, limit and index hint the original sends.
#[derive(Clone, Copy, Debug)]
pub struct Find<'a> {
    pub filter: &'a Document,
    pub projection: Option<&'a Document>,
    pub sort: Option<&'a Document>,
    /// Documents skipped before the first returned (LinkBench's page offset).
    pub skip: u64,
    /// At most this many documents; 0 for no limit.
    pub limit: i64,
    /// The index to use, by its keys (`hint`), as iibench and LinkbenchX force theirs.
    pub hint: Option<&'a Document>,
}

impl<'a> Find<'a> {
    pub fn new(filter: &'a Document) -> Find<'a> {
        Find {
            filter,
            projection: None,
            sort: None,
            skip: 0,
            limit: 0,
            hint: None,
        }
    }
    pub fn project(self, projection: &'a Document) -> Find<'a> {
        Find {
            projection: Some(projection),
            ..self
        }
    }
    pub fn sort(self, sort: &'a Document) -> Find<'a> {
        Find {
            sort: Some(sort),
            ..self
        }
    }
    pub fn skip(self, skip: u64) -> Find<'a> {
        Find { skip, ..self }
    }
    pub fn limit(self, limit: i64) -> Find<'a> {
        Find { limit, ..self }
    }
    pub fn hint(self, hint: &'a Document) -> Find<'a> {
        Find {
            hint: Some(hint),
            ..self
        }
    }
}

/// An `update` of one document (or of every match with `many`), inserting it when none
/// matches with `upsert`.
#[derive(Clone, Copy, Debug)]
pub struct Update<'a> {
    pub filter: &'a Document,
    /// Update operators (`$set`, `$inc`), or a whole replacement document.
    pub update: &'a Document,
    pub upsert: bool,
    pub many: bool,
}

/// A `findAndModify`: the first document `filter` matches, in `sort` order, updated by
/// `update` (removed when it is None); the document as it was before the change, projected,
/// is what the call reads (the drivers' `find_one_and_update` and `find_one_and_delete`).
#[derive(Clone, Copy, Debug)]
pub struct Modify<'a> {
    pub filter: &'a Document,
    pub sort: Option<&'a Document>,
    pub projection: Option<&'a Document>,
    /// Update operators; None removes the document.
    pub update: Option<&'a Document>,
}

impl<'a> Modify<'a> {
    /// The first match of `filter` updated by `update`, returned whole.
    pub fn update(filter: &'a Document, update: &'a Document) -> Modify<'a> {
        Modify {
            filter,
            sort: None,
            projection: None,
            update: Some(update),
        }
    }
}

/// What an update did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Updated {
    pub matched: u64,
    pub modified: u64,
    /// A document was inserted (an upsert that matched none).
    pub upserted: bool,
}

/// A secondary index of a collection, by its keys (`{price: 1, customerid: 1}`).
#[derive(Clone, Debug, PartialEq)]
pub struct Index {
    pub name: String,
    pub keys: Document,
    pub unique: bool,
}

/// What a read calls with each document returned (as the server sent it, undecoded); it
/// returns false to stop reading.
pub type DocVisit<'a> = dyn FnMut(&RawDocument) -> bool + 'a;

/// An insert that failed on a unique index (error E11000): a workload that expects it
/// (LinkBench's add of an existing link) tells it from other failures by this type.
#[derive(Debug)]
pub struct DuplicateKey(pub String);

impl std::fmt::Display for DuplicateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "duplicate key: {}", self.0)
    }
}

impl std::error::Error for DuplicateKey {}

/// True when `e`, or an error it wraps, is a duplicate key.
pub fn duplicate_key(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<DuplicateKey>())
}

/// How many documents a session's call read, wrote, matched or counted; or its error.
pub type Count = anyhow::Result<u64>;

/// One client's session. Between `begin` and `commit` (or `abort`) every call runs in the
/// session's transaction.
pub trait DocSession: Send {
    /// Inserts documents in one `insert` command; `ordered` stops at the first failure, as
    /// the drivers' default, where unordered (iibench's bulk writes) goes on.
    fn insert(&mut self, coll: &str, docs: &[Document], ordered: bool) -> Count;
    /// Runs a `find`, reading every document it returns (and every batch of its cursor);
    /// returns how many documents were read.
    fn find(&mut self, coll: &str, find: Find<'_>, visit: &mut DocVisit) -> Count;
    /// Runs an `aggregate` pipeline, reading every document it returns.
    fn aggregate(&mut self, coll: &str, pipeline: &[Document], visit: &mut DocVisit) -> Count;
    /// Runs a `distinct` of `field` over the documents `filter` matches; returns how many
    /// distinct values came back.
    fn distinct(&mut self, coll: &str, field: &str, filter: &Document) -> Count;
    fn update(&mut self, coll: &str, update: Update<'_>) -> anyhow::Result<Updated>;
    /// Several updates in one `update` command, in order, stopping at the first failure (a
    /// driver's ordered bulk write of UpdateOne models); what they did together.
    fn update_each(&mut self, coll: &str, updates: &[Update<'_>]) -> anyhow::Result<Updated>;
    /// Runs a `findAndModify`, visiting the document it found (before its change); returns
    /// how many it found, 0 or 1.
    fn find_and_modify(&mut self, coll: &str, modify: Modify<'_>, visit: &mut DocVisit) -> Count;
    /// Deletes the first document `filter` matches, or every one with `many`; returns how many.
    fn delete(&mut self, coll: &str, filter: &Document, many: bool) -> Count;
    /// Counts the documents `filter` matches.
    fn count(&mut self, coll: &str, filter: &Document) -> Count;
    /// Starts a multi-document transaction (engines without them fail).
    fn begin(&mut self) -> anyhow::Result<()>;
    fn commit(&mut self) -> anyhow::Result<()>;
    fn abort(&mut self) -> anyhow::Result<()>;
}

/// A server of the document family, holding the workload's collections in one database.
pub trait DocEngine: Target {
    fn session(&self) -> anyhow::Result<Box<dyn DocSession + '_>>;
    /// Whether the server runs multi-document transactions (a replica set's mongod does;
    /// FerretDB 1.x and a standalone mongod do not).
    fn transactions(&self) -> bool;
    /// Drops the collections (missing ones are fine), so a load starts from nothing.
    fn drop_collections(&self, colls: &[&str]) -> anyhow::Result<()>;
    /// Creates indexes on a collection (creating the collection when it is missing).
    fn create_indexes(&self, coll: &str, indexes: &[Index]) -> anyhow::Result<()>;
}
