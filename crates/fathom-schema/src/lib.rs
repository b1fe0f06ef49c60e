//! fathom-schema: the result model on disk and every type it stores — a run's manifest, its
//! steps' summaries and intervals, latency percentiles, profiles, threads' time and waits, device limits — with the run directory's
//! layout, the series runs group into, the typed cells of a table and the table of step
//! figures. Pure data: no sampler, no driver, no statistics, so a change to how something is
//! measured is not a change to the format.

pub mod figures;
pub mod group;
pub mod latency;
pub mod profile;
pub mod result;
pub mod store;
pub mod table;
