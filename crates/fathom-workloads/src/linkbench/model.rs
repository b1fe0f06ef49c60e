//! LinkBench's data model (docs/workloads.md §1.1) and what a store must do with it, once per
//! engine family: the MySQL store's semantics (`LinkStoreMysql`) are the reference, so a count
//! row always equals the number of visible links of its (id1, link type).

use anyhow::Result;

/// The first link type; types are `LINK_TYPE .. LINK_TYPE + link_type_count`.
pub const LINK_TYPE: i64 = 123_456_789;
pub const NODE_TYPE: i64 = 2048;
pub const VISIBLE: i64 = 1;
pub const HIDDEN: i64 = 0;
/// Links a list query returns at most (`DEFAULT_LIMIT`).
pub const RANGE_LIMIT: i64 = 10_000;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Link {
    pub id1: i64,
    pub link_type: i64,
    pub id2: i64,
    pub visibility: i64,
    pub data: Vec<u8>,
    /// Milliseconds.
    pub time: i64,
    pub version: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    pub id: i64,
    pub node_type: i64,
    pub version: i64,
    /// Seconds.
    pub time: i64,
    pub data: Vec<u8>,
}

/// A count row as the loader writes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub id1: i64,
    pub link_type: i64,
    pub count: i64,
    pub time: i64,
    pub version: i64,
}

/// One page of `getLinkList`: the visible links of `id1` and `link_type` with
/// `time <= max_time`, newest first, skipping `offset`, at most `limit`.
#[derive(Clone, Copy, Debug)]
pub struct ListPage {
    pub id1: i64,
    pub link_type: i64,
    pub max_time: i64,
    pub offset: i64,
    pub limit: i64,
}

/// The row operations LinkStoreMysql's link writes are made of, for a store that has no one
/// statement for them (MariaDB's `INSERT ... ON DUPLICATE KEY UPDATE`): the SQL store on other
/// dialects and the document store. `add_link`, `delete_link` and `update_link` are those
/// writes over them, each run inside the store's `transaction`.
pub trait LinkRows: Sized {
    /// The link's visibility, when it exists (its row locked where the store can).
    fn visibility(&mut self, id1: i64, link_type: i64, id2: i64) -> Result<Option<i64>>;
    fn insert_link(&mut self, link: &Link) -> Result<()>;
    /// Sets an existing link's visibility, data, time and version.
    fn set_link(&mut self, link: &Link) -> Result<()>;
    /// Hides an existing link, keeping its time.
    fn hide_link(&mut self, id1: i64, link_type: i64, id2: i64) -> Result<()>;
    /// Moves the count of (id1, link_type) by `delta` (+1 or -1, never below 0) at `now`,
    /// making the row when missing.
    fn bump_count(&mut self, id1: i64, link_type: i64, delta: i64, now: i64) -> Result<()>;
    /// Runs `body` as one transaction where the store has them, rolled back when it fails.
    fn transaction<T>(&mut self, body: impl FnOnce(&mut Self) -> Result<T>) -> Result<T>;
}

/// `addLink`: inserts the link or sets the existing one, counting it when it becomes visible;
/// returns whether it existed.
pub fn add_link(s: &mut impl LinkRows, link: &Link) -> Result<bool> {
    let visible = link.visibility == VISIBLE;
    // LinkStoreMysql's order: the link's row, the count, then the existing link's data.
    s.transaction(|s| {
        let existing = s.visibility(link.id1, link.link_type, link.id2)?;
        match existing {
            None => {
                s.insert_link(link)?;
                if visible {
                    s.bump_count(link.id1, link.link_type, 1, link.time)?;
                }
                Ok(false)
            }
            Some(old) => {
                if old != VISIBLE && visible {
                    s.bump_count(link.id1, link.link_type, 1, link.time)?;
                }
                s.set_link(link)?;
                Ok(true)
            }
        }
    })
}

/// `deleteLink` (hide): hides a visible link and counts it out at `now`; returns whether it
/// was visible.
pub fn delete_link(
    s: &mut impl LinkRows,
    id1: i64,
    link_type: i64,
    id2: i64,
    now: i64,
) -> Result<bool> {
    s.transaction(|s| {
        if s.visibility(id1, link_type, id2)? != Some(VISIBLE) {
            return Ok(false);
        }
        s.hide_link(id1, link_type, id2)?;
        s.bump_count(id1, link_type, -1, now)?;
        Ok(true)
    })
}

/// `updateLink`: sets an existing link, its count following its visibility; returns whether it
/// existed.
pub fn update_link(s: &mut impl LinkRows, link: &Link) -> Result<bool> {
    s.transaction(|s| {
        let Some(v) = s.visibility(link.id1, link.link_type, link.id2)? else {
            return Ok(false);
        };
        s.set_link(link)?;
        if v != link.visibility {
            let delta = if link.visibility == VISIBLE { 1 } else { -1 };
            s.bump_count(link.id1, link.link_type, delta, link.time)?;
        }
        Ok(true)
    })
}

/// What a store does, once per engine family. Writes that change a count run in one
/// transaction with it; a deadlock or conflict is the caller's to retry.
pub trait Store: Send {
    /// Empties the node table and restarts its ids at `start` (the node loader's reset).
    fn reset_nodes(&mut self, start: i64) -> Result<()>;
    /// Inserts nodes in one statement; returns their ids (none when the engine gives none back,
    /// as the null engine does).
    fn add_nodes(&mut self, nodes: &[Node]) -> Result<Vec<i64>>;
    /// Inserts loaded links in one statement (existing ones become visible).
    fn add_links_bulk(&mut self, links: &[Link]) -> Result<()>;
    /// Writes loaded count rows in one statement.
    fn add_counts_bulk(&mut self, counts: &[Count]) -> Result<()>;
    /// `addLink`: inserts or revives the link and keeps its count; returns whether it existed.
    fn add_link(&mut self, link: &Link) -> Result<bool>;
    /// `deleteLink` (hide): returns whether a visible link was hidden.
    fn delete_link(&mut self, id1: i64, link_type: i64, id2: i64) -> Result<bool>;
    /// `updateLink` (the corrected UPDATE_LINK): changes an existing link's data, time,
    /// version and visibility, keeping the count; returns whether it existed.
    fn update_link(&mut self, link: &Link) -> Result<bool>;
    fn count_links(&mut self, id1: i64, link_type: i64) -> Result<i64>;
    /// Links of `id1` and type with these id2s, hidden ones too; returns how many were found.
    fn multiget_links(&mut self, id1: i64, link_type: i64, id2s: &[i64]) -> Result<u64>;
    /// A page of visible links; returns how many and the oldest one's (time, id2).
    fn get_link_list(&mut self, page: &ListPage) -> Result<(i64, Option<i64>)>;
    /// Adds a node; returns its new id.
    fn add_node(&mut self, node: &Node) -> Result<Option<i64>>;
    /// Returns whether the node existed with this type.
    fn update_node(&mut self, node: &Node) -> Result<bool>;
    fn delete_node(&mut self, node_type: i64, id: i64) -> Result<bool>;
    /// Returns the node's payload length when it exists with this type.
    fn get_node(&mut self, node_type: i64, id: i64) -> Result<Option<usize>>;
    /// The consistency check: (id1, type) pairs whose count row differs from their visible
    /// links (a missing row counts as 0), and the pairs checked.
    fn check_counts(&mut self) -> Result<(u64, u64)>;
    /// True when the store's writes run without transactions, so racing clients can leave a
    /// count that differs from its links (LinkbenchX on a server without them): the check
    /// then reports the drift instead of failing.
    fn counts_may_drift(&self) -> bool {
        false
    }
}
