//! The harness's own cost per operation, measured by driving a client built on the null
//! engine with the same loop and recorder as a real step.

use super::Client;
use crate::recorder::Recorder;
use crate::tick::Tick;
use crate::work::WorkTrack;
use fathom_api::kind::StepKinds;
use fathom_api::work::WorkMeter;
use std::time::Duration;

/// CPU time of the calling thread.
pub fn thread_cpu_time() -> Duration {
    Duration::from_nanos(crate::tick::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID))
}

/// The harness's own CPU nanoseconds per operation: `client` (built on the null engine) is
/// driven by the same loop and recorder as a real step for about `budget`, or `max_ops`,
/// reading the real engine's work counters after each operation as a step's clients do.
pub fn harness_cost(
    mut client: Box<dyn Client + '_>,
    kinds: &StepKinds,
    (budget, max_ops): (Duration, Option<u64>),
    work: Option<&dyn WorkMeter>,
) -> anyhow::Result<Option<f64>> {
    let mut rec = Recorder::new(kinds.len());
    let mut work = work.map(|m| WorkTrack::start(m, kinds.len()));
    let cpu_start = thread_cpu_time();
    // The clock the client loops read (`Tick`), so the cost is theirs.
    let start = Tick::now();
    let mut prev = start;
    let mut n = 0u64;
    while prev.since(start) < budget && max_ops.is_none_or(|m| n < m) {
        let Some(op) = client.next()? else { break };
        let end = Tick::now();
        work.iter_mut().for_each(WorkTrack::took);
        rec.record_done(kinds, &op, (end.since(prev), end), work.as_mut())?;
        prev = end;
        n += 1;
    }
    let cpu = thread_cpu_time().saturating_sub(cpu_start);
    std::hint::black_box(&rec);
    Ok((n > 0).then(|| cpu.as_nanos() as f64 / n as f64))
}
