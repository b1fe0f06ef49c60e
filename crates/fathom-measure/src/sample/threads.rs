//! Where each thread's time went in a step: on a CPU, waiting for one (the run queue) and
//! waiting for block IO, read per thread from `/proc/PID/task/TID/schedstat` and `stat` (delay
//! accounting) at the step's boundaries, summed by whose thread it is (fathom's clients,
//! fathom's other threads, the engine's). Exact, and cheap enough to be always on: two small
//! reads per thread at each boundary.

pub use fathom_schema::result::threads::{GroupTime, ThreadTime};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Whose a thread is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Whose {
    /// A client of the step: it runs the workload's operations (and, embedded, the engine's
    /// code they call).
    Client,
    /// A background client (a `*whilewriting` writer, the insert benchmark's inserter).
    Background,
    /// fathom's own other threads: the collector and sampler, a server's supervisor, a client
    /// library's threads beside a server.
    Harness,
    /// The engine's threads: a server's processes', or an embedded engine's own (RocksDB's
    /// flushes and compactions, WiredTiger's eviction and checkpoints).
    Engine,
}

/// One thread's cumulative times, nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Times {
    pub cpu_ns: u64,
    pub runq_ns: u64,
    /// Block IO waits (delay accounting; 0 while it is off).
    pub blkio_ns: u64,
    /// How long the thread has existed.
    pub alive_ns: u64,
}

/// fathom's threads that said whose they are, and the last times of those that ended (the
/// oldest forgotten beyond `KEEP_ENDED`: a step's clients end once each).
const KEEP_ENDED: usize = 4096;
static MARKED: Mutex<Vec<(u32, Whose, Option<Times>)>> = Mutex::new(Vec::new());

fn marked() -> std::sync::MutexGuard<'static, Vec<(u32, Whose, Option<Times>)>> {
    MARKED.lock().unwrap_or_else(|p| p.into_inner())
}

fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

/// The calling thread is `whose`: called first thing on a thread fathom starts.
pub fn mark(whose: Whose) {
    let tid = gettid();
    let mut m = marked();
    m.retain(|(t, ..)| *t != tid);
    m.push((tid, whose, None));
}

/// The calling thread ends: its times are kept for the step's last sample, which it will not
/// live to see.
pub fn retire() {
    let tid = gettid();
    let times = read_task("/proc/thread-self", clock());
    let mut m = marked();
    if let Some(e) = m.iter_mut().find(|(t, ..)| *t == tid) {
        e.2 = times;
    }
}

/// Clock ticks per second and the boot-time clock now, ns: what a thread's start time (ticks
/// since boot) is measured against.
#[derive(Clone, Copy)]
struct Clock {
    hz: u64,
    boot_ns: u64,
}

fn clock() -> Clock {
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    Clock {
        hz: if hz > 0 { hz as u64 } else { 100 },
        boot_ns: crate::tick::clock_ns(libc::CLOCK_BOOTTIME),
    }
}

/// Parses `schedstat`: nanoseconds on a CPU, nanoseconds waiting in the run queue.
fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace();
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// Parses a task's `stat`: its start time (ticks after boot, field 22) and its block IO
/// delay (ticks, field 42).
fn parse_task_stat(text: &str) -> Option<(u64, u64)> {
    let after = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let n = |field: usize| f.get(field - 3)?.parse::<u64>().ok();
    Some((n(22)?, n(42).unwrap_or(0)))
}

/// The times of the task whose `/proc` directory is `dir`.
fn read_task(dir: &str, now: Clock) -> Option<Times> {
    let (cpu_ns, runq_ns) =
        parse_schedstat(&crate::sample::read_proc(format!("{dir}/schedstat")).ok()?)?;
    let (start, blkio) = parse_task_stat(&crate::sample::read_proc(format!("{dir}/stat")).ok()?)?;
    let tick_ns = 1_000_000_000 / now.hz;
    Some(Times {
        cpu_ns,
        runq_ns,
        blkio_ns: blkio * tick_ns,
        alive_ns: now.boot_ns.saturating_sub(start * tick_ns),
    })
}

/// Every thread's times at one instant, by thread id.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    threads: BTreeMap<u32, (Whose, Times)>,
    /// How long reading it took, ns: fathom's cost of the accounting.
    took_ns: u64,
}

impl Snapshot {
    /// Every thread: its id, whose it is, its times.
    pub fn members(&self) -> impl Iterator<Item = (u32, Whose, Times)> + '_ {
        self.threads.iter().map(|(t, (w, x))| (*t, *w, *x))
    }

    /// True when thread `tid`, whose times are now `now`, was busy over the `ns` since this
    /// snapshot (a thread it does not have is taken as busy).
    pub fn busy_since(&self, tid: u32, now: &Times, ns: u64) -> bool {
        let Some((_, a)) = self.threads.get(&tid) else {
            return true;
        };
        let used = (now.cpu_ns + now.runq_ns + now.blkio_ns)
            .saturating_sub(a.cpu_ns + a.runq_ns + a.blkio_ns);
        used as f64 >= BUSY * ns as f64
    }
}

/// Reads the threads of fathom's process and of a server's processes (`server_pids`, every
/// one; none when the engine is embedded). fathom's threads are whose they said; an unmarked
/// one is the engine's when it is embedded, else fathom's.
pub fn snapshot(server_pids: &[u32], embedded: bool) -> Snapshot {
    let began = std::time::Instant::now();
    let now = clock();
    let mut threads = BTreeMap::new();
    let me = std::process::id();
    let mut m = marked();
    let whose_of = |tid: u32, m: &[(u32, Whose, Option<Times>)]| {
        m.iter()
            .find(|(t, ..)| *t == tid)
            .map(|e| e.1)
            .unwrap_or(if tid == me || !embedded {
                Whose::Harness
            } else {
                Whose::Engine
            })
    };
    for (tid, times) in tasks(me, now) {
        threads.insert(tid, (whose_of(tid, &m), times));
    }
    // Threads that ended, with their last times: one that ended before a window's start has
    // the same times at both its ends, and counts for nothing.
    for (tid, whose, times) in m.iter() {
        if let Some(t) = times {
            threads.entry(*tid).or_insert((*whose, *t));
        }
    }
    let ended = m.iter().filter(|e| e.2.is_some()).count();
    if ended > KEEP_ENDED {
        let mut drop_first = ended - KEEP_ENDED;
        m.retain(|e| {
            let gone = e.2.is_some() && drop_first > 0;
            drop_first -= usize::from(gone);
            !gone
        });
    }
    drop(m);
    if !embedded {
        for &pid in server_pids {
            for (tid, times) in tasks(pid, now) {
                threads.insert(tid, (Whose::Engine, times));
            }
        }
    }
    Snapshot {
        threads,
        took_ns: began.elapsed().as_nanos() as u64,
    }
}

/// The threads of process `pid` and their times.
fn tasks(pid: u32, now: Clock) -> Vec<(u32, Times)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let tid = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((tid, read_task(&format!("/proc/{pid}/task/{tid}"), now)?))
        })
        .collect()
}

/// The block IO figure's resolution (one clock tick at 100 Hz).
const BLKIO_TICK_NS: u64 = 10_000_000;

/// A thread counts as busy when on a CPU, waiting for one or for IO this share of its time.
pub const BUSY: f64 = 0.05;

/// The time of the threads of `end` over the window since `start`; block IO waits when
/// `blkio` (delay accounting was on throughout), and the clients' pacing.
pub fn time_between(
    start: &Snapshot,
    end: &Snapshot,
    blkio: bool,
    paced_s: Option<f64>,
) -> ThreadTime {
    let mut t = ThreadTime {
        read_ms: (start.took_ns + end.took_ns) as f64 / 1e6,
        ..ThreadTime::default()
    };
    let s = |ns: u64| ns as f64 / 1e9;
    for (tid, (whose, b)) in &end.threads {
        let a = match start.threads.get(tid) {
            Some((w, a)) if w == whose && a.alive_ns <= b.alive_ns => *a,
            // Born in the window (or a thread id used again): all its time is the window's.
            _ => Times::default(),
        };
        let wall = b.alive_ns.saturating_sub(a.alive_ns);
        if wall == 0 {
            continue;
        }
        let cpu = b.cpu_ns.saturating_sub(a.cpu_ns);
        let runq = b.runq_ns.saturating_sub(a.runq_ns);
        let g = match whose {
            Whose::Client => &mut t.clients,
            Whose::Background => t.background.get_or_insert_with(GroupTime::default),
            Whose::Harness => &mut t.harness,
            Whose::Engine => &mut t.engine,
        };
        // IO waits never overlap the time on a CPU or runnable. A thread's first IO wait
        // is sometimes charged from a start the kernel never stamped (seen: 2,574 s on a
        // RocksDB compaction thread a minute old); a figure beyond the thread's time off a
        // CPU (and the figure's 10 ms tick) is that, and is left out.
        let off = wall.saturating_sub(cpu + runq);
        let io = match b.blkio_ns.saturating_sub(a.blkio_ns) {
            _ if !blkio => 0,
            io if io > off + BLKIO_TICK_NS => {
                g.blkio_dropped += 1;
                0
            }
            io => io.min(off),
        };
        let busy = (cpu + runq + io) as f64 >= BUSY * wall as f64;
        g.threads += 1;
        g.busy += u32::from(busy);
        if !busy && !matches!(whose, Whose::Client | Whose::Background) {
            continue;
        }
        g.wall_s += s(wall);
        g.cpu_s += s(cpu);
        g.runq_s += s(runq);
        if blkio {
            *g.blkio_s.get_or_insert(0.0) += s(io);
        }
        g.other_s += s(wall.saturating_sub(cpu + runq + io));
    }
    if blkio {
        for g in [&mut t.clients, &mut t.harness, &mut t.engine] {
            g.blkio_s.get_or_insert(0.0);
        }
    }
    if let Some(p) = paced_s {
        let p = p.min(t.clients.other_s);
        t.clients.paced_s = Some(p);
        t.clients.other_s -= p;
    }
    t
}

/// Delay accounting (`kernel.task_delayacct`) on for a run and back as it was after it: the
/// block IO waits of each thread are counted only while it is on. Not per step: a thread
/// asleep on IO when it is turned on is charged, at its wake-up, from the start of an earlier
/// wait (the kernel stamps a wait's start only while it is on); seen here as 2.7 s of IO
/// waits in a step whose clients did no IO.
pub struct DelayAccounting {
    /// What to write back, when fathom turned it on.
    restore: Option<String>,
    /// On for the whole step.
    pub on: bool,
}

const DELAYACCT: &str = "/proc/sys/kernel/task_delayacct";

impl DelayAccounting {
    /// Turns delay accounting on where it is off and fathom may (root); `on` says whether it
    /// is on now.
    pub fn on() -> DelayAccounting {
        match crate::sample::read_proc(DELAYACCT).map(|s| s.trim().to_string()) {
            Ok(v) if v == "1" => DelayAccounting {
                restore: None,
                on: true,
            },
            Ok(v) => {
                let set = std::fs::write(DELAYACCT, "1").is_ok();
                DelayAccounting {
                    restore: set.then_some(v),
                    on: set,
                }
            }
            Err(_) => DelayAccounting {
                restore: None,
                on: false,
            },
        }
    }
}

/// True when delay accounting is on now.
pub fn delay_accounting_on() -> bool {
    crate::sample::read_proc(DELAYACCT).is_ok_and(|s| s.trim() == "1")
}

impl Drop for DelayAccounting {
    fn drop(&mut self) {
        if let Some(v) = self.restore.take() {
            let _ = std::fs::write(DELAYACCT, v);
        }
    }
}

/// Held by tests whose threads end marked as background writers, so a test that counts the
/// ended ones counts its own alone.
#[cfg(test)]
pub(crate) static BACKGROUND_ENDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_tasks_files() {
        assert_eq!(parse_schedstat("1234 567 8\n"), Some((1234, 567)));
        assert_eq!(parse_schedstat("x"), None);
        // 52 fields, as Linux 6 writes them; start time 4321, block IO delay 17 ticks.
        let mut f: Vec<String> = (1..=52).map(|i| i.to_string()).collect();
        f[1] = "(a (b) c)".into();
        f[21] = "4321".into();
        f[41] = "17".into();
        assert_eq!(parse_task_stat(&f.join(" ")), Some((4321, 17)));
    }

    fn snap(entries: &[(u32, Whose, Times)]) -> Snapshot {
        Snapshot {
            threads: entries.iter().map(|(t, w, x)| (*t, (*w, *x))).collect(),
            took_ns: 0,
        }
    }

    fn times(cpu_ms: u64, runq_ms: u64, blkio_ms: u64, alive_ms: u64) -> Times {
        let ns = |ms: u64| ms * 1_000_000;
        Times {
            cpu_ns: ns(cpu_ms),
            runq_ns: ns(runq_ms),
            blkio_ns: ns(blkio_ms),
            alive_ns: ns(alive_ms),
        }
    }

    /// A window of one second: a client thread that lived through it, one born half way, an
    /// idle and a busy engine thread; the clients' pacing comes out of their rest.
    #[test]
    fn sums_each_groups_time() {
        let start = snap(&[
            (1, Whose::Client, times(100, 10, 0, 5_000)),
            (3, Whose::Engine, times(0, 0, 0, 5_000)),
            (4, Whose::Engine, times(50, 0, 0, 5_000)),
        ]);
        let end = snap(&[
            (1, Whose::Client, times(500, 110, 100, 6_000)),
            (2, Whose::Client, times(100, 0, 0, 500)),
            (3, Whose::Engine, times(1, 0, 0, 6_000)),
            (4, Whose::Engine, times(350, 100, 200, 6_000)),
            // A first IO wait charged from a start never stamped.
            (5, Whose::Harness, times(100, 0, 2_574_000, 1_000)),
        ]);
        let t = time_between(&start, &end, true, Some(0.2));
        let c = &t.clients;
        assert_eq!((c.threads, c.busy), (2, 2));
        assert!((c.wall_s - 1.5).abs() < 1e-9, "{c:?}");
        assert!((c.cpu_s - 0.5).abs() < 1e-9);
        assert!((c.runq_s - 0.1).abs() < 1e-9);
        assert_eq!(c.blkio_s, Some(0.1));
        assert_eq!(c.paced_s, Some(0.2));
        assert!((c.other_s - (1.5 - 0.5 - 0.1 - 0.1 - 0.2)).abs() < 1e-9);
        let e = &t.engine;
        assert_eq!(
            (e.threads, e.busy),
            (2, 1),
            "the idle thread is seen, not counted"
        );
        assert!((e.wall_s - 1.0).abs() < 1e-9);
        assert!((e.cpu_s - 0.3).abs() < 1e-9);
        assert!((e.other_s - 0.4).abs() < 1e-9);
        let h = &t.harness;
        assert_eq!((h.blkio_s, h.blkio_dropped), (Some(0.0), 1), "{h:?}");
        assert!((h.other_s - 0.9).abs() < 1e-9);
        // Without delay accounting, IO waits are not told apart.
        let t = time_between(&start, &end, false, None);
        assert_eq!(t.clients.blkio_s, None);
        assert_eq!(t.clients.paced_s, None);
    }

    /// This process's threads are read; a marked thread that ended is counted with its last
    /// times, once.
    #[test]
    fn reads_this_process_and_ended_threads() {
        let _alone = BACKGROUND_ENDING.lock().unwrap_or_else(|p| p.into_inner());
        let start = snapshot(&[], true);
        let h = std::thread::spawn(|| {
            mark(Whose::Background);
            // 30 ms of this thread's own CPU, however busy the host (wall time is not).
            let cpu = || crate::tick::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
            let t = cpu();
            while cpu() - t < 30_000_000 {
                std::hint::black_box(0u64);
            }
            retire();
        });
        h.join().unwrap();
        let end = snapshot(&[], true);
        let t = time_between(&start, &end, false, None);
        let b = t.background.clone().expect("the ended thread is counted");
        assert_eq!(b.threads, 1);
        assert!(b.cpu_s >= 0.02, "{b:?}");
        assert!(t.harness.threads >= 1, "the test's own thread: {t:?}");
        let again = snapshot(&[], true);
        assert!(
            time_between(&end, &again, false, None).background.is_none(),
            "an ended thread counts in one window only"
        );
    }
}
