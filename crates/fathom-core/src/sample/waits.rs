//! `--waits`: what the threads that were not on a CPU waited on, by sampling. A thread of its
//! own looks at every counted thread (fathom's clients always; fathom's other threads and the
//! engine's while busy) `HZ` times a second: its state in `/proc/PID/task/TID/stat` and, when
//! it sleeps, the system call it sleeps in (`syscall`), which names the kind of wait — a lock
//! (futex), a sync to the device (the fsync family), a timer, the network or a pipe (poll and
//! socket reads), block IO (reads, aio, uninterruptible sleep), a page fault. Each sample of a
//! thread stands for 1/HZ of its time.

use super::threads::{self, Whose};
use fathom_macros::Merge;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Samples per second of each thread.
pub const HZ: u32 = 50;

/// How often the threads looked at are found again (clients start after the sampler; threads
/// come and go).
const REFRESH: Duration = Duration::from_millis(200);

/// What a sampled thread was doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// On a CPU or runnable (state R).
    Cpu,
    Futex,
    Fsync,
    Sleep,
    /// poll, select, epoll, socket and pipe reads and writes.
    Socket,
    /// File reads and writes, aio and io_uring waits, any other uninterruptible sleep.
    Io,
    /// A page fault (asleep outside a system call).
    Fault,
    Other,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Cpu,
        Kind::Futex,
        Kind::Fsync,
        Kind::Sleep,
        Kind::Socket,
        Kind::Io,
        Kind::Fault,
        Kind::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Cpu => "cpu",
            Kind::Futex => "futex",
            Kind::Fsync => "fsync",
            Kind::Sleep => "sleep",
            Kind::Socket => "socket",
            Kind::Io => "io",
            Kind::Fault => "fault",
            Kind::Other => "other",
        }
    }
}

/// The kind of wait of a thread in state `state` (`stat`'s third field) inside system call
/// `nr` (`syscall`'s first field; -1 outside one, `None` when running or unreadable), by the
/// x86-64 numbers.
pub fn classify(state: char, nr: Option<i64>) -> Kind {
    if state == 'R' {
        return Kind::Cpu;
    }
    let kind = match nr {
        Some(202) => Kind::Futex,
        // fsync, fdatasync, msync, sync, sync_file_range, syncfs
        Some(74 | 75 | 26 | 162 | 277 | 306) => Kind::Fsync,
        // nanosleep, clock_nanosleep, pause
        Some(35 | 230 | 34) => Kind::Sleep,
        // poll, select, sendto, recvfrom, sendmsg, recvmsg, accept, connect, epoll_wait,
        // pselect6, ppoll, epoll_pwait, accept4, recvmmsg, sendmmsg, epoll_pwait2
        Some(
            7 | 23 | 44 | 45 | 46 | 47 | 43 | 42 | 232 | 270 | 271 | 281 | 288 | 299 | 307 | 441,
        ) => Kind::Socket,
        // read, write, pread64, pwrite64, readv, writev, preadv, pwritev, io_getevents,
        // io_submit, io_uring_enter, preadv2, pwritev2, fallocate, openat, unlink, rename
        Some(
            0 | 1 | 17 | 18 | 19 | 20 | 295 | 296 | 208 | 209 | 426 | 327 | 328 | 285 | 257 | 87
            | 82,
        ) => {
            // A read asleep interruptibly waits for a socket or a pipe; uninterruptibly, for
            // the device.
            if state == 'D' || matches!(nr, Some(208 | 426)) {
                Kind::Io
            } else {
                Kind::Socket
            }
        }
        Some(-1) if state == 'D' => Kind::Fault,
        _ if state == 'D' => Kind::Io,
        _ => Kind::Other,
    };
    if cfg!(target_arch = "x86_64") {
        kind
    } else if state == 'D' {
        Kind::Io
    } else {
        Kind::Other
    }
}

/// One group's samples by kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(sum(samples, seconds))]
pub struct GroupWaits {
    /// Samples taken of the group's counted threads.
    pub samples: u64,
    /// Threads' seconds by kind (`cpu`, `futex`, `fsync`, `sleep`, `socket`, `io`, `fault`,
    /// `other`): samples / HZ.
    pub seconds: BTreeMap<String, f64>,
}

impl GroupWaits {
    /// The share of `kind`, and its sampling error (one standard error, the samples taken as
    /// independent), both as fractions.
    pub fn share(&self, kind: &str) -> Option<(f64, f64)> {
        let total: f64 = self.seconds.values().sum();
        if total <= 0.0 || self.samples == 0 {
            return None;
        }
        let p = self.seconds.get(kind).copied().unwrap_or(0.0) / total;
        Some((p, (p * (1.0 - p) / self.samples as f64).sqrt()))
    }
}

/// A step's waits, by group of threads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Merge)]
#[merge(fields(clients, harness, engine), max(hz, cost_ms), sum(unreadable))]
pub struct Waits {
    pub hz: u32,
    pub clients: GroupWaits,
    pub harness: GroupWaits,
    pub engine: GroupWaits,
    /// Samples whose system call could not be read (another user's process without root).
    #[serde(default)]
    pub unreadable: u64,
    /// The sampler's own CPU time over the step, ms.
    pub cost_ms: f64,
}

/// The sampling thread of one step, from `start` until `finish`.
pub struct WaitSampler {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Waits>>,
}

/// The threads to look at and whose each is, refreshed every `REFRESH`: clients always,
/// others while busy.
struct Watched {
    threads: Vec<(u32, Whose)>,
    last: threads::Snapshot,
    at: Instant,
}

impl WaitSampler {
    /// Starts sampling the threads of fathom's process and of `server_pids` (none embedded).
    pub fn start(server_pids: Vec<u32>, embedded: bool) -> std::io::Result<WaitSampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("fathom:waits".into())
            .spawn(move || {
                threads::mark(Whose::Harness);
                let waits = sample(&server_pids, embedded, &stopping);
                threads::retire();
                waits
            })?;
        Ok(WaitSampler {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops sampling: what it saw.
    pub fn finish(mut self) -> Option<Waits> {
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

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: one valid timespec to write, for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn sample(server_pids: &[u32], embedded: bool, stop: &AtomicBool) -> Waits {
    let began = thread_cpu_ns();
    let period = Duration::from_secs(1) / HZ;
    let mut counts: BTreeMap<(Whose, Kind), u64> = BTreeMap::new();
    let mut unreadable = 0;
    let mut watched = Watched::new(server_pids, embedded);
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if watched.at.elapsed() >= REFRESH {
            watched.refresh(server_pids, embedded);
        }
        for &(tid, whose) in &watched.threads {
            // A thread's own directory, listed or not under /proc.
            let dir = format!("/proc/{tid}");
            let Some(state) = std::fs::read_to_string(format!("{dir}/stat"))
                .ok()
                .and_then(|t| {
                    t[t.rfind(')')? + 1..]
                        .split_whitespace()
                        .next()?
                        .chars()
                        .next()
                })
            else {
                continue;
            };
            let (state, nr) = if state == 'R' {
                (state, None)
            } else {
                match std::fs::read_to_string(format!("{dir}/syscall")) {
                    // Woken between the two reads.
                    Ok(t) if t.starts_with("running") => ('R', None),
                    Ok(t) => (
                        state,
                        t.split_whitespace()
                            .next()
                            .and_then(|n| n.parse::<i64>().ok()),
                    ),
                    Err(_) => {
                        unreadable += 1;
                        (state, None)
                    }
                }
            };
            // A background client counts with the clients.
            let whose = if whose == Whose::Background {
                Whose::Client
            } else {
                whose
            };
            *counts.entry((whose, classify(state, nr))).or_default() += 1;
        }
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    let group = |w: Whose| {
        let mut g = GroupWaits::default();
        for k in Kind::ALL {
            let n = counts.get(&(w, k)).copied().unwrap_or(0);
            g.samples += n;
            g.seconds.insert(k.name().into(), n as f64 / f64::from(HZ));
        }
        g
    };
    Waits {
        hz: HZ,
        clients: group(Whose::Client),
        harness: group(Whose::Harness),
        engine: group(Whose::Engine),
        unreadable,
        cost_ms: thread_cpu_ns().saturating_sub(began) as f64 / 1e6,
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

    /// A thread asleep on a lock and one spinning are told apart.
    #[test]
    fn samples_a_lock_wait_and_a_busy_thread() {
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
        std::thread::sleep(Duration::from_millis(50));
        let s = WaitSampler::start(Vec::new(), true).unwrap();
        std::thread::sleep(Duration::from_millis(600));
        let w = s.finish().unwrap();
        drop(held);
        done.store(true, Ordering::Relaxed);
        waiter.join().unwrap();
        spinner.join().unwrap();
        // Each thread 0.6 s in its state; other tests' clients may add to either.
        let secs = |k: &str| w.clients.seconds.get(k).copied().unwrap_or(0.0);
        assert!(secs("futex") >= 0.3 && secs("cpu") >= 0.3, "{w:?}");
    }
}
