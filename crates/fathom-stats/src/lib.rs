//! fathom-stats: the claims users act on, as pure math over stored results — verdicts (Welch and
//! paired t on log ratios, boundaries, cost verdicts), change points and the nightly gate, what a
//! step is bound by, and the rate a find-max search reports — each with the seeded simulation
//! that measures its error rate. No sampler, no server, no OS: its tests run anywhere.

pub mod bound;
pub mod changepoint;
pub mod findmax;
pub mod rng;
pub mod steady;
pub mod student;
pub mod tail;
pub mod verdict;
