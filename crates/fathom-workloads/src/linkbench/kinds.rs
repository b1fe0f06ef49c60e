//! LinkBench's operation kinds, as LinkBench names them in its reports: the load's bulk
//! inserts, the request phase's ten operations, and the consistency check.

use fathom_api::kind::StepKinds;

fathom_api::kinds! {
    /// Every operation of every LinkBench step.
    pub enum LinkBenchKind {
        LoadNodeBulk = ("LOAD_NODE_BULK", Load, "a bulk insert of nodes"),
        LoadLinksBulk = ("LOAD_LINKS_BULK", Load, "a bulk insert of links"),
        LoadCountsBulk = ("LOAD_COUNTS_BULK", Load, "a bulk insert of count rows"),
        AddNode = ("ADD_NODE", Insert, "addNode: one node inserted"),
        UpdateNode = ("UPDATE_NODE", Write, "updateNode"),
        DeleteNode = ("DELETE_NODE", Delete, "deleteNode"),
        GetNode = ("GET_NODE", Read, "getNode"),
        AddLink = ("ADD_LINK", Insert, "addLink with its count change, one transaction"),
        DeleteLink = ("DELETE_LINK", Delete, "deleteLink with its count change, one transaction"),
        UpdateLink = ("UPDATE_LINK", Write, "updateLink (the original: the addLink upsert)"),
        CountLink = ("COUNT_LINK", Read, "countLinks"),
        MultigetLink = ("MULTIGET_LINK", Read, "multigetLinks of one id1 and type"),
        GetLinksList = ("GET_LINKS_LIST", Scan, "getLinkList: a page of an id1's links by time"),
        /// The consistency check's one operation.
        Check = ("CHECK", Check, "the whole consistency check"),
        /// A count that drifted from its visible links, on a store whose writes run without
        /// transactions (recorded as a failed operation per pair, so the report can say how
        /// many).
        DriftedCount = ("DRIFTED_COUNT", Check, "one count that differs from its visible links"),
    }
}

use LinkBenchKind as K;

/// The load step's kinds.
pub const LOAD: &[LinkBenchKind] = &[K::LoadNodeBulk, K::LoadLinksBulk, K::LoadCountsBulk];

/// The request steps' kinds, in LinkBench's report order.
pub const REQUEST: &[LinkBenchKind] = &[
    K::AddNode,
    K::UpdateNode,
    K::DeleteNode,
    K::GetNode,
    K::AddLink,
    K::DeleteLink,
    K::UpdateLink,
    K::CountLink,
    K::MultigetLink,
    K::GetLinksList,
];

/// The check step's kinds.
pub const CHECKING: &[LinkBenchKind] = &[K::Check, K::DriftedCount];

/// A step that records `kinds`.
pub fn of(kinds: &[LinkBenchKind]) -> StepKinds {
    StepKinds::of(kinds)
}
