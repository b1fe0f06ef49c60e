//! `--waits=bpf`: loads the eBPF program of `bpf/waits.bpf.c` (built with fathom by `build.rs`)
//! on the scheduler's tracepoints, tells it which processes to watch, and reads what it timed:
//! each watched thread's time on a CPU or runnable, and its time asleep by (system call,
//! uninterruptible or not, and with stacks where each sleep began), exact to the nanosecond at
//! the moment of reading; `symbols` names the stacks' addresses.

pub mod symbols;
pub mod unwind;

use aya::maps::{Array, HashMap, MapData, RingBuf, StackTraceMap};
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf, EbpfLoader};

// Aligned: the ELF parser reads its headers in place.
const OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/waits.bpf.o"));
const NOT_BUILT: &str = include_str!(concat!(env!("OUT_DIR"), "/waits.bpf.why"));

/// The stack id of a sleep that began before watching did: no stack was taken.
pub const SEEDED: i32 = -2;

/// The `nr` of a long sleep that was a wait for a CPU (from a wakeup or a preemption to the
/// thread's next switch onto one), not a sleep.
pub const RUNNABLE_NR: i32 = -2;

/// One thread's state, as the program keeps it (`struct thread`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Thread {
    /// When it last fell asleep or stopped sleeping, ns of CLOCK_MONOTONIC.
    pub last: u64,
    /// On a CPU or runnable up to `last`, ns.
    pub cpu_ns: u64,
    /// While asleep: the system call it sleeps in, -1 outside one.
    pub nr: i32,
    pub asleep: u8,
    pub uninterruptible: u8,
    pad: u16,
    /// While asleep, with stacks: its stacks' ids (negative when lost).
    pub kstack: i32,
    pub ustack: i32,
    pub tgid: u32,
    pad2: u32,
    /// Woken or preempted and not yet back on a CPU since, ns; 0 when not.
    pub runnable_since: u64,
    /// A long sleep whose user stack is still to be sent: when it began (0: none), and its
    /// system call.
    pub pending_start: u64,
    pub pending_nr: i32,
    pad3: u32,
}

/// One kind of sleep of one thread (`struct wait_key`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WaitKey {
    pub tid: u32,
    /// The system call, -1 outside one (a page fault).
    pub nr: i32,
    /// 1 for an uninterruptible sleep (state D).
    pub uninterruptible: u32,
    /// With stacks: the kernel and user stacks' ids where the sleep began, else -1.
    pub kstack: i32,
    pub ustack: i32,
    /// The thread's process.
    pub tgid: u32,
}

/// One sleep, whole (`struct long_sleep`): sent by the program for each sleep at least
/// `LONG_SLEEP_NS` long when loaded to.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongSleep {
    /// Whose sleep, and of what kind (with stacks, where it began).
    pub key: WaitKey,
    /// When it began and ended, ns of CLOCK_MONOTONIC.
    pub start: u64,
    pub end: u64,
}

/// The most bytes of a user stack sent (`USER_STACK_BYTES`).
pub const USER_STACK_BYTES: usize = 16384;

/// One long sleep's user stack (`struct user_stack`): the registers where the thread slept
/// in a system call, and the stack's bytes from its stack pointer up.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UserStack {
    pub tid: u32,
    pub tgid: u32,
    /// The sleep's start, as in its `LongSleep`.
    pub start: u64,
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
    /// How many of `bytes` were read.
    pub len: u32,
    pad: u32,
    pub bytes: [u8; USER_STACK_BYTES],
}

impl UserStack {
    /// The bytes read, from `sp` up.
    pub fn stack(&self) -> &[u8] {
        &self.bytes[..(self.len as usize).min(USER_STACK_BYTES)]
    }
}

/// The shortest sleep in a system call whose user stack is sent (with stacks and long
/// sleeps): each costs a copy of up to `USER_STACK_BYTES`, so only sleeps long enough to
/// make an operation slow are walked.
pub const USER_STACK_NS: u64 = 500_000;

/// The shortest sleep sent whole: a round trip on this machine is 20–100 µs, a device read
/// from 30 µs; shorter sleeps are counted in the totals only.
pub const LONG_SLEEP_NS: u64 = 50_000;

// SAFETY: both are plain `repr(C)` data with no padding the program leaves undefined (the
// program writes whole structures), valid for any bit pattern.
unsafe impl aya::Pod for Thread {}
// SAFETY: as above.
unsafe impl aya::Pod for WaitKey {}

/// The program, loaded and attached until dropped.
pub struct Program {
    ebpf: Ebpf,
    /// The long sleeps' ring, taken from the program once (read with `long_sleeps`).
    ring: Option<RingBuf<MapData>>,
    /// The long sleeps' user stacks' ring (read with `user_stacks`).
    user_ring: Option<RingBuf<MapData>>,
    /// Keeps the kernel timing the programs' runs while open (`cost`).
    _stats: Option<std::os::fd::OwnedFd>,
}

/// What the program had timed when read, its pending spans closed at the moment of reading.
#[derive(Debug, Default)]
pub struct Reading {
    /// Each thread's time on a CPU or runnable, ns.
    pub cpu_ns: Vec<(u32, u64)>,
    /// Each thread's time asleep by kind, ns.
    pub asleep_ns: Vec<(WaitKey, u64)>,
    /// Events the program's maps had no room for.
    pub dropped: u64,
}

impl Program {
    /// Loads the program (keeping each sleep's stacks when `stacks`, sending each sleep of at
    /// least `LONG_SLEEP_NS` whole when `long_sleeps`: drain them with `long_sleeps`; with
    /// both, the user stack of each sleep in a system call of at least `USER_STACK_NS`, drained
    /// with `user_stacks`) and attaches it to `sched_switch` and `sched_wakeup` (and then
    /// `sys_exit`); the error says why it cannot (fathom built without it, not root, no kernel
    /// BTF, the kernel refusing).
    pub fn load(stacks: bool, long_sleeps: bool) -> Result<Program, String> {
        if OBJECT.is_empty() {
            return Err(format!(
                "fathom was built without its eBPF program: {NOT_BUILT}"
            ));
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("loading an eBPF program on the scheduler's tracepoints needs root".into());
        }
        let btf = Btf::from_sys_fs().map_err(|e| {
            format!("the kernel's BTF (/sys/kernel/btf/vmlinux) could not be read: {e}")
        })?;
        let walks = stacks && long_sleeps;
        let mut ebpf = EbpfLoader::new()
            // The kernel's BTF parsed once, for the relocations and the attaching both.
            .btf(Some(&btf))
            .set_global("want_stacks", &u8::from(stacks), true)
            .set_global(
                "long_sleep_ns",
                &if long_sleeps { LONG_SLEEP_NS } else { 0 },
                true,
            )
            .set_global(
                "user_stack_ns",
                &if walks { USER_STACK_NS } else { 0 },
                true,
            )
            // The user stacks' ring holds 16 MiB only when they are sent (a page, else).
            .set_max_entries("user_stacks", if walks { 1 << 24 } else { 4096 })
            .load(OBJECT)
            .map_err(|e| format!("the kernel refused the program: {e}"))?;
        let mut attach = vec![("on_switch", "sched_switch"), ("on_wakeup", "sched_wakeup")];
        if walks {
            attach.push(("on_sys_exit", "sys_exit"));
        }
        for (name, tracepoint) in attach {
            let p: &mut BtfTracePoint = ebpf
                .program_mut(name)
                .ok_or_else(|| format!("the program has no {name}"))?
                .try_into()
                .map_err(|e| format!("{name}: {e}"))?;
            p.load(tracepoint, &btf).map_err(|e| {
                format!(
                    "the kernel refused {name} on {tracepoint}: {}",
                    verifier(&e)
                )
            })?;
            p.attach()
                .map_err(|e| format!("{name} could not attach to {tracepoint}: {e}"))?;
        }
        // Without it (kernels before 5.8) the cost reads 0.
        let stats = aya::sys::enable_stats(aya::sys::Stats::RunTime).ok();
        drop(btf);
        release_freed_heap();
        let ring = (ebpf.take_map("long_sleeps")).and_then(|m| RingBuf::try_from(m).ok());
        let user_ring = (ebpf.take_map("user_stacks")).and_then(|m| RingBuf::try_from(m).ok());
        Ok(Program {
            ebpf,
            ring,
            user_ring,
            _stats: stats,
        })
    }

    /// The programs' time in the kernel since loaded, ns, over every CPU.
    pub fn cost(&self) -> u64 {
        self.ebpf
            .programs()
            .filter_map(|(_, p)| p.info().ok())
            .map(|i| i.run_time().as_nanos() as u64)
            .sum()
    }

    /// Watches the threads of process `tgid` from now on.
    pub fn watch(&mut self, tgid: u32) -> Result<(), String> {
        let map = self
            .ebpf
            .map_mut("tgids")
            .ok_or("the program has no tgids map")?;
        let mut tgids: HashMap<&mut MapData, u32, u8> =
            HashMap::try_from(map).map_err(|e| e.to_string())?;
        tgids
            .insert(tgid, 1, 0)
            .map_err(|e| format!("watching process {tgid}: {e}"))
    }

    /// Starts timing thread `tid` of process `tgid` now, as asleep in system call `nr`
    /// (uninterruptibly or not) or running: a thread already asleep when watching begins is
    /// otherwise unknown to the program until it next leaves a CPU. A thread the program knows
    /// already is left as it is.
    pub fn seed(&mut self, tid: u32, tgid: u32, asleep: Option<(i32, bool)>) -> Result<(), String> {
        let map = self
            .ebpf
            .map_mut("threads")
            .ok_or("the program has no threads map")?;
        let mut threads: HashMap<&mut MapData, u32, Thread> =
            HashMap::try_from(map).map_err(|e| e.to_string())?;
        let t = Thread {
            last: monotonic_ns(),
            nr: asleep.map_or(0, |a| a.0),
            asleep: u8::from(asleep.is_some()),
            uninterruptible: asleep.map_or(0, |a| u8::from(a.1)),
            kstack: SEEDED,
            ustack: SEEDED,
            tgid,
            ..Thread::default()
        };
        // BPF_NOEXIST: the program's own entry, if any, is the truer one.
        match threads.insert(tid, t, 1) {
            Ok(()) => Ok(()),
            Err(e) if e.to_string().contains("exists") => Ok(()),
            Err(e) => Err(format!("seeding thread {tid}: {e}")),
        }
    }

    /// What the program has timed so far.
    pub fn read(&self) -> Result<Reading, String> {
        let map = |name: &str| {
            self.ebpf
                .map(name)
                .ok_or(format!("the program has no {name} map"))
        };
        let threads: HashMap<&MapData, u32, Thread> =
            HashMap::try_from(map("threads")?).map_err(|e| e.to_string())?;
        let waits: HashMap<&MapData, WaitKey, u64> =
            HashMap::try_from(map("waits")?).map_err(|e| e.to_string())?;
        let dropped: Array<&MapData, u64> =
            Array::try_from(map("dropped")?).map_err(|e| e.to_string())?;
        let mut r = Reading {
            dropped: dropped.get(&0, 0).unwrap_or(0),
            ..Reading::default()
        };
        // Entries that go away while being listed are skipped.
        let mut state: Vec<(u32, Thread)> = threads.iter().filter_map(Result::ok).collect();
        r.asleep_ns = waits.iter().filter_map(Result::ok).collect();
        let now = monotonic_ns();
        state.sort_by_key(|s| s.0);
        for (tid, t) in state {
            let open = now.saturating_sub(t.last);
            if t.asleep == 0 {
                r.cpu_ns.push((tid, t.cpu_ns + open));
                continue;
            }
            r.cpu_ns.push((tid, t.cpu_ns));
            let key = WaitKey {
                tid,
                nr: t.nr,
                uninterruptible: u32::from(t.uninterruptible),
                kstack: t.kstack,
                ustack: t.ustack,
                tgid: t.tgid,
            };
            match r.asleep_ns.iter_mut().find(|w| w.0 == key) {
                Some(w) => w.1 += open,
                None => r.asleep_ns.push((key, open)),
            }
        }
        Ok(r)
    }
}

impl Program {
    /// The long sleeps sent since the last call, oldest first.
    pub fn long_sleeps(&mut self) -> Vec<LongSleep> {
        let Some(ring) = self.ring.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Some(item) = ring.next() {
            if item.len() >= std::mem::size_of::<LongSleep>() {
                // SAFETY: the program writes whole `struct long_sleep`s, which `LongSleep`
                // mirrors; the read is unaligned-safe.
                out.push(unsafe { std::ptr::read_unaligned(item.as_ptr().cast::<LongSleep>()) });
            }
        }
        out
    }

    /// The user stacks sent since the last call, oldest first.
    pub fn user_stacks(&mut self) -> Vec<Box<UserStack>> {
        let Some(ring) = self.user_ring.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Some(item) = ring.next() {
            if item.len() >= std::mem::size_of::<UserStack>() {
                // SAFETY: the program writes whole `struct user_stack`s, which `UserStack`
                // mirrors (any bit pattern valid); the read is unaligned-safe.
                out.push(Box::new(unsafe {
                    std::ptr::read_unaligned(item.as_ptr().cast::<UserStack>())
                }));
            }
        }
        out
    }

    /// The addresses of stack `id`, innermost first (`None` for a lost or unknown one).
    pub fn stack(&self, id: i32) -> Option<Vec<u64>> {
        let id = u32::try_from(id).ok()?;
        let map: StackTraceMap<&MapData> =
            StackTraceMap::try_from(self.ebpf.map("stacks")?).ok()?;
        let trace = map.get(&id, 0).ok()?;
        Some(trace.frames().iter().map(|f| f.ip).collect())
    }
}

/// Gives the C library's freed heap back to the system. Parsing the kernel's BTF takes tens
/// of MiB for a moment; freed, the allocator would keep them, and under `--memory-limit`
/// (fathom in the engine's group) they would count against the engine's memory.
pub fn release_freed_heap() {
    // SAFETY: malloc_trim only returns free memory at the arenas' tops and free pages inside
    // them to the system, under the arenas' locks.
    unsafe { libc::malloc_trim(0) };
}

/// The first lines of the verifier's log in a load error, or the error.
fn verifier(e: &aya::programs::ProgramError) -> String {
    let s = e.to_string();
    s.lines().take(3).collect::<Vec<_>>().join(" / ")
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: one valid timespec to write, for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `lock` (a function of its own, for its stack's frame to be named).
    #[inline(never)]
    fn waits_for_the_lock(lock: &std::sync::Mutex<()>) {
        drop(lock.lock().unwrap());
    }

    /// A thread of this process asleep on a lock for 300 ms is timed asleep in futex that long.
    #[test]
    fn times_a_lock_wait() {
        let mut p = match Program::load(true, true) {
            Ok(p) => p,
            Err(e) if unsafe { libc::geteuid() } != 0 => {
                assert!(e.contains("root"), "{e}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        p.watch(std::process::id()).unwrap();
        let lock = std::sync::Arc::new(std::sync::Mutex::new(()));
        let held = lock.lock().unwrap();
        let l2 = std::sync::Arc::clone(&lock);
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tx.send(unsafe { libc::gettid() } as u32).unwrap();
            waits_for_the_lock(&l2);
        });
        let tid = rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(held);
        waiter.join().unwrap();
        let r = p.read().unwrap();
        let futex: u64 = r
            .asleep_ns
            .iter()
            .filter(|w| w.0.tid == tid && w.0.nr == 202)
            .map(|w| w.1)
            .sum();
        assert!(
            (250_000_000..400_000_000).contains(&futex),
            "{futex} ns in futex: {r:?}"
        );
        // The wait's kernel stack was kept and is named.
        let key = r
            .asleep_ns
            .iter()
            .find(|w| w.0.tid == tid && w.0.nr == 202)
            .unwrap()
            .0;
        // The wait was also sent whole, about as long.
        let whole: Vec<LongSleep> = p
            .long_sleeps()
            .into_iter()
            .filter(|l| l.key.tid == tid)
            .collect();
        assert!(
            whole
                .iter()
                .any(|l| l.key.nr == 202 && (250_000_000..400_000_000).contains(&(l.end - l.start))),
            "{whole:?}"
        );
        let frames = p.stack(key.kstack).expect("a kernel stack");
        let mut names = symbols::Symbols::default();
        let named: Vec<String> = frames.iter().map(|&a| names.kernel(a)).collect();
        assert!(named.iter().any(|n| n.contains("futex")), "{named:?}");
        // Its user stack was sent, and walks past the C library and Rust's locks to the
        // function that waited.
        let stacks = p.user_stacks();
        let mine = stacks
            .iter()
            .find(|u| u.tid == tid)
            .expect("the wait's user stack");
        let mut walker = unwind::Walker::default();
        let frames = walker.walk(&mut names, mine);
        let place = unwind::place(&mut names, mine.tgid, &frames);
        let all: Vec<String> = frames.iter().map(|&a| names.user(mine.tgid, a)).collect();
        assert!(
            place
                .as_deref()
                .is_some_and(|p| p.contains("waits_for_the_lock")),
            "{place:?} of {all:?}"
        );
    }
}

#[cfg(test)]
mod draining {
    use super::*;
    use std::time::Duration;

    /// Four threads sleeping 100 µs 2,000 times each, drained every 20 ms as the waits
    /// sampler does: every sleep arrives, once (a ring made afresh at each drain once read
    /// the same records forever).
    #[test]
    fn every_long_sleep_is_drained_once() {
        let Ok(mut p) = Program::load(false, true) else {
            return;
        };
        p.watch(std::process::id()).unwrap();
        let sleeper = || {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() } as u32;
            for _ in 0..2000 {
                std::thread::sleep(Duration::from_micros(100));
            }
            tid
        };
        let threads: Vec<_> = (0..4).map(|_| std::thread::spawn(sleeper)).collect();
        let mut got = Vec::new();
        while threads.iter().any(|h| !h.is_finished()) {
            got.extend(p.long_sleeps());
            std::thread::sleep(Duration::from_millis(20));
        }
        let tids: Vec<u32> = threads.into_iter().map(|h| h.join().unwrap()).collect();
        got.extend(p.long_sleeps());
        // On a busy host a sleeper also sends its waits for a CPU (`RUNNABLE_NR`); and one
        // preempted on its way into `nanosleep` spends part of its 100 µs runnable and the
        // rest asleep, and one of the two parts, at least 50 µs, is sent. None read twice: at
        // most one sleep record a sleep. None lost: every sleep in some record, but those the
        // program counts as dropped (its ring full).
        let dropped = p.read().unwrap().dropped as usize;
        for tid in tids {
            let mine = || got.iter().filter(|l| l.key.tid == tid);
            let sleeps = mine().filter(|l| l.key.nr != RUNNABLE_NR).count();
            let records = mine().count();
            assert!(
                sleeps <= 2010 && records + dropped >= 2000,
                "thread {tid}: {sleeps} sleeps of {records} records, {dropped} dropped"
            );
        }
    }
}
