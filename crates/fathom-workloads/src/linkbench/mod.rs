//! LinkBench (specs/workloads.md §1), being built: the pieces that must be LinkBench's own to
//! the bit come first — Java's generator, the distributions, the invertible shufflers, the
//! out-degree from `Distribution.dat` and the payload generator. The schema, load, request
//! phase and consistency check build on them.

pub mod degree;
pub mod dist;
pub mod jrand;
pub mod motif;
pub mod shuffle;
