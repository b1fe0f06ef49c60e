//! A step's threads: the client threads (closed loop, or open loop from their own arrivals or
//! one shared queue), the background clients (rate-limited or following), and the collector
//! on the calling thread, which moves the interval boundaries, samples the host at each and
//! gathers every thread's recorder snapshot into the step's intervals.

use super::intervals::Intervals;
use super::{BackgroundClient, Client, Crew, LatencyFrom, Pace, Paced, StepPlan};
use crate::recorder::Recorder;
use crate::sample::threads::Whose;
use crate::tick::Tick;
use crate::work::WorkTrack;
use fathom_api::pace::{sleep_until, Arrivals, UnitRate};
use fathom_api::stop::Stop;
use fathom_api::work::WorkMeter;
use fathom_schema::result::IntervalRecord;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// The shared clock of a step's threads.
pub(super) struct Clock<'p> {
    pub(super) plan: &'p StepPlan,
    pub(super) warm_end: Instant,
    deadline: Option<Instant>,
    /// The current interval: 0 during warmup, then 1, 2, ...
    epoch: AtomicUsize,
    /// The step ends: its time is up, a client failed, or its background ended it.
    stop: AtomicBool,
    /// The run was asked to stop (Ctrl-C).
    asked: &'p Stop,
    /// With one queue, the whole step's arrivals come from one stream at the total rate.
    shared: Option<Mutex<Arrivals>>,
    /// The engine's per-operation work counters, read by each client after each operation.
    work: Option<&'p dyn WorkMeter>,
}

impl<'p> Clock<'p> {
    /// The step's clock, starting now. The operations' clock is set up first (calibrating
    /// it takes about 20 ms), not during the first operation.
    pub(super) fn start(
        plan: &'p StepPlan,
        asked: &'p Stop,
        work: Option<&'p dyn WorkMeter>,
    ) -> Clock<'p> {
        crate::tick::init();
        let now = Instant::now();
        let warm_end = now + plan.warmup;
        Clock {
            plan,
            warm_end,
            deadline: plan.duration.map(|d| warm_end + d),
            epoch: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            asked,
            shared: plan
                .open_loop
                .filter(|o| o.shared)
                .map(|o| Mutex::new(Arrivals::new(o.ops_per_sec, o.spacing, now, 1))),
            work,
        }
    }

    /// True once the step is to end, for any reason.
    fn ending(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.asked.requested()
    }

    /// Measurement begins now (no warmup): interval 1 starts.
    pub(super) fn start_measuring(&self) {
        self.epoch.store(1, Ordering::Relaxed);
    }
}

enum Msg {
    Snapshot {
        thread: usize,
        epoch: usize,
        rec: Recorder,
    },
    /// A thread's operation spanned these intervals whole: it finished nothing in them, and
    /// holds them back no longer.
    Spanned {
        thread: usize,
        epochs: std::ops::Range<usize>,
    },
    Final {
        thread: usize,
        epoch: usize,
        rec: Recorder,
        busy: Duration,
        /// Time it slept until its operations' intended starts (open loop), if paced.
        paced: Option<Duration>,
        ended: Instant,
    },
    Failed {
        thread: usize,
        error: anyhow::Error,
    },
}

/// When each operation of one client is meant to start.
enum Starts<'c> {
    /// Closed loop: when the previous one ended.
    Closed,
    /// Open loop, this client's own arrivals.
    Own(Arrivals),
    /// Open loop, the next arrival of the step's one queue.
    Shared(&'c Mutex<Arrivals>),
}

impl<'c> Starts<'c> {
    fn of(clock: &'c Clock<'_>, thread: usize) -> Starts<'c> {
        let paced = super::paced(clock.plan, thread);
        let starts = match (paced, clock.plan.open_loop, &clock.shared) {
            (Paced::Step(..), Some(_), Some(queue)) => Starts::Shared(queue),
            (Paced::Step(k, n), Some(o), None) => Starts::Own(Arrivals::staggered(
                o.ops_per_sec / n as f64,
                o.spacing,
                Instant::now(),
                (k, n),
            )),
            (Paced::Step(..), None, _) => Starts::Closed,
            (Paced::Group(rate, spacing, k, n), ..) => Starts::Own(Arrivals::scheduled(
                rate.clone(),
                spacing,
                (Instant::now(), clock.warm_end),
                (k, n),
            )),
        };
        if matches!(starts, Starts::Own(_)) {
            // Wake-up lateness counts as latency in open loop: ask the kernel for 1 µs
            // timer slack instead of the default 50 µs.
            // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only the calling thread.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
        }
        starts
    }

    fn next(&mut self) -> Option<Instant> {
        match self {
            Starts::Closed => None,
            Starts::Own(a) => Some(a.next_start()),
            Starts::Shared(q) => Some(q.lock().unwrap_or_else(|p| p.into_inner()).next_start()),
        }
    }
}

/// Where a client's loop stood when it ended.
struct Ended {
    rec: Recorder,
    epoch: usize,
    /// When its first measured operation started.
    measured_from: Option<Tick>,
    /// Measured time it slept until its operations' intended starts; `None` in closed loop.
    paced: Option<Duration>,
}

/// At an interval boundary the thread saw (`epochs.end`), hands in what it recorded in the
/// interval it was in (`epochs.start`), and marks those its one operation spanned whole.
#[cold]
fn hand_in(
    thread: usize,
    tx: &mpsc::Sender<Msg>,
    rec: &mut Recorder,
    epochs: std::ops::Range<usize>,
) {
    let rec = rec.take();
    let _ = tx.send(Msg::Snapshot {
        thread,
        epoch: epochs.start,
        rec,
    });
    if epochs.end > epochs.start + 1 {
        let epochs = epochs.start + 1..epochs.end;
        let _ = tx.send(Msg::Spanned { thread, epochs });
    }
}

/// One client's loop: an operation at a time until the step ends, its recorder handed to the
/// collector at each interval boundary. Everything the loop touches per operation is a local.
fn client_loop(
    thread: usize,
    client: &mut dyn Client,
    clock: &Clock<'_>,
    tx: &mpsc::Sender<Msg>,
    ended: &mut Ended,
    mut work: Option<WorkTrack>,
) -> anyhow::Result<()> {
    let mut starts = Starts::of(clock, thread);
    let from_real_start = clock
        .plan
        .open_loop
        .is_some_and(|o| o.latency_from == LatencyFrom::Start);
    let max_ops = clock.plan.ops_per_client;
    let kinds = &clock.plan.kinds;
    let deadline = clock.deadline.map(Tick::from_instant);
    let rec = &mut ended.rec;
    let mut my_epoch = 0usize;
    let mut measured_from = None;
    let mut done = 0u64;
    let mut prev = Tick::now();
    let result = loop {
        if clock.ending() {
            break Ok(());
        }
        let epoch = clock.epoch.load(Ordering::Relaxed);
        if epoch != my_epoch {
            hand_in(thread, tx, rec, my_epoch..epoch);
            my_epoch = epoch;
            prev = Tick::now();
        }
        if max_ops.is_some_and(|n| done >= n) {
            break Ok(());
        }
        // Closed loop: an operation starts when the previous one ended (one clock read per
        // operation, as db_bench measures). Open loop: at its intended start, so time spent
        // queued behind a slow operation counts as latency.
        let start = match starts.next() {
            Some(at) => {
                if my_epoch >= 1 {
                    let ahead = at.saturating_duration_since(Instant::now());
                    *ended.paced.get_or_insert(Duration::ZERO) += ahead;
                }
                sleep_until(at);
                let (now, at) = (Tick::now(), Tick::from_instant(at));
                if my_epoch >= 1 {
                    rec.record_queue(now.since(at));
                }
                if from_real_start {
                    now
                } else {
                    at
                }
            }
            None => prev,
        };
        if deadline.is_some_and(|d| start >= d) {
            break Ok(());
        }
        let op = match client.next() {
            Ok(Some(op)) => op,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        let end = Tick::now();
        work.iter_mut().for_each(WorkTrack::took);
        done += 1;
        // Measured from the interval the collector opened after the warmup, once its first
        // host sample was taken: an operation between the warmup's end and that sample would
        // count without its time.
        if my_epoch >= 1 {
            measured_from.get_or_insert(start);
            if let Err(e) = rec.record_done(kinds, &op, (end.since(start), end), work.as_mut()) {
                break Err(e.into());
            }
        }
        prev = end;
    };
    ended.epoch = my_epoch;
    ended.measured_from = measured_from;
    result
}

/// Runs one client until the step ends, then hands the client back: it is dropped only after
/// the step's last sample, so a server's backend serving it (and the CPU it used) is still
/// there when the step's figures are read.
fn client_thread<'c>(
    thread: usize,
    mut client: Box<dyn Client + 'c>,
    clock: &Clock<'_>,
    tx: mpsc::Sender<Msg>,
) -> Box<dyn Client + 'c> {
    crate::sample::threads::mark(Whose::Client);
    let mut ended = Ended {
        rec: Recorder::of_client(clock.plan.kinds.len(), thread),
        epoch: 0,
        measured_from: None,
        paced: None,
    };
    let work = (clock.work).map(|m| WorkTrack::start(m, clock.plan.kinds.len()));
    let result = client_loop(thread, client.as_mut(), clock, &tx, &mut ended, work);
    client.stopped();
    crate::sample::threads::retire();
    match result {
        Ok(()) => {
            let end = Tick::now();
            let busy = ended
                .measured_from
                .map_or(Duration::ZERO, |from| end.since(from));
            let _ = tx.send(Msg::Final {
                thread,
                epoch: ended.epoch,
                rec: ended.rec.take(),
                busy,
                paced: ended.paced,
                // The system clock, as the samples the step's time is measured from: the
                // operations' clock (the TSC) drifts from it by milliseconds over hours.
                ended: Instant::now(),
            });
        }
        Err(error) => {
            clock.stop.store(true, Ordering::Relaxed);
            let _ = tx.send(Msg::Failed { thread, error });
        }
    }
    client
}

/// What the background threads share: when to stop, and how many of those that end the step
/// still run.
struct BackgroundEnd<'a> {
    stop: AtomicBool,
    /// Background clients that end the step (`ends_step`) still running.
    ending: AtomicUsize,
    /// The step's clock, stopped when the last of those ends.
    clock: &'a Clock<'a>,
}

impl BackgroundEnd<'_> {
    /// One background client ended (finished or failed): the last of those that end the step
    /// ends it, and a failure ends any step.
    fn ended(&self, failed: bool, ends_step: bool) {
        let last = ends_step && self.ending.fetch_sub(1, Ordering::Relaxed) == 1;
        if failed || last {
            self.clock.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// One background client until the step ends: paced at `pace` (`None`: as fast as it goes).
fn background_thread(
    b: BackgroundClient<'_>,
    pace: Option<Pace>,
    end: &BackgroundEnd<'_>,
) -> anyhow::Result<Recorder> {
    crate::sample::threads::mark(Whose::Background);
    let (mut client, ends_step) = (b.client, b.ends_step);
    let kinds = &end.clock.plan.kinds;
    let mut rec = Recorder::new(kinds.len());
    let mut rate = pace.map(|p| UnitRate::new(p.per_sec(), p.refill()));
    let stopping = || end.stop.load(Ordering::Relaxed) || end.clock.ending();
    let result = loop {
        if stopping() {
            break Ok(rec);
        }
        let start = Tick::now();
        let op = match client.next() {
            Ok(Some(op)) => op,
            Ok(None) => break Ok(rec),
            Err(e) => break Err(e),
        };
        // What the writer did in the warmup is not counted: its rate is over the measured time.
        if end.clock.epoch.load(Ordering::Relaxed) >= 1 {
            let end = Tick::now();
            if let Err(e) = rec.record_done(kinds, &op, (end.since(start), end), None) {
                break Err(e.into());
            }
        }
        let (Some(rate), Some(pace)) = (rate.as_mut(), pace) else {
            continue;
        };
        // Sleep in short slices so the writer notices the end of the step promptly.
        let due = rate.charge(pace.units(&op));
        while Instant::now() < due && !stopping() {
            sleep_until(due.min(Instant::now() + Duration::from_millis(50)));
        }
    };
    client.stopped();
    crate::sample::threads::retire();
    end.ended(result.is_err(), ends_step);
    result
}

/// What the step's threads left once they all ended.
pub(super) struct Collected<'c> {
    /// The background clients' recorders merged, if any ran.
    pub(super) background: Option<Recorder>,
    /// Summed time the clients spent in measured operations.
    pub(super) busy: Duration,
    /// Summed time the clients slept until their operations' intended starts; `None` when
    /// none was paced.
    pub(super) paced: Option<Duration>,
    /// When the last client ended.
    pub(super) ops_end: Instant,
    /// The clients, to be dropped after the step's last sample.
    pub(super) clients: Vec<Box<dyn Client + 'c>>,
    /// The first client error, which fails the step.
    pub(super) failure: Option<anyhow::Error>,
}

impl Collected<'_> {
    /// The collection, or the first client error, which fails the step.
    pub(super) fn succeeded(mut self) -> anyhow::Result<Self> {
        match self.failure.take() {
            Some(e) => Err(e),
            None => Ok(self),
        }
    }
}

/// Runs the clients and the background clients on their own threads while this thread
/// collects: `measure_from_here` is called when the measured part begins (after warmup).
pub(super) fn run<'c>(
    clock: &Clock<'_>,
    crew: Crew<'c>,
    iv: &mut Intervals<'_>,
    interval: Duration,
    measure_from_here: &mut dyn FnMut(),
    on_interval: &mut dyn FnMut(&IntervalRecord),
) -> anyhow::Result<Collected<'c>> {
    let plan = clock.plan;
    let Crew {
        clients,
        helpers,
        background,
    } = crew;
    let bg_end = BackgroundEnd {
        stop: AtomicBool::new(false),
        ending: AtomicUsize::new(background.iter().filter(|b| b.ends_step).count()),
        clock,
    };
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let mut handles = Vec::new();
        // Helpers are threads as the clients are, numbered after them.
        for (t, client) in clients.into_iter().chain(helpers).enumerate() {
            let tx = tx.clone();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("fathom:client{t}"))
                    .spawn_scoped(s, move || client_thread(t, client, clock, tx))?,
            );
        }
        drop(tx);
        let bg_handles = spawn_background(s, background, plan, &bg_end)?;
        let collected = collect(
            clock,
            &rx,
            handles.len(),
            iv,
            interval,
            measure_from_here,
            on_interval,
        );
        bg_end.stop.store(true, Ordering::Relaxed);
        // The collector failed (its results could not be written): the clients stop now
        // rather than at the step's end, and the scope joins them before the error goes up.
        let mut collected = collected.inspect_err(|_| clock.stop.store(true, Ordering::Relaxed))?;
        for h in bg_handles {
            let rec = h
                .join()
                .map_err(|_| anyhow::anyhow!("background writer panicked"))??;
            collected
                .background
                .get_or_insert_with(|| Recorder::new(plan.kinds.len()))
                .merge(&rec);
        }
        collected
            .clients
            .extend(handles.into_iter().filter_map(|h| h.join().ok()));
        Ok(collected)
    })
}

type BackgroundHandle<'s> = std::thread::ScopedJoinHandle<'s, anyhow::Result<Recorder>>;

/// Starts a thread per background client; the paced ones share the plan's pace evenly.
fn spawn_background<'s, 'c: 's>(
    s: &'s std::thread::Scope<'s, '_>,
    background: Vec<BackgroundClient<'c>>,
    plan: &StepPlan,
    end: &'s BackgroundEnd<'_>,
) -> anyhow::Result<Vec<BackgroundHandle<'s>>> {
    let paced = background.iter().filter(|b| b.paced).count().max(1) as f64;
    let share = plan.background.map(|p| match p {
        Pace::BytesPerSec(r) => Pace::BytesPerSec(r / paced),
        Pace::RowsPerSec(r) => Pace::RowsPerSec(r / paced),
    });
    let mut handles = Vec::new();
    for (i, b) in background.into_iter().enumerate() {
        let pace = if b.paced { share } else { None };
        handles.push(
            std::thread::Builder::new()
                .name(format!("fathom:bg{i}"))
                .spawn_scoped(s, move || background_thread(b, pace, end))?,
        );
    }
    Ok(handles)
}

/// The collector: moves the interval boundaries (sampling the host at each), gathers the
/// clients' snapshots and final records, until every client has ended.
fn collect<'c>(
    clock: &Clock<'_>,
    rx: &mpsc::Receiver<Msg>,
    threads: usize,
    iv: &mut Intervals<'_>,
    interval: Duration,
    measure_from_here: &mut dyn FnMut(),
    on_interval: &mut dyn FnMut(&IntervalRecord),
) -> anyhow::Result<Collected<'c>> {
    let mut out = Collected {
        background: None,
        busy: Duration::ZERO,
        paced: None,
        ops_end: clock.warm_end,
        clients: Vec::new(),
        failure: None,
    };
    let mut running = threads;
    let mut epoch = clock.epoch.load(Ordering::Relaxed);
    // Warmup discards what arrives until the measured part begins.
    let mut next_boundary = if epoch == 1 {
        clock.warm_end + interval
    } else {
        clock.warm_end
    };
    while running > 0 {
        let now = Instant::now();
        if now >= next_boundary {
            epoch += 1;
            if epoch == 1 {
                measure_from_here();
            }
            // The measured part's first sample is the step's start: its size is walked afresh.
            let sample = if epoch == 1 {
                iv.sampler.sample()
            } else {
                iv.sampler.sample_interval()
            };
            iv.samples.insert(epoch, sample);
            clock.epoch.store(epoch, Ordering::Relaxed);
            // An engine that can no longer serve (a server that exited, RocksDB with writes
            // stopped for good) ends the step now: its clients may wait forever.
            iv.target.check()?;
            next_boundary = if epoch == 1 {
                clock.warm_end + interval
            } else {
                next_boundary + interval
            };
            iv.emit(None, on_interval)?;
            continue;
        }
        match rx.recv_timeout(next_boundary - now) {
            Ok(Msg::Snapshot { thread, epoch, rec }) => iv.add(thread, epoch, rec),
            Ok(Msg::Spanned { thread, epochs }) => iv.spanned(thread, epochs),
            Ok(Msg::Final {
                thread,
                epoch: e,
                rec,
                busy,
                paced,
                ended,
            }) => {
                iv.add(thread, e, rec);
                iv.finished[thread] = Some(e);
                out.busy += busy;
                if let Some(p) = paced {
                    *out.paced.get_or_insert(Duration::ZERO) += p;
                }
                out.ops_end = out.ops_end.max(ended);
                running -= 1;
            }
            Ok(Msg::Failed { thread, error }) => {
                iv.finished[thread] = Some(epoch);
                out.failure.get_or_insert(error);
                running -= 1;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(out)
}
