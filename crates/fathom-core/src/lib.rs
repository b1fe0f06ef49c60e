//! fathom-core: what every engine, workload and report shares — the kv, sql and document interfaces, the step
//! driver and its per-thread recorders, the host samplers, and the result model on disk.

pub mod capability;
pub mod cgroup;
pub mod combine;
pub mod doc;
pub mod driver;
pub mod family;
pub mod interrupt;
pub mod kind;
pub mod knobs;
pub mod kv;
pub mod leftovers;
pub mod merge;
pub mod pace;
pub mod recorder;
pub mod result;
pub mod retry;
pub mod sample;
pub mod secret;
pub mod sql;
pub mod store;
pub mod target;
pub mod tick;
pub mod units;
