//! The step driver: runs one step's client threads (closed loop, or open loop at a fixed
//! arrival rate), optional rate-limited background writers, excludes warmup, collects each
//! thread's recorder at interval boundaries, samples the host at the same boundaries, and turns
//! it all into interval records and a step summary.

mod calibrate;
mod hlog;
mod intervals;
mod probes;
mod summary;
#[cfg(test)]
mod tests;
mod threads;

pub use calibrate::{harness_cost, thread_cpu_time};
use intervals::Intervals;
use probes::Probes;

use crate::pace::{Schedule, Spacing};
use crate::sample::waits::Method;
use crate::sample::Sampler;
use anyhow::Context;
use fathom_api::options::Syntax;
use fathom_api::stop::Stop;
use fathom_api::target::{Maintenance, Target};
use fathom_schema::kind::StepKinds;
use fathom_schema::result::{IntervalRecord, StepSummary};
use fathom_schema::store::StepFiles;
use std::time::{Duration, Instant, SystemTime};
use threads::{Clock, Collected};

pub use fathom_schema::kind::Done;

/// The rate a background writer is held to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// Bytes written per second (db_bench's `--benchmark_write_rate_limit`).
    BytesPerSec(f64),
    /// Rows inserted per second (the insert benchmark's `--inserts_per_second`).
    RowsPerSec(f64),
}

impl Pace {
    fn per_sec(self) -> f64 {
        match self {
            Pace::BytesPerSec(r) | Pace::RowsPerSec(r) => r,
        }
    }

    /// How often the budget is refilled: db_bench's writer waits on RocksDB's
    /// `GenericRateLimiter` (refilled every 100 ms, spent in bursts); the insert benchmark's
    /// inserter sleeps after each batch until its rows are due.
    fn refill(self) -> Duration {
        match self {
            Pace::BytesPerSec(_) => Duration::from_millis(100),
            Pace::RowsPerSec(_) => Duration::ZERO,
        }
    }

    /// What an operation counts against the budget.
    fn units(self, op: &Done) -> u64 {
        match self {
            Pace::BytesPerSec(_) => op.bytes,
            Pace::RowsPerSec(_) => op.rows,
        }
    }
}

/// One client thread's source of work: generates and performs one operation per call.
pub trait Client: Send {
    /// Performs the next operation; `None` when this client has no more work.
    fn next(&mut self) -> anyhow::Result<Option<Done>>;

    /// The driver calls no more `next` (the client is done, failed, or the step ended): a
    /// client that another waits on (iibench's inserter and its deleter) lets it go here.
    fn stopped(&mut self) {
        // Nothing to let go of by default.
    }
}

/// A client that runs beside the step's clients, its operations reported apart.
pub struct BackgroundClient<'a> {
    pub client: Box<dyn Client + 'a>,
    /// Held to its share of the step's background pace (the paced clients share it evenly);
    /// otherwise it runs as fast as it goes (iibench's deleter, which its inserter paces).
    pub paced: bool,
    /// The step ends when every background client that `ends_step` has finished (iibench's
    /// query steps last until the inserters have written their rows, and their deleters have
    /// followed), rather than on a duration or an operation count.
    pub ends_step: bool,
}

/// A step's threads by role, as the workload's step object hands them out.
pub struct Crew<'a> {
    /// The step's clients: its `clients` figure counts them.
    pub clients: Vec<Box<dyn Client + 'a>>,
    /// Threads whose operations count in the step as the clients' do, not counted as clients
    /// (iibench's deleters, one beside each client's inserter).
    pub helpers: Vec<Box<dyn Client + 'a>>,
    /// Clients beside the step's, their operations reported apart.
    pub background: Vec<BackgroundClient<'a>>,
}

impl<'a> Crew<'a> {
    /// Clients alone, no helpers and no background.
    pub fn of_clients(clients: Vec<Box<dyn Client + 'a>>) -> Crew<'a> {
        Crew {
            clients,
            helpers: Vec::new(),
            background: Vec::new(),
        }
    }
}

/// Open-loop arrivals for a step.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpenLoop {
    /// Total intended operations per second, shared evenly among the clients.
    pub ops_per_sec: f64,
    pub spacing: Spacing,
    /// One arrival stream and queue for all clients, each idle client taking the next
    /// arrival (LinkbenchX's requesters); otherwise each client has its own stream.
    pub shared: bool,
    /// Where an operation's latency starts.
    pub latency_from: LatencyFrom,
}

/// Where an open-loop operation's latency is measured from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LatencyFrom {
    /// Its intended start: time queued behind a late operation counts (no coordinated
    /// omission). fathom's `--rate`.
    #[default]
    Arrival,
    /// When it really started: the service time only, as LinkBench's throttled requesters
    /// measure (the queueing delay is still recorded apart).
    Start,
}

/// Some of a step's clients, paced together (readers beside a rate-limited writer).
#[derive(Clone, Debug, PartialEq)]
pub struct ClientGroup {
    /// How many of the step's clients: the first group's come first.
    pub clients: usize,
    /// Their arrivals together, shared evenly among them (open loop, latency from the
    /// intended start); `None`: they follow the step's `open_loop`, or run closed loop.
    pub rate: Option<Schedule>,
    pub spacing: Spacing,
}

/// How one client's operations are paced.
#[derive(Debug, PartialEq)]
pub(crate) enum Paced<'p> {
    /// As the step's `open_loop` says, as client `k` of the `n` that follow it (closed loop
    /// without one).
    Step(usize, usize),
    /// Its share of a group's schedule, as client `k` of the group's `n`.
    Group(&'p Schedule, Spacing, usize, usize),
}

/// Options a step adds after the setup's, in one engine's own options syntax (benchmark.sh
/// loads fillseq with a vector memtable): the database is opened with them before the step and
/// without them before the next, untimed, on an engine whose options are in that syntax.
#[derive(Clone, Debug, PartialEq)]
pub struct StepOptions {
    pub syntax: Syntax,
    pub text: String,
}

/// How a step runs, independent of what its operations are: what every workload may use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepPlan {
    pub name: String,
    /// Client threads (0 for a step that only performs maintenance).
    pub clients: usize,
    /// Measured duration after warmup; `None` for a step that ends on an operation count (or
    /// when its background clients that end it are done).
    pub duration: Option<Duration>,
    /// Operations each client performs, warmup included; `None` for no count limit.
    pub ops_per_client: Option<u64>,
    /// Time at the start whose operations are not recorded.
    pub warmup: Duration,
    /// The operation kinds the step records.
    pub kinds: StepKinds,
    /// The pace of the background writers together (their clients come from the workload).
    pub background: Option<Pace>,
    pub open_loop: Option<OpenLoop>,
    /// Clients with a pace of their own (a workload file's client groups), the step's first
    /// clients in order; the others follow `open_loop`.
    pub groups: Vec<ClientGroup>,
    /// Maintenance after the operations, charged to the step.
    pub after: Vec<Maintenance>,
    /// Close the database and open it again before the step, untimed: db_bench runs each step
    /// as a process of its own, so its caches start cold and closing flushes what no WAL
    /// holds. Embedded engines only.
    pub reopen: bool,
    /// Options the database is opened with for this step alone. Embedded engines only.
    pub engine_options: Vec<StepOptions>,
}

impl StepPlan {
    /// Whether clients run the step for a time (a request phase), not a fixed amount of work
    /// (a load) or no clients at all (maintenance): what a rate and a find-max search apply to.
    pub fn runs_for_a_time(&self) -> bool {
        self.clients > 0 && self.duration.is_some()
    }

    /// How long a timed step lasts, warmup included; `None` for one that ends on a count.
    pub fn timed(&self) -> Option<Duration> {
        self.duration.map(|d| d + self.warmup)
    }

    /// How client `thread` is paced: a group's share, or the step's.
    pub(crate) fn paced(&self, thread: usize) -> Paced<'_> {
        let clients = self.clients.max(1);
        let thread = thread % clients;
        // Clients in groups with a rate of their own: in all, and before this one.
        let (mut first, mut own, mut own_before) = (0, 0, 0);
        for g in &self.groups {
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

    /// The operations per second meant to arrive `t` seconds after the warmup: the groups'
    /// schedules and the step's open loop (if any client follows it); `None` in closed loop.
    pub fn intended_rate(&self, t: f64) -> Option<f64> {
        let paced: usize = self
            .groups
            .iter()
            .filter(|g| g.rate.is_some())
            .map(|g| g.clients)
            .sum();
        let step = self
            .open_loop
            .filter(|_| paced < self.clients)
            .map(|o| o.ops_per_sec);
        let groups = self.groups.iter().filter_map(|g| g.rate.as_ref());
        let rates: Vec<f64> = groups.map(|r| r.at(t)).chain(step).collect();
        (!rates.is_empty()).then(|| rates.iter().sum())
    }

    /// The operations per second meant to arrive over the measured span, on average.
    pub fn mean_intended_rate(&self, seconds: f64) -> Option<f64> {
        let groups: f64 = (self.groups.iter())
            .filter_map(|g| g.rate.as_ref())
            .map(|r| r.mean(seconds))
            .sum();
        let step = self.intended_rate(0.0)?
            - (self.groups.iter())
                .filter_map(|g| g.rate.as_ref())
                .map(|r| r.at(0.0))
                .sum::<f64>();
        Some(groups + step)
    }

    /// The options the step adds on an engine whose options are in `syntax`, if any.
    pub fn options_for(&self, syntax: Syntax) -> Option<&str> {
        self.engine_options
            .iter()
            .find(|o| o.syntax == syntax)
            .map(|o| o.text.as_str())
    }
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
    let clock = Clock::start(plan, run.stop);
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
    let waits = probes.ops_ended(&run.files.offcpu)?;
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
