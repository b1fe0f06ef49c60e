//! What a workload needs of an engine beyond its family, and how an engine with its settings
//! meets it, so a mismatch is found before the first step (not after a long load) and, where
//! one setting makes it work, fathom sets it and says so.

/// Something a workload needs of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Multi-key transactions that detect conflicts (read-modify-writes that must not lose
    /// an update: LinkBench's link writes and counts, sysbench's write events on kv engines).
    Transactions,
}

impl Need {
    pub fn describe(self) -> &'static str {
        match self {
            Need::Transactions => "transactions",
        }
    }
}

/// How an engine, with the settings given, meets a need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offer {
    /// As it is.
    Yes,
    /// Only with this setting (key, value), which the user has not set otherwise.
    With(&'static str, &'static str),
    /// Not with these settings: why, naming the setting to change.
    No(String),
}

/// An engine that meets every need as it is.
pub fn offers_everything(_: Need, _: &std::collections::BTreeMap<String, String>) -> Offer {
    Offer::Yes
}
