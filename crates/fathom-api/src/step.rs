//! The workload's side of a step: what a workload hands the driver — its clients (`Client`,
//! `Crew`, `BackgroundClient`) and how the step runs (`StepPlan`: clients, duration or count,
//! warm-up, kinds, pacing, open-loop arrivals, maintenance after, options for this step) — with
//! no part of how the driver measures it, so a workload builds against this crate and the
//! result schema alone.

use crate::kind::{Done, StepKinds};
use crate::options::Syntax;
use crate::pace::{Schedule, Spacing};
use crate::target::Maintenance;
use std::time::Duration;

/// The rate a background writer is held to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// Bytes written per second (db_bench's `--benchmark_write_rate_limit`).
    BytesPerSec(f64),
    /// Rows inserted per second (the insert benchmark's `--inserts_per_second`).
    RowsPerSec(f64),
}

impl Pace {
    pub fn per_sec(self) -> f64 {
        match self {
            Pace::BytesPerSec(r) | Pace::RowsPerSec(r) => r,
        }
    }

    /// How often the budget is refilled: db_bench's writer waits on RocksDB's
    /// `GenericRateLimiter` (refilled every 100 ms, spent in bursts); the insert benchmark's
    /// inserter sleeps after each batch until its rows are due.
    pub fn refill(self) -> Duration {
        match self {
            Pace::BytesPerSec(_) => Duration::from_millis(100),
            Pace::RowsPerSec(_) => Duration::ZERO,
        }
    }

    /// What an operation counts against the budget.
    pub fn units(self, op: &Done) -> u64 {
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
