//! fathom-api: what an engine and a workload build against, and nothing of how fathom measures
//! or judges — the kv, sql and document interfaces, the target an engine opens, its failure
//! kinds, its settings and their parsing, the figures it reports about itself, the stop signal,
//! and a workload's side of a step: its clients, the step's plan, its operation kinds and pacing.

// `#[derive(Merge)]` names this crate by its name, inside it too.
extern crate self as fathom_api;

pub mod capability;
pub mod combine;
pub mod doc;
pub mod events;
pub mod family;
pub mod kind;
pub mod knobs;
pub mod kv;
pub mod leftovers;
pub mod options;
pub mod pace;
pub mod retry;
pub mod secret;
pub mod sql;
pub mod stats;
pub mod step;
pub mod stop;
pub mod target;
pub mod units;
pub mod work;
