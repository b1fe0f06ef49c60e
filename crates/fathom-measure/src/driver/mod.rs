//! The step driver: runs one step's client threads (closed loop, or open loop at a fixed
//! arrival rate), optional rate-limited background writers, excludes warmup, collects each
//! thread's recorder at interval boundaries, samples the host at the same boundaries, and turns
//! it all into interval records and a step summary.

mod calibrate;
mod hlog;
mod intervals;
mod joined;
mod probes;
mod summary;
mod tail;
#[cfg(test)]
mod tests;
mod threads;

pub use calibrate::{harness_cost, thread_cpu_time};
use intervals::Intervals;
use probes::Probes;

use crate::sample::waits::Method;
use crate::sample::Sampler;
use anyhow::Context;
use fathom_api::pace::{Schedule, Spacing};
use fathom_api::stop::Stop;
use fathom_api::target::{Maintenance, Target};
use fathom_schema::result::{IntervalRecord, StepSummary};
use fathom_schema::store::StepFiles;
use std::time::{Duration, Instant, SystemTime};
use threads::{Clock, Collected};

use fathom_api::step::{BackgroundClient, Client, Crew, LatencyFrom, Pace, StepPlan};

/// How one client's operations are paced.
#[derive(Debug, PartialEq)]
pub(crate) enum Paced<'p> {
    /// As the step's `open_loop` says, as client `k` of the `n` that follow it (closed loop
    /// without one).
    Step(usize, usize),
    /// Its share of a group's schedule, as client `k` of the group's `n`.
    Group(&'p Schedule, Spacing, usize, usize),
}

/// How client `thread` of `plan` is paced: a group's share, or the step's.
pub(crate) fn paced(plan: &StepPlan, thread: usize) -> Paced<'_> {
    let clients = plan.clients.max(1);
    let thread = thread % clients;
    // Clients in groups with a rate of their own: in all, and before this one.
    let (mut first, mut own, mut own_before) = (0, 0, 0);
    for g in &plan.groups {
        let range = first..first + g.clients;
        if let Some(rate) = &g.rate {
            if range.contains(&thread) {
                return Paced::Group(rate, g.spacing, thread - first, g.clients);
            }
            own += g.clients;
            if range.end <= thread {
                own_before += g.clients;
            }
        }
        first = range.end;
    }
    Paced::Step(thread - own_before, clients.saturating_sub(own).max(1))
}

/// Watches a step's measured span: told when it begins (after warmup) and when the step's
/// figures end (after its maintenance), so a profiler samples exactly what the figures cover.
pub trait Watch {
    fn measuring(&mut self);
    fn ended(&mut self);
}

/// Everything a step needs besides its plan.
pub struct StepRun<'a> {
    pub plan: &'a StepPlan,
    pub index: usize,
    /// The step's threads, from the workload's step object.
    pub crew: Crew<'a>,
    pub target: &'a dyn Target,
    pub sampler: &'a Sampler,
    pub interval: Duration,
    pub files: StepFiles,
    /// Called after each interval (progress display).
    pub on_interval: &'a mut dyn FnMut(&IntervalRecord),
    /// Told when the measured span begins and ends (`--profile`'s perf; a meter of the
    /// span's own).
    pub watches: Vec<&'a mut (dyn Watch + 'static)>,
    /// Asked to stop (Ctrl-C): the step ends early, its records finished.
    pub stop: &'a Stop,
    /// `--waits`: what the threads off a CPU wait on over the measured span, and how it is
    /// learnt.
    pub waits: Option<Method>,
}

/// Runs one step to completion (or interruption) and returns its summary. Interval records and
/// histograms are on disk when it returns.
pub fn run_step(mut run: StepRun<'_>) -> anyhow::Result<StepSummary> {
    let (plan, target, sampler) = (run.plan, run.target, run.sampler);
    // This thread collects and samples: fathom's own, not the engine's.
    crate::sample::threads::mark(crate::sample::threads::Whose::Harness);
    // Each thread's block IO waits are counted while delay accounting is on (the runner turns
    // it on for the run): counted for the step when it was on at both ends.
    let blkio_from_start = crate::sample::threads::delay_accounting_on();
    let started_at = fathom_schema::result::now_utc();
    let origin_wall = SystemTime::now();
    let origin = tail::Origin::now();
    let clock = Clock::start(plan, run.stop, target.work_meter());
    let clients = run.crew.clients.len();
    let threads = clients + run.crew.helpers.len();
    let mut iv = Intervals::new(
        plan,
        threads,
        sampler,
        target,
        clock.warm_end,
        &run.files.intervals,
    )?;
    let mut probes = Probes::new(std::mem::take(&mut run.watches), run.waits)?;
    // Without warmup, measurement starts before the first operation.
    if plan.warmup.is_zero() {
        span_from_here(&mut probes, &mut iv, target, sampler)?;
        clock.start_measuring();
    }
    let crew = std::mem::replace(&mut run.crew, Crew::of_clients(Vec::new()));
    let on_interval = &mut *run.on_interval;
    // At the warmup's end; a waits sampler that cannot start leaves the step without waits.
    let mut measure_from_here = || drop(probes.begin(target, sampler));
    let (interval, measure) = (run.interval, &mut measure_from_here);
    let ran: Collected = threads::run(&clock, crew, &mut iv, interval, measure, on_interval)
        .and_then(Collected::succeeded)
        .with_context(|| format!("step {} failed", plan.name))?;
    // A step with no clients (maintenance only), or one that ended during warmup, still
    // measures from here.
    if iv.samples.is_empty() {
        span_from_here(&mut probes, &mut iv, target, sampler)?;
    }
    let end_of_ops = sampler.sample();
    let (waits, sleeps) = probes.ops_ended(&run.files.offcpu)?;
    // Clients are dropped after the step's last sample, so a server backend serving one (and
    // the CPU it used) is still counted.
    drop(ran.clients);
    iv.emit(Some(&end_of_ops), on_interval)?;
    let (maintenance_seconds, end) = maintain(target, sampler, &plan.after, end_of_ops, run.stop)?;
    let (before, after) = probes.ended(target);
    hlog::write(
        &run.files.histograms,
        origin_wall,
        run.interval,
        plan,
        &iv.histograms,
        ran.background.as_ref(),
    )?;
    let measured = summary::Measured {
        plan,
        index: run.index,
        clients,
        threads,
        total: &iv.step_total,
        first: iv.samples.values().next().expect("a first sample exists"),
        end: &end,
        samples: iv.samples.values().collect(),
        ops_end: ran.ops_end,
        busy: ran.busy,
        paced: ran.paced,
        blkio: blkio_from_start && crate::sample::threads::delay_accounting_on(),
        waits,
        background: ran.background.as_ref(),
        maintenance_seconds,
        started_at,
        start_unix_ms: unix_ms(origin_wall),
        interrupted: run.stop.requested(),
        origin,
        sleeps,
    };
    Ok(measured.summary(sampler, target, &before, &after))
}

/// A wall-clock time as Unix milliseconds.
fn unix_ms(t: SystemTime) -> Option<u64> {
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(d.as_millis()).ok()
}

/// The measured span begins before the first interval: the probes begun (if they were not)
/// and the interval's first host sample taken.
fn span_from_here(
    probes: &mut Probes<'_>,
    iv: &mut Intervals<'_>,
    target: &dyn Target,
    sampler: &Sampler,
) -> anyhow::Result<()> {
    probes.begin(target, sampler)?;
    iv.samples.insert(1, sampler.sample());
    Ok(())
}

/// Runs the step's maintenance actions after its operations; returns the seconds they took
/// and the host's sample at the step's end (`end_of_ops` when there were none).
fn maintain(
    target: &dyn Target,
    sampler: &Sampler,
    actions: &[Maintenance],
    end_of_ops: crate::sample::Sample,
    stop: &Stop,
) -> anyhow::Result<(f64, crate::sample::Sample)> {
    if actions.is_empty() {
        return Ok((0.0, end_of_ops));
    }
    let start = Instant::now();
    for action in actions {
        if stop.requested() {
            break;
        }
        target.maintain(*action)?;
    }
    Ok((start.elapsed().as_secs_f64(), sampler.sample()))
}
