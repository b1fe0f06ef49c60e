//! The step driver: runs one step's client threads (closed loop, or open loop at a fixed
//! arrival rate), an optional rate-limited background writer, excludes warmup, collects each
//! thread's recorder at interval boundaries, samples the host at the same boundaries, and turns
//! it all into interval records and a step summary.

mod calibrate;
mod hlog;
mod intervals;
#[cfg(test)]
mod tests;

pub use calibrate::{harness_cost, thread_cpu_time};
use intervals::Intervals;

use crate::interrupt;
use crate::pace::{sleep_until, Arrivals, Spacing, UnitRate};
use crate::recorder::{KindRecord, Latency, Recorder};
use crate::result::{Background, IntervalRecord, OpSummary, QueryMix, StepSummary};
use crate::sample::Sampler;
use crate::target::{Maintenance, Target};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// What one operation was: its kind (an index into the step's kinds), the bytes it moved, how
/// many times it was retried after a deadlock or conflict before it succeeded, and how many
/// rows it inserted (a batch insert is one operation of many rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Done {
    pub kind: usize,
    pub bytes: u64,
    pub retries: u32,
    pub rows: u64,
}

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
}

/// Open-loop arrivals for a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpenLoop {
    /// Total intended operations per second, shared evenly among the clients.
    pub ops_per_sec: f64,
    pub spacing: Spacing,
    /// One arrival stream and queue for all clients, each idle client taking the next
    /// arrival (LinkbenchX's requesters); otherwise each client has its own stream.
    pub shared: bool,
}

/// How a step runs, independent of what its operations are.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepPlan {
    pub name: String,
    /// Client threads (0 for a step that only performs maintenance).
    pub clients: usize,
    /// Measured duration after warmup; `None` for a step that ends on an operation count.
    pub duration: Option<Duration>,
    /// Operations each client performs, warmup included; `None` for no count limit.
    pub ops_per_client: Option<u64>,
    /// Time at the start whose operations are not recorded.
    pub warmup: Duration,
    /// Names of the operation kinds, indexed by `Done::kind`.
    pub op_kinds: Vec<String>,
    /// The pace of a background writer (its client comes from the workload).
    pub background: Option<Pace>,
    pub open_loop: Option<OpenLoop>,
    /// Maintenance after the operations, charged to the step.
    pub after: Vec<Maintenance>,
    /// SQL statements per operation, when an operation is a transaction of several.
    pub queries: Option<QueryMix>,
}

/// Where a step writes its time series as it goes.
pub struct StepFiles {
    /// One JSON `IntervalRecord` per line.
    pub intervals: PathBuf,
    /// HdrHistogram interval log (V2, deflate), one tagged histogram per kind per interval.
    pub histograms: PathBuf,
}

/// Everything a step needs besides its plan.
pub struct StepRun<'a> {
    pub plan: &'a StepPlan,
    pub index: usize,
    pub clients: Vec<Box<dyn Client + 'a>>,
    pub background: Option<Box<dyn Client + 'a>>,
    pub target: &'a dyn Target,
    pub sampler: &'a Sampler,
    pub interval: Duration,
    pub files: StepFiles,
    /// Called after each interval (progress display).
    pub on_interval: &'a mut dyn FnMut(&IntervalRecord),
}

enum Msg {
    Snapshot {
        thread: usize,
        epoch: usize,
        rec: Recorder,
    },
    Final {
        thread: usize,
        epoch: usize,
        rec: Recorder,
        busy: Duration,
        ended: Instant,
    },
    Failed {
        thread: usize,
        error: anyhow::Error,
    },
}

/// The shared clock of a step's threads.
struct Clock {
    warm_end: Instant,
    deadline: Option<Instant>,
    epoch: AtomicUsize,
    stop: AtomicBool,
}

/// Runs one client until the step ends, then hands the client back: it is dropped only after
/// the step's last sample, so a server's backend serving it (and the CPU it used) is still
/// there when the step's figures are read.
fn client_thread<'c>(
    thread: usize,
    mut client: Box<dyn Client + 'c>,
    plan: &StepPlan,
    clock: &Clock,
    shared: Option<&Mutex<Arrivals>>,
    tx: mpsc::Sender<Msg>,
) -> Box<dyn Client + 'c> {
    let mut rec = Recorder::new(plan.op_kinds.len());
    let mut arrivals = plan.open_loop.filter(|o| !o.shared).map(|o| {
        // Wake-up lateness counts as latency in open loop: ask the kernel for 1 µs timer slack
        // instead of the default 50 µs.
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only the calling thread.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
        let per_client = o.ops_per_sec / plan.clients.max(1) as f64;
        Arrivals::new(per_client, o.spacing, Instant::now(), thread as u64 + 1)
    });
    let mut my_epoch = 0usize;
    let mut done = 0u64;
    let started = Instant::now();
    let mut measured_from: Option<Instant> = None;
    let mut prev = started;
    let result: anyhow::Result<()> = (|| {
        loop {
            if clock.stop.load(Ordering::Relaxed) || interrupt::requested() {
                return Ok(());
            }
            let epoch = clock.epoch.load(Ordering::Relaxed);
            if epoch != my_epoch {
                let _ = tx.send(Msg::Snapshot {
                    thread,
                    epoch: my_epoch,
                    rec: rec.take(),
                });
                my_epoch = epoch;
                prev = Instant::now();
            }
            if plan.ops_per_client.is_some_and(|n| done >= n) {
                return Ok(());
            }
            // Closed loop: an operation starts when the previous one ended (one clock read per
            // operation, as db_bench measures). Open loop: at its intended start, so time spent
            // queued behind a slow operation counts as latency.
            let intended = match (arrivals.as_mut(), shared) {
                (Some(a), _) => Some(a.next_start()),
                (None, Some(s)) => Some(s.lock().unwrap_or_else(|p| p.into_inner()).next_start()),
                (None, None) => None,
            };
            let start = match intended {
                Some(at) => {
                    sleep_until(at);
                    if at >= clock.warm_end {
                        rec.record_queue(Instant::now().saturating_duration_since(at));
                    }
                    at
                }
                None => prev,
            };
            if clock.deadline.is_some_and(|d| start >= d) {
                return Ok(());
            }
            let Some(op) = client.next()? else {
                return Ok(());
            };
            let end = Instant::now();
            done += 1;
            if start >= clock.warm_end {
                measured_from.get_or_insert(start);
                rec.record_done(&op, end - start);
            }
            prev = end;
        }
    })();
    match result {
        Ok(()) => {
            let ended = Instant::now();
            let busy = measured_from.map_or(Duration::ZERO, |from| ended - from);
            let _ = tx.send(Msg::Final {
                thread,
                epoch: my_epoch,
                rec: rec.take(),
                busy,
                ended,
            });
        }
        Err(error) => {
            clock.stop.store(true, Ordering::Relaxed);
            let _ = tx.send(Msg::Failed { thread, error });
        }
    }
    client
}

fn background_thread(
    mut client: Box<dyn Client + '_>,
    kinds: usize,
    pace: Pace,
    stop: &AtomicBool,
) -> anyhow::Result<Recorder> {
    let mut rec = Recorder::new(kinds);
    let mut rate = UnitRate::new(pace.per_sec());
    while !stop.load(Ordering::Relaxed) && !interrupt::requested() {
        let start = Instant::now();
        let Some(op) = client.next()? else { break };
        rec.record_done(&op, start.elapsed());
        // Sleep in short slices so the writer notices the end of the step promptly.
        let due = rate.charge(pace.units(&op));
        while Instant::now() < due && !stop.load(Ordering::Relaxed) {
            sleep_until(due.min(Instant::now() + Duration::from_millis(50)));
        }
    }
    Ok(rec)
}

/// Runs one step to completion (or interruption) and returns its summary. Interval records and
/// histograms are on disk when it returns.
pub fn run_step(mut run: StepRun<'_>) -> anyhow::Result<StepSummary> {
    let plan = run.plan;
    let threads = run.clients.len();
    let started_at = crate::result::now_utc();
    let origin_wall = SystemTime::now();
    let now = Instant::now();
    let warm_end = now + plan.warmup;
    let clock = Clock {
        warm_end,
        deadline: plan.duration.map(|d| warm_end + d),
        epoch: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
    };
    let bg_stop = AtomicBool::new(false);
    // With one queue, the whole step's arrivals come from one stream at the total rate.
    let shared_arrivals = plan
        .open_loop
        .filter(|o| o.shared)
        .map(|o| Mutex::new(Arrivals::new(o.ops_per_sec, o.spacing, Instant::now(), 1)));
    let out = std::io::BufWriter::new(std::fs::File::create(&run.files.intervals)?);
    let mut iv = Intervals {
        threads,
        pending: BTreeMap::new(),
        finished: vec![None; threads],
        samples: BTreeMap::new(),
        next_to_emit: 1,
        step_total: Recorder::new(plan.op_kinds.len()),
        kinds: &plan.op_kinds,
        out,
        step: &plan.name,
        sampler: run.sampler,
        origin: warm_end,
        histograms: Vec::new(),
    };
    let clients = std::mem::take(&mut run.clients);
    let background = run.background.take();
    let on_interval = &mut *run.on_interval;
    let mut counters_before = None;
    let mut busy = Duration::ZERO;
    let mut last_end = warm_end;
    let mut failure: Option<anyhow::Error> = None;

    // Without warmup, measurement starts before the first operation.
    if plan.warmup.is_zero() {
        counters_before = Some(run.target.counters());
        iv.samples.insert(1, run.sampler.sample());
        clock.epoch.store(1, Ordering::Relaxed);
    }
    let mut finished_clients = Vec::new();
    let bg_result = std::thread::scope(|s| -> anyhow::Result<Option<Recorder>> {
        let (tx, rx) = mpsc::channel();
        let mut handles = Vec::new();
        for (t, client) in clients.into_iter().enumerate() {
            let tx = tx.clone();
            let clock = &clock;
            let shared = shared_arrivals.as_ref();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("client-{t}"))
                    .spawn_scoped(s, move || client_thread(t, client, plan, clock, shared, tx))?,
            );
        }
        drop(tx);
        let bg = match (background, plan.background) {
            (Some(client), Some(rate)) => {
                let kinds = plan.op_kinds.len();
                let stop = &bg_stop;
                Some(
                    std::thread::Builder::new()
                        .name("background-writer".into())
                        .spawn_scoped(s, move || background_thread(client, kinds, rate, stop))?,
                )
            }
            _ => None,
        };

        // Warmup: discard what arrives until the measured part begins.
        let mut running = threads;
        let mut epoch = clock.epoch.load(Ordering::Relaxed);
        let mut next_boundary = if epoch == 1 {
            warm_end + run.interval
        } else {
            warm_end
        };
        loop {
            if running == 0 {
                break;
            }
            let now = Instant::now();
            if now >= next_boundary {
                epoch += 1;
                if epoch == 1 {
                    counters_before = Some(run.target.counters());
                }
                iv.samples.insert(epoch, run.sampler.sample());
                clock.epoch.store(epoch, Ordering::Relaxed);
                next_boundary = if epoch == 1 {
                    warm_end + run.interval
                } else {
                    next_boundary + run.interval
                };
                iv.emit(None, on_interval)?;
                continue;
            }
            match rx.recv_timeout(next_boundary - now) {
                Ok(Msg::Snapshot {
                    thread,
                    epoch: e,
                    rec,
                }) => iv.add(thread, e, rec),
                Ok(Msg::Final {
                    thread,
                    epoch: e,
                    rec,
                    busy: b,
                    ended,
                }) => {
                    iv.add(thread, e, rec);
                    iv.finished[thread] = Some(e);
                    busy += b;
                    last_end = last_end.max(ended);
                    running -= 1;
                }
                Ok(Msg::Failed { thread, error }) => {
                    iv.finished[thread] = Some(epoch);
                    failure.get_or_insert(error);
                    running -= 1;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        bg_stop.store(true, Ordering::Relaxed);
        let bg_rec = match bg {
            Some(h) => Some(
                h.join()
                    .map_err(|_| anyhow::anyhow!("background writer panicked"))??,
            ),
            None => None,
        };
        finished_clients.extend(handles.into_iter().filter_map(|h| h.join().ok()));
        Ok(bg_rec)
    });
    if let Some(e) = failure {
        return Err(e.context(format!("step {} failed", plan.name)));
    }
    let bg_rec = bg_result?;

    // A step with no clients (maintenance only), or one that ended during warmup, still
    // measures from here.
    if iv.samples.is_empty() {
        counters_before = Some(run.target.counters());
        iv.samples.insert(1, run.sampler.sample());
    }
    let ops_end = last_end;
    let end_of_ops = run.sampler.sample();
    drop(finished_clients);
    iv.emit(Some(&end_of_ops), on_interval)?;

    let maint_start = Instant::now();
    for action in &plan.after {
        if interrupt::requested() {
            break;
        }
        run.target.maintain(*action)?;
    }
    let maintenance_seconds = maint_start.elapsed().as_secs_f64();
    let end = if plan.after.is_empty() {
        end_of_ops
    } else {
        run.sampler.sample()
    };
    let counters_after = run.target.counters();

    hlog::write(
        &run.files.histograms,
        origin_wall,
        run.interval,
        plan,
        &iv.histograms,
        bg_rec.as_ref(),
    )?;

    let total = &iv.step_total;
    let all = total.combined();
    let first = iv.samples.values().next().expect("a first sample exists");
    let measured = if threads == 0 {
        0.0
    } else {
        ops_end.duration_since(first.at).as_secs_f64()
    };
    let figures = run.sampler.figures(first, &end, all.ops);
    let counters_before = counters_before.unwrap_or_default();
    let secs = |x: f64| if measured > 0.0 { x / measured } else { 0.0 };
    let by_op = plan
        .op_kinds
        .iter()
        .zip(&total.kinds)
        .filter(|(_, k)| k.ops > 0)
        .map(|(name, k)| (name.clone(), op_summary(k)))
        .collect();
    Ok(StepSummary {
        step: plan.name.clone(),
        index: run.index,
        clients: threads,
        ops: all.ops,
        seconds: measured,
        ops_per_sec: secs(all.ops as f64),
        mb_per_sec: secs(all.bytes as f64 / (1u64 << 20) as f64),
        usec_op: if all.ops > 0 {
            busy.as_secs_f64() * 1e6 / all.ops as f64
        } else {
            0.0
        },
        latency_us: Latency::of(&all.latency),
        per_op: figures.per_op,
        db_gb: figures.db_gb,
        rss_gb: figures.rss_gb,
        engine_stats: run
            .target
            .step_stats(&counters_before, &counters_after, figures.seconds),
        by_op,
        host: figures.host,
        background: bg_rec.map(|r| {
            let k = r.combined();
            let target = |f: fn(Pace) -> Option<f64>| plan.background.and_then(f).unwrap_or(0.0);
            Background {
                ops: k.ops,
                bytes: k.bytes,
                bytes_per_sec: secs(k.bytes as f64),
                target_bytes_per_sec: target(|p| match p {
                    Pace::BytesPerSec(r) => Some(r),
                    Pace::RowsPerSec(_) => None,
                }),
                latency_us: Latency::of(&k.latency),
                rows: k.rows,
                rows_per_sec: secs(k.rows as f64),
                target_rows_per_sec: target(|p| match p {
                    Pace::RowsPerSec(r) => Some(r),
                    Pace::BytesPerSec(_) => None,
                }),
            }
        }),
        maintenance_seconds,
        window_seconds: figures.seconds,
        arrival_rate: plan.open_loop.map(|o| o.ops_per_sec),
        harness_ns_per_op: None,
        interrupted: interrupt::requested(),
        started_at,
        query_mix: plan.queries,
        retries_per_sec: secs(all.retries as f64),
        rows: all.rows,
        rows_per_sec: secs(all.rows as f64),
        queue_us: plan
            .open_loop
            .filter(|_| !total.queue.is_empty())
            .map(|_| Latency::of(&total.queue)),
        shared_queue: plan.open_loop.is_some_and(|o| o.shared),
    })
}

fn op_summary(k: &KindRecord) -> OpSummary {
    OpSummary {
        ops: k.ops,
        bytes: k.bytes,
        latency_us: Latency::of(&k.latency),
        rows: k.rows,
    }
}
