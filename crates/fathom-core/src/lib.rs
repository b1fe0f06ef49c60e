//! fathom-core: what workloads, runs and reports share beyond the engines' interfaces
//! (`fathom-api`) — the step driver and its per-thread recorders, the host
//! samplers, the result model on disk, verdicts, and the shapes reports are made of (series of
//! runs, tables of typed cells).

pub mod bound;
pub mod cgroup;
pub mod changepoint;
pub mod device;
pub mod driver;
pub mod figures;
pub mod group;
pub mod kind;
pub mod merge;
pub mod pace;
pub mod profile;
pub mod recorder;
pub mod result;
pub mod rng;
pub mod sample;
pub mod store;
pub mod student;
pub mod table;
pub mod tick;
pub mod unwind;
pub mod verdict;
