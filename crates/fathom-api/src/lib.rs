//! fathom-api: what an engine builds against, and nothing of how fathom measures or judges —
//! the kv, sql and document interfaces, the target an engine opens, its failure kinds, its
//! settings and their parsing, the figures it reports about itself, and the stop signal.

// `#[derive(Merge)]` names this crate by its name, inside it too.
extern crate self as fathom_api;

pub mod capability;
pub mod combine;
pub mod doc;
pub mod family;
pub mod knobs;
pub mod kv;
pub mod leftovers;
pub mod options;
pub mod retry;
pub mod secret;
pub mod sql;
pub mod stats;
pub mod stop;
pub mod target;
pub mod units;
