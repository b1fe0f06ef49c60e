//! `--waits`: what the threads that were not on a CPU waited on, by sampling. A thread of its
//! own looks at every counted thread (fathom's clients always; fathom's other threads and the
//! engine's while busy) `HZ` times a second: its state in `/proc/PID/task/TID/stat` and, when
//! it sleeps, the system call it sleeps in (`syscall`), which names the kind of wait — a lock
//! (futex), a sync to the device (the fsync family), a timer, the network or a pipe (poll and
//! socket reads), block IO (reads, aio, uninterruptible sleep), a page fault. Each sample of a
//! thread stands for 1/HZ of its time. With `--waits=bpf` the same kinds are timed exactly by
//! an eBPF program on the scheduler's tracepoints (`fathom-bpf`), read every `REFRESH` for the
//! same threads, and named by the same `classify`.

mod exact;
mod kinds;
mod long;

pub use kinds::{bpf_loads, classify, deserialize_method, Kind, Method};

use super::procfs::OpenFiles;
use super::threads::{self, Whose};
pub use fathom_schema::result::threads::{GroupWaits, Waits};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Samples per second of each thread.
pub const HZ: u32 = 50;

/// How often the threads looked at are found again (clients start after the sampler; threads
/// come and go).
const REFRESH: Duration = Duration::from_millis(200);

/// What the thread of a step's waits leaves: the figures, and with `bpf-stacks` the folded
/// lines of the time asleep (`group;kind;process;user frames;kernel frames NS`).
#[derive(Debug)]
pub struct Finished {
    pub waits: Waits,
    pub folded: Vec<String>,
    /// With `--waits=bpf`: each client sleep, and wait for a CPU, of at least
    /// `fathom_bpf::LONG_SLEEP_NS`, whole, up to `MAX_SLEEPS`.
    pub sleeps: Vec<Sleep>,
}

/// One client thread's sleep, or wait for a CPU, whole (`--waits=bpf`): laid against the
/// step's slowest operations.
#[derive(Clone, Debug, PartialEq)]
pub struct Sleep {
    pub tid: u32,
    /// The kind of wait it slept in; `None` for a wait for a CPU (runnable, not on one).
    pub kind: Option<Kind>,
    /// When it began and ended, ns of CLOCK_MONOTONIC.
    pub start_ns: u64,
    pub end_ns: u64,
    /// With `bpf-stacks`, for a sleep in a system call of at least `fathom_bpf::USER_STACK_NS`:
    /// where it slept, its stack's first frame outside the runtimes, with its caller.
    pub at: Option<Arc<str>>,
}

/// What a wait for a CPU is called where sleeps are named by kind (as the bound's share).
pub const WAITING_FOR_A_CPU: &str = "waiting for a cpu";

impl Sleep {
    /// Its kind's name, or `WAITING_FOR_A_CPU`.
    pub fn what(&self) -> &'static str {
        self.kind.map_or(WAITING_FOR_A_CPU, Kind::name)
    }
}

/// Client sleeps kept a step at most (40 bytes each): past them, later slow operations have
/// no sleeps to be laid against, and the step says how many were left out.
pub const MAX_SLEEPS: usize = 1_000_000;

/// The thread that samples (or, with `--waits=bpf`, reads the program) over one step, from
/// `start` until `finish`.
pub struct WaitSampler {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Finished>>,
}

/// The threads to look at and whose each is, refreshed every `REFRESH`: clients always,
/// others while busy.
struct Watched {
    threads: Vec<(u32, Whose)>,
    last: threads::Snapshot,
    at: Instant,
}

/// Seconds of each group's threads by kind, and how many looks at them it took.
#[derive(Default)]
struct Tally {
    seconds: BTreeMap<(Whose, Kind), f64>,
    looks: BTreeMap<Whose, u64>,
}

/// The group a thread counts in: a background client with the clients.
fn group_of(whose: Whose) -> Whose {
    if whose == Whose::Background {
        Whose::Client
    } else {
        whose
    }
}

/// A group's name in the folded stacks.
fn group_name(whose: Whose) -> &'static str {
    match whose {
        Whose::Client | Whose::Background => "clients",
        Whose::Harness => "harness",
        Whose::Engine => "engine",
    }
}

impl Tally {
    fn add(&mut self, whose: Whose, kind: Kind, seconds: f64) {
        *self.seconds.entry((group_of(whose), kind)).or_default() += seconds;
    }

    fn looked(&mut self, whose: Whose) {
        *self.looks.entry(group_of(whose)).or_default() += 1;
    }

    fn group(&self, w: Whose, exact: bool) -> GroupWaits {
        let mut g = GroupWaits {
            samples: self.looks.get(&w).copied().unwrap_or(0),
            exact,
            ..GroupWaits::default()
        };
        for k in Kind::ALL {
            let s = self.seconds.get(&(w, k)).copied().unwrap_or(0.0);
            g.seconds.insert(k.name().into(), s);
        }
        g
    }

    fn waits(&self, method: Method, hz: u32, cost_ms: f64) -> Waits {
        let exact = method.is_bpf();
        Waits {
            method: method.name().into(),
            hz,
            clients: self.group(Whose::Client, exact),
            harness: self.group(Whose::Harness, exact),
            engine: self.group(Whose::Engine, exact),
            unreadable: 0,
            cost_ms,
            dropped: 0,
            sleeps_left_out: 0,
            stacks: None,
        }
    }
}

/// `--waits` made ready before a step: its method and, with `bpf`, the program already loaded
/// (and checked by the kernel), so the step's measured span starts without that delay.
pub struct Ready {
    program: Option<(fathom_bpf::Program, bool)>,
}

impl Ready {
    /// Ready for `method` (`None`: no `--waits`); the error says why the program cannot load.
    pub fn new(method: Option<Method>) -> anyhow::Result<Option<Ready>> {
        let Some(m) = method else {
            return Ok(None);
        };
        let program = if m.is_bpf() {
            let stacks = m == Method::BpfStacks;
            let p = fathom_bpf::Program::load(stacks, true).map_err(|e| {
                anyhow::anyhow!(
                    "--waits={}: {e}; --waits (sampling) works without it",
                    m.name()
                )
            })?;
            Some((p, stacks))
        } else {
            None
        };
        Ok(Some(Ready { program }))
    }

    /// Starts looking at the threads of fathom's process and of `server_pids`, now.
    pub fn start(self, server_pids: Vec<u32>, embedded: bool) -> std::io::Result<WaitSampler> {
        WaitSampler::start(self.program, server_pids, embedded)
    }
}

impl Finished {
    /// The step's waits, their folded stacks (with `bpf-stacks`) written to `path` first and
    /// named in them as `in_run` (the file's path relative to the run directory).
    pub fn keep(self, path: &std::path::Path, in_run: String) -> std::io::Result<Waits> {
        let mut waits = self.waits;
        if waits.method == Method::BpfStacks.name() {
            let mut text = self.folded.join("\n");
            text.push('\n');
            std::fs::write(path, text)?;
            waits.stacks = Some(in_run);
        }
        Ok(waits)
    }
}

impl WaitSampler {
    /// Starts looking at the threads of fathom's process and of `server_pids` (none embedded):
    /// sampling them, or with `program` (`--waits=bpf`, loaded before the step) reading what it
    /// timed (and with `stacks`, where).
    pub fn start(
        program: Option<(fathom_bpf::Program, bool)>,
        server_pids: Vec<u32>,
        embedded: bool,
    ) -> std::io::Result<WaitSampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let (ready, started) = std::sync::mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("fathom:waits".into())
            .spawn(move || {
                threads::mark(Whose::Harness);
                let waits = match program {
                    Some((p, stacks)) => {
                        exact::time_exactly(p, stacks, &server_pids, embedded, &stopping, ready)
                    }
                    None => {
                        let _ = ready.send(());
                        Finished {
                            waits: sample(&server_pids, embedded, &stopping),
                            folded: Vec::new(),
                            sleeps: Vec::new(),
                        }
                    }
                };
                threads::retire();
                waits
            })?;
        // The program watches every thread there is before the span it measures begins.
        let _ = started.recv_timeout(Duration::from_secs(5));
        Ok(WaitSampler {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops looking: what it saw.
    pub fn finish(mut self) -> Option<Finished> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take()?.join().ok()
    }
}

impl Drop for WaitSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The calling thread's CPU time, ns.
fn thread_cpu_ns() -> u64 {
    crate::tick::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Sleeps until `next`, one `period` later each call.
fn tick(next: &mut Instant, period: Duration) {
    *next += period;
    let now = Instant::now();
    if *next > now {
        std::thread::sleep(*next - now);
    } else {
        *next = now;
    }
}

/// What a look at a thread found.
struct Look {
    /// `stat`'s state, `R` also when woken between the two reads.
    state: char,
    /// The system call it sleeps in (-1 outside one), `None` running or unreadable.
    nr: Option<i64>,
    /// Its `syscall` could not be read (another user's process without root).
    unreadable: bool,
}

/// A look at thread `tid`'s state and system call through `files` (kept open from look to
/// look); `None` when it is gone.
fn look(tid: u32, files: &OpenFiles) -> Option<Look> {
    // A thread's own directory, listed or not under /proc.
    let dir = format!("/proc/{tid}");
    let stat = files.read(&format!("{dir}/stat")).ok()?;
    let state = stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .next()?
        .chars()
        .next()?;
    if state == 'R' {
        return Some(Look {
            state,
            nr: None,
            unreadable: false,
        });
    }
    Some(match files.read(&format!("{dir}/syscall")) {
        Ok(t) if t.starts_with("running") => Look {
            state: 'R',
            nr: None,
            unreadable: false,
        },
        Ok(t) => Look {
            state,
            nr: t
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<i64>().ok()),
            unreadable: false,
        },
        Err(_) => Look {
            state,
            nr: None,
            unreadable: true,
        },
    })
}

fn sample(server_pids: &[u32], embedded: bool, stop: &AtomicBool) -> Waits {
    let began = thread_cpu_ns();
    let period = Duration::from_secs(1) / HZ;
    let mut tally = Tally::default();
    let mut unreadable = 0;
    let mut watched = Watched::new(server_pids, embedded);
    let files = OpenFiles::default();
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if watched.at.elapsed() >= REFRESH {
            watched.refresh(server_pids, embedded);
            let tids: Vec<u32> = watched.threads.iter().map(|t| t.0).collect();
            files.keep_processes(&tids);
        }
        for &(tid, whose) in &watched.threads {
            let Some(look) = look(tid, &files) else {
                continue;
            };
            unreadable += u64::from(look.unreadable);
            tally.add(whose, classify(look.state, look.nr), 1.0 / f64::from(HZ));
            tally.looked(whose);
        }
        tick(&mut next, period);
    }
    let cost_ms = thread_cpu_ns().saturating_sub(began) as f64 / 1e6;
    Waits {
        unreadable,
        ..tally.waits(Method::Sample, HZ, cost_ms)
    }
}

impl Watched {
    fn new(server_pids: &[u32], embedded: bool) -> Watched {
        let last = threads::snapshot(server_pids, embedded);
        let mut w = Watched {
            threads: Vec::new(),
            last: last.clone(),
            at: Instant::now(),
        };
        // At first every thread is looked at; from the first refresh, the busy ones.
        w.threads = last.members().map(|(tid, whose, _)| (tid, whose)).collect();
        w.drop_own();
        w
    }

    /// The clients, and the other threads busy since the last refresh.
    fn refresh(&mut self, server_pids: &[u32], embedded: bool) {
        let now = threads::snapshot(server_pids, embedded);
        let secs = self.at.elapsed().as_nanos() as u64;
        self.threads = now
            .members()
            .filter(|(tid, whose, t)| {
                matches!(whose, Whose::Client | Whose::Background)
                    || self.last.busy_since(*tid, t, secs)
            })
            .map(|(tid, whose, _)| (tid, whose))
            .collect();
        self.drop_own();
        self.last = now;
        self.at = Instant::now();
    }

    /// The sampler does not sample itself.
    fn drop_own(&mut self) {
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() } as u32;
        self.threads.retain(|t| t.0 != me);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_the_kinds_of_wait() {
        assert_eq!(classify('R', None), Kind::Cpu);
        assert_eq!(classify('S', Some(202)), Kind::Futex);
        assert_eq!(classify('D', Some(75)), Kind::Fsync);
        assert_eq!(classify('S', Some(230)), Kind::Sleep);
        assert_eq!(classify('S', Some(7)), Kind::Socket);
        assert_eq!(
            classify('S', Some(0)),
            Kind::Socket,
            "a read asleep: a socket"
        );
        assert_eq!(
            classify('D', Some(17)),
            Kind::Io,
            "a pread in D: the device"
        );
        assert_eq!(classify('D', Some(-1)), Kind::Fault);
        assert_eq!(classify('S', Some(61)), Kind::Other);
    }

    #[test]
    fn a_share_has_its_error() {
        let mut g = GroupWaits {
            samples: 100,
            ..Default::default()
        };
        g.seconds.insert("futex".into(), 1.0);
        g.seconds.insert("cpu".into(), 1.0);
        let (p, e) = g.share("futex").unwrap();
        assert!((p - 0.5).abs() < 1e-9);
        assert!((e - 0.05).abs() < 1e-9);
        assert_eq!(GroupWaits::default().share("cpu"), None);
    }

    /// A thread asleep on a lock for 0.6 s and one spinning, both started after `program`
    /// (or the sampler): what was seen, and the folded stacks.
    fn lock_and_spinner(program: Option<(fathom_bpf::Program, bool)>) -> Finished {
        let s = WaitSampler::start(program, Vec::new(), true).unwrap();
        let lock = Arc::new(std::sync::Mutex::new(()));
        let held = lock.lock().unwrap();
        let (l2, done) = (Arc::clone(&lock), Arc::new(AtomicBool::new(false)));
        let d2 = Arc::clone(&done);
        let waiter = std::thread::spawn(move || {
            threads::mark(Whose::Client);
            drop(l2.lock().unwrap());
            threads::retire();
        });
        let spinner = std::thread::spawn(move || {
            threads::mark(Whose::Client);
            while !d2.load(Ordering::Relaxed) {
                std::hint::black_box(0u64);
            }
            threads::retire();
        });
        std::thread::sleep(Duration::from_millis(600));
        let w = s.finish().unwrap();
        drop(held);
        done.store(true, Ordering::Relaxed);
        waiter.join().unwrap();
        spinner.join().unwrap();
        w
    }

    /// A thread asleep on a lock and one spinning are told apart.
    #[test]
    fn samples_a_lock_wait_and_a_busy_thread() {
        let w = lock_and_spinner(None).waits;
        // Each thread 0.6 s in its state; other tests' clients may add to either.
        let secs = |k: &str| w.clients.seconds.get(k).copied().unwrap_or(0.0);
        assert!(secs("futex") >= 0.3 && secs("cpu") >= 0.3, "{w:?}");
        assert_eq!(w.method, "sample");
    }

    /// The same, timed by the eBPF program (as root): exact, with the lock's stack folded.
    #[test]
    fn times_a_lock_wait_and_a_busy_thread_exactly() {
        let program = match fathom_bpf::Program::load(true, true) {
            Ok(p) => p,
            // SAFETY: geteuid has no preconditions.
            Err(e) if unsafe { libc::geteuid() } != 0 => {
                assert!(e.contains("needs root"), "{e}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let f = lock_and_spinner(Some((program, true)));
        let w = &f.waits;
        let secs = |k: &str| w.clients.seconds.get(k).copied().unwrap_or(0.0);
        // Watched from the first refresh (200 ms in) to the end: 0.4 s each or more.
        assert!(secs("futex") >= 0.35 && secs("cpu") >= 0.35, "{w:?}");
        assert!(w.clients.exact && w.method == "bpf-stacks", "{w:?}");
        assert_eq!(w.clients.share("futex").unwrap().1, 0.0);
        assert!(
            f.folded
                .iter()
                .any(|l| l.starts_with("clients;futex;") && l.contains("futex_wait")),
            "{:?}",
            f.folded
        );
    }
}
