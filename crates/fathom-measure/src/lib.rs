//! fathom-measure: how a step is run and measured — the step driver (over the workload's
//! `Client`s and `StepPlan`, `fathom-api`'s), the per-thread recorders, the host samplers (CPU, IO, memory,
//! threads' time, waits, eBPF), cgroups, the device's limits and the merge of a child run's
//! logs. Results it produces are `fathom-schema`'s types; it judges nothing.

pub mod cgroup;
pub mod device;
pub mod driver;
pub mod held_image;
pub mod merge;
pub mod own_device;
pub mod recorder;
pub mod sample;
pub mod slow;
pub mod throttle;
pub mod tick;
pub mod unwind;
pub mod work;
