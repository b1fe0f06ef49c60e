//! fathom-core: what every engine, workload and report shares — the kv, sql and document
//! interfaces, the step driver and its per-thread recorders, the host samplers, the result model
//! on disk, and the shapes reports are made of (series of runs, tables of typed cells).

// `#[derive(Merge)]` names this crate by its name, inside it too.
extern crate self as fathom_core;

pub mod bound;
pub mod capability;
pub mod cgroup;
pub mod changepoint;
pub mod combine;
pub mod device;
pub mod doc;
pub mod driver;
pub mod family;
pub mod group;
pub mod kind;
pub mod knobs;
pub mod kv;
pub mod leftovers;
pub mod merge;
pub mod options;
pub mod pace;
pub mod profile;
pub mod recorder;
pub mod result;
pub mod retry;
pub mod rng;
pub mod sample;
pub mod secret;
pub mod sql;
pub mod stop;
pub mod store;
pub mod student;
pub mod table;
pub mod target;
pub mod tick;
pub mod units;
pub mod unwind;
pub mod verdict;
