//! Driver tests with a fake engine: latency accounting in open and closed loop.

use super::*;
use fathom_api::kind::testing::Test;
use fathom_api::kind::Done;
use fathom_api::step::{ClientGroup, OpenLoop};
use fathom_schema::result::IntervalRecord;

/// No engine: its counters take `counters_take` to read (a server's statistics query).
struct NoEngine(fathom_api::target::Identity, Duration);

impl Target for NoEngine {
    fn identity(&self) -> &fathom_api::target::Identity {
        &self.0
    }
    fn counters(&self) -> fathom_api::target::Counters {
        std::thread::sleep(self.1);
        fathom_api::target::Counters::new()
    }
}

/// A step of `clients` clients whose operations are of one kind, reads.
fn reading(name: &str, clients: usize) -> StepPlan {
    StepPlan {
        name: name.into(),
        clients,
        kinds: fathom_api::kind::StepKinds::of(&[Test::A]),
        ..Default::default()
    }
}

/// Instant operations, except the first, which stalls for 200 ms.
struct StallOnce {
    done: u64,
}

impl Client for StallOnce {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if self.done == 0 {
            std::thread::sleep(Duration::from_millis(200));
        }
        self.done += 1;
        Ok(Some(Done {
            bytes: 1,
            rows: 3,
            ..Done::of(Test::A)
        }))
    }
}

fn run(open_loop: Option<OpenLoop>, ops: u64) -> StepSummary {
    let plan = StepPlan {
        duration: None,
        ops_per_client: Some(ops),
        warmup: Duration::ZERO,
        background: None,
        open_loop,
        ..reading("stall", 1)
    };
    run_plan(&plan, Vec::new())
}

/// Runs `plan` with one stalling client and `background`, on no engine.
fn run_plan(plan: &StepPlan, background: Vec<BackgroundClient<'static>>) -> StepSummary {
    run_clients(plan, vec![Box::new(StallOnce { done: 0 })], background)
}

/// Runs `plan` with `clients` and `background`, on no engine.
fn run_clients(
    plan: &StepPlan,
    clients: Vec<Box<dyn Client>>,
    background: Vec<BackgroundClient<'static>>,
) -> StepSummary {
    run_seen(plan, clients, background, &mut |_| {})
}

/// `run_clients`, telling `seen` of each interval.
fn run_seen(
    plan: &StepPlan,
    clients: Vec<Box<dyn Client>>,
    background: Vec<BackgroundClient<'static>>,
    seen: &mut dyn FnMut(&IntervalRecord),
) -> StepSummary {
    let _ending = (!background.is_empty()).then(|| {
        (crate::sample::threads::BACKGROUND_ENDING.lock()).unwrap_or_else(|p| p.into_inner())
    });
    let crew = Crew {
        background,
        ..Crew::of_clients(clients)
    };
    run_watched(plan, crew, seen, None)
}

/// Runs `plan` with `crew`, telling `seen` of each interval and `watch` of the measured span.
fn run_watched(
    plan: &StepPlan,
    crew: Crew<'static>,
    seen: &mut dyn FnMut(&IntervalRecord),
    watch: Option<&mut (dyn super::Watch + 'static)>,
) -> StepSummary {
    run_stoppable(plan, crew, seen, watch, &fathom_api::stop::Stop::new())
}

/// `run_watched`, stopped when `stop` is.
fn run_stoppable(
    plan: &StepPlan,
    crew: Crew<'static>,
    seen: &mut dyn FnMut(&IntervalRecord),
    watch: Option<&mut (dyn super::Watch + 'static)>,
    stop: &fathom_api::stop::Stop,
) -> StepSummary {
    run_slow_counters(plan, crew, seen, watch, stop, Duration::ZERO)
}

/// `run_stoppable` on an engine whose counters take `counters_take` to read.
fn run_slow_counters(
    plan: &StepPlan,
    crew: Crew<'static>,
    seen: &mut dyn FnMut(&IntervalRecord),
    watch: Option<&mut (dyn super::Watch + 'static)>,
    stop: &fathom_api::stop::Stop,
    counters_take: Duration,
) -> StepSummary {
    let dir = tempfile::tempdir().unwrap();
    let identity =
        fathom_api::target::Identity::new("none", "0".into(), vec![dir.path().to_path_buf()]);
    let target = NoEngine(identity, counters_take);
    let sampler = Sampler::new(target.data_dirs(), target.pids());
    run_step(StepRun {
        plan,
        index: 1,
        crew,
        target: &target,
        sampler: &sampler,
        interval: Duration::from_millis(200),
        files: StepFiles {
            intervals: dir.path().join("i.jsonl"),
            histograms: dir.path().join("h.hlog"),
            offcpu: dir.path().join("o.folded"),
        },
        on_interval: seen,
        watches: watch.into_iter().collect(),
        waits: None,
        stop,
    })
    .unwrap()
}

/// When a watch was told the measured span began and ended.
#[derive(Default)]
struct Told {
    measuring: Vec<std::time::Instant>,
    ended: Vec<std::time::Instant>,
}

impl super::Watch for Told {
    fn measuring(&mut self) {
        self.measuring.push(std::time::Instant::now());
    }
    fn ended(&mut self) {
        self.ended.push(std::time::Instant::now());
    }
}

#[test]
fn a_watch_is_told_the_measured_span_once_after_warmup() {
    let plan = StepPlan {
        duration: Some(Duration::from_millis(300)),
        warmup: Duration::from_millis(300),
        ..reading("watched", 1)
    };
    let mut told = Told::default();
    let start = std::time::Instant::now();
    let s = run_watched(
        &plan,
        Crew::of_clients(vec![Box::new(FailsSome { done: 0 })]),
        &mut |_| {},
        Some(&mut told),
    );
    assert!(s.ops > 0);
    assert_eq!((told.measuring.len(), told.ended.len()), (1, 1));
    let began = told.measuring[0] - start;
    assert!(
        began >= Duration::from_millis(300),
        "began {began:?}, within warmup"
    );
    let span = told.ended[0] - told.measuring[0];
    assert!(span >= Duration::from_millis(290), "span {span:?}");
}

/// Every third operation fails with a tolerated error, slowly enough to span intervals.
struct FailsSome {
    done: u64,
}

impl Client for FailsSome {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        std::thread::sleep(Duration::from_millis(2));
        self.done += 1;
        Ok(Some(Done {
            failed: self.done.is_multiple_of(3),
            ..Done::of(Test::A)
        }))
    }
}

/// Interval records count failed operations, and add up to the step's.
#[test]
fn intervals_count_failed_operations() {
    let plan = StepPlan {
        ops_per_client: Some(300),
        ..reading("fails", 1)
    };
    let mut records = Vec::new();
    let s = run_seen(
        &plan,
        vec![Box::new(FailsSome { done: 0 })],
        Vec::new(),
        &mut |r| records.push(r.clone()),
    );
    assert_eq!(s.failed, 100);
    assert!(records.len() > 1, "{} intervals", records.len());
    assert_eq!(records.iter().map(|r| r.failed).sum::<u64>(), 100);
    assert_eq!(records.iter().map(|r| r.ops).sum::<u64>(), s.ops);
}

/// A stop ends the step it was given to, early and marked interrupted, and no other: two
/// steps run at once, one of them stopped.
#[test]
fn a_stop_ends_its_own_step_and_no_other() {
    let plan = StepPlan {
        duration: Some(Duration::from_millis(1500)),
        ..reading("long", 1)
    };
    let (stopped, other) = (fathom_api::stop::Stop::new(), fathom_api::stop::Stop::new());
    let asker = stopped.clone();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            asker.request();
        });
        let mine = s.spawn(|| {
            let crew = Crew::of_clients(vec![Box::new(FailsSome { done: 0 })]);
            run_stoppable(&plan, crew, &mut |_| {}, None, &stopped)
        });
        let theirs = s.spawn(|| {
            let crew = Crew::of_clients(vec![Box::new(FailsSome { done: 0 })]);
            run_stoppable(&plan, crew, &mut |_| {}, None, &other)
        });
        let (mine, theirs) = (mine.join().unwrap(), theirs.join().unwrap());
        assert!(mine.interrupted && mine.seconds < 1.0, "{}", mine.seconds);
        assert!(
            !theirs.interrupted && theirs.seconds >= 1.4,
            "{}",
            theirs.seconds
        );
    });
}

/// A helper's operations count in the step as a client's do; the step's clients figure counts
/// its clients alone.
#[test]
fn helpers_count_in_the_operations_not_among_the_clients() {
    let plan = StepPlan {
        ops_per_client: Some(50),
        ..reading("helped", 1)
    };
    let crew = Crew {
        helpers: vec![Box::new(TenRows)],
        ..Crew::of_clients(vec![Box::new(TenRows)])
    };
    let s = run_watched(&plan, crew, &mut |_| {}, None);
    assert_eq!((s.clients, s.ops, s.rows), (1, 100, 1000));
}

#[test]
fn open_loop_latency_counts_from_the_intended_start() {
    // 1000 ops/s for 1000 ops: the ~200 operations due during the stall wait behind it.
    let open = run(
        Some(OpenLoop {
            ops_per_sec: 1000.0,
            spacing: Spacing::Uniform,
            shared: false,
            latency_from: LatencyFrom::Arrival,
        }),
        1000,
    );
    assert_eq!(open.ops, 1000);
    // About 200 of the 1000 waited 0-200 ms: a mean near 20 ms, a p99 near 190 ms.
    let l = &open.latency_us;
    assert!(
        l.mean > 10_000.0,
        "queued operations must show their wait: {l:?}"
    );
    assert!(l.p99 > 100_000.0, "{l:?}");
    assert!(open.latency_us.max >= 200_000.0);
    // Closed loop: only the stalled operation itself is slow.
    let closed = run(None, 1000);
    assert_eq!(closed.rows, 3000, "each operation inserted 3 rows");
    assert!(closed.latency_us.p99 < 1_000.0, "{:?}", closed.latency_us);
    assert!(closed.latency_us.max >= 200_000.0);
    // Latency from the real start (LinkBench's requestrate): the service time only; the wait
    // is the queue's figure.
    let service = run(
        Some(OpenLoop {
            ops_per_sec: 1000.0,
            spacing: Spacing::Uniform,
            shared: false,
            latency_from: LatencyFrom::Start,
        }),
        1000,
    );
    assert_eq!(service.ops, 1000);
    assert!(service.latency_us.p99 < 1_000.0, "{:?}", service.latency_us);
    assert!(service.latency_us.max >= 200_000.0);
    let queued = service.queue_us.expect("the wait is recorded");
    assert!(queued.p99 > 100_000.0, "{queued:?}");
}

/// Inserts 10 rows per operation, as fast as it is let.
struct TenRows;

impl Client for TenRows {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        Ok(Some(Done {
            rows: 10,
            ..Done::of(Test::A)
        }))
    }
}

fn paced(client: Box<dyn Client>) -> BackgroundClient<'static> {
    BackgroundClient {
        client,
        paced: true,
        ends_step: false,
    }
}

/// Inserts 10 rows per operation until it has inserted `left`.
struct RowsUpTo {
    left: u64,
}

impl Client for RowsUpTo {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 10;
        Ok(Some(Done {
            rows: 10,
            ..Done::of(Test::A)
        }))
    }
}

/// Two paced writers share the step's pace, and the step lasts until they have written their
/// rows (iibench's query steps): 100 rows each at 200 rows/s together is about one second.
#[test]
fn a_step_until_its_background_ends_lasts_as_long_as_the_writers() {
    let plan = StepPlan {
        background: Some(Pace::RowsPerSec(200.0)),
        ..reading("qr", 1)
    };
    let ending = |left| BackgroundClient {
        ends_step: true,
        ..paced(Box::new(RowsUpTo { left }))
    };
    let writers = vec![ending(100), ending(100)];
    let s = run_clients(&plan, vec![Box::new(TenRows)], writers);
    let bg = s.background.unwrap();
    assert_eq!(bg.rows, 200, "every row written");
    // Each writer's first operation is free, then 9 more at 10 ops/s: about 0.9 s.
    assert!(
        s.seconds > 0.7 && s.seconds < 2.0,
        "{} s for 200 rows at 200 rows/s",
        s.seconds
    );
}

#[test]
fn a_background_writer_paced_in_rows_keeps_under_its_rate() {
    let plan = StepPlan {
        duration: Some(Duration::from_secs(1)),
        background: Some(Pace::RowsPerSec(200.0)),
        ..reading("queries", 1)
    };
    let s = run_plan(&plan, vec![paced(Box::new(TenRows))]);
    let bg = s.background.unwrap();
    // 200 rows/s at 10 rows an operation: one every 50 ms, about 21 in the second (a little
    // more as the step winds down).
    assert!(bg.rows <= 240 && bg.rows >= 20, "{} rows", bg.rows);
    assert_eq!(bg.rows, bg.ops * 10);
    assert_eq!(bg.target_rows_per_sec, 200.0);
    assert_eq!(bg.target_bytes_per_sec, 0.0);
}

/// Operations of 2 ms after a warmup, on an engine whose counters take 300 ms to read at the
/// warmup's end: those done while they were read count neither as operations nor as time, so
/// the rate stays under the 500 ops/s a 2 ms operation allows (it read about 650 when they
/// counted as operations but not as time).
#[test]
fn operations_before_the_first_sample_are_not_counted_without_their_time() {
    let plan = StepPlan {
        warmup: Duration::from_millis(200),
        duration: Some(Duration::from_millis(1000)),
        ..reading("after-warmup", 1)
    };
    let s = run_slow_counters(
        &plan,
        Crew::of_clients(vec![Box::new(Steady)]),
        &mut |_| {},
        None,
        &fathom_api::stop::Stop::new(),
        Duration::from_millis(300),
    );
    assert!(s.ops_per_sec < 505.0, "{} ops/s", s.ops_per_sec);
    assert!(s.ops_per_sec > 250.0, "{} ops/s", s.ops_per_sec);
}

/// A writer paced through a warmup: its rate is what it wrote after the warmup over the time
/// after it, not the warmup's rows too (which read twice the rate with equal warmup and step).
#[test]
fn a_background_writers_rate_leaves_the_warmup_out() {
    let plan = StepPlan {
        warmup: Duration::from_millis(600),
        duration: Some(Duration::from_millis(600)),
        background: Some(Pace::RowsPerSec(500.0)),
        ..reading("queries", 1)
    };
    let s = run_plan(&plan, vec![paced(Box::new(TenRows))]);
    let bg = s.background.unwrap();
    assert!(
        bg.rows_per_sec > 350.0 && bg.rows_per_sec < 650.0,
        "{} rows/s at 500",
        bg.rows_per_sec
    );
}

#[test]
fn with_one_queue_an_idle_client_takes_what_a_stalled_one_cannot() {
    // 2 clients, 1000 ops/s, one client stalls 200 ms once. A queue per client: about 100 of
    // the stalled client's operations wait behind it. One queue: the other client takes them.
    let run_two = |shared: bool| {
        let plan = StepPlan {
            ops_per_client: Some(500),
            open_loop: Some(OpenLoop {
                ops_per_sec: 1000.0,
                spacing: Spacing::Uniform,
                shared,
                latency_from: LatencyFrom::Arrival,
            }),
            ..reading("queue", 2)
        };
        run_clients(
            &plan,
            vec![Box::new(StallOnce { done: 0 }), Box::new(TenRows)],
            Vec::new(),
        )
    };
    let per_client = run_two(false);
    let shared = run_two(true);
    assert!(shared.shared_queue && !per_client.shared_queue);
    let (q1, q2) = (per_client.queue_us.unwrap(), shared.queue_us.unwrap());
    assert!(q1.p99 > 50_000.0, "per client: {q1:?}");
    assert!(
        q2.p99 < q1.p99 / 2.0,
        "shared {q2:?} against per client {q1:?}"
    );
}

/// An operation of 1.2 s first, then quick ones.
struct OneLongOp {
    done: u64,
}

impl Client for OneLongOp {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let long = self.done == 0;
        std::thread::sleep(Duration::from_millis(if long { 1200 } else { 2 }));
        self.done += 1;
        Ok(Some(Done::of(Test::A)))
    }
}

/// Quick operations, 2 ms each.
struct Steady;

impl Client for Steady {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        std::thread::sleep(Duration::from_millis(2));
        Ok(Some(Done::of(Test::A)))
    }
}

/// One operation spanning six intervals of 200 ms holds back no interval record until it
/// ends: the first is written while it runs, a whole interval late at most, and the intervals
/// still add up to the step.
#[test]
fn one_long_operation_holds_back_no_interval() {
    let plan = StepPlan {
        duration: Some(Duration::from_millis(2000)),
        ..reading("long", 2)
    };
    let began = std::time::Instant::now();
    let mut seen = Vec::new();
    let s = run_seen(
        &plan,
        vec![Box::new(OneLongOp { done: 0 }), Box::new(Steady)],
        Vec::new(),
        &mut |r| seen.push((r.clone(), began.elapsed())),
    );
    let (first, at) = &seen[0];
    assert!(
        *at < Duration::from_millis(1000),
        "interval {} was written {at:?} into the step, after the long operation",
        first.interval
    );
    assert_eq!(seen.iter().map(|(r, _)| r.ops).sum::<u64>(), s.ops);
    assert!(seen.len() >= 9, "{} intervals", seen.len());
}

/// One operation of kind `kind` at a time, each instant.
struct Instant_(Test);

impl Client for Instant_ {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        Ok(Some(Done::of(self.0)))
    }
}

/// A group of one client held to 200 ops/s beside a closed-loop client: the paced one does
/// about 200 in a second, the other as many as it can; the intervals say what was meant.
#[test]
fn a_client_group_keeps_its_own_rate_beside_closed_loop_clients() {
    let plan = StepPlan {
        duration: Some(Duration::from_secs(1)),
        kinds: fathom_api::kind::StepKinds::of(&[Test::A, Test::B]),
        groups: vec![ClientGroup {
            clients: 1,
            rate: Some(fathom_api::pace::Schedule::fixed(200.0)),
            spacing: Spacing::Uniform,
        }],
        ..reading("groups", 2)
    };
    let clients: Vec<Box<dyn Client>> =
        vec![Box::new(Instant_(Test::A)), Box::new(Instant_(Test::B))];
    let mut intended = Vec::new();
    let s = run_seen(&plan, clients, Vec::new(), &mut |r| {
        intended.push(r.intended_ops_per_sec)
    });
    let a = s.by_op["a"].ops;
    assert!((190..=210).contains(&a), "paced group did {a}");
    assert!(s.by_op["b"].ops > 10 * a, "{:?}", s.by_op["b"].ops);
    assert!(intended.iter().all(|r| *r == Some(200.0)), "{intended:?}");
    assert_eq!(s.arrival_rate, Some(200.0));
}

/// Two clients sharing a ramp from 100 to 300 ops/s over a second: about 200 operations, the
/// intervals' intended rate rising.
#[test]
fn a_ramp_raises_the_rate_over_the_step() {
    let ramp = fathom_api::pace::Schedule {
        pieces: vec![fathom_api::pace::Piece {
            seconds: 1.0,
            from: 100.0,
            to: 300.0,
        }],
    };
    let plan = StepPlan {
        duration: Some(Duration::from_secs(1)),
        groups: vec![ClientGroup {
            clients: 2,
            rate: Some(ramp),
            spacing: Spacing::Uniform,
        }],
        ..reading("ramp", 2)
    };
    let clients: Vec<Box<dyn Client>> =
        vec![Box::new(Instant_(Test::A)), Box::new(Instant_(Test::A))];
    let mut intended = Vec::new();
    let s = run_seen(&plan, clients, Vec::new(), &mut |r| {
        intended.push(r.intended_ops_per_sec.unwrap_or(0.0))
    });
    assert!((185..=215).contains(&s.ops), "{} operations", s.ops);
    assert!(intended.windows(2).all(|w| w[1] > w[0]), "{intended:?}");
    let mean = s.arrival_rate.unwrap();
    assert!((mean - 200.0).abs() < 5.0, "{mean}");
}
