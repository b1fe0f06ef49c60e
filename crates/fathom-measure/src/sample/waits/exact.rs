//! `--waits=bpf`: the sampler's thread reading what the eBPF program (`fathom-bpf`) timed,
//! every `REFRESH`, for the same threads the sampler would look at, each entry named by the
//! same `classify`; with stacks, the time asleep folded by where each sleep began.

use super::long::{Sleeps, StackKey, Walked};
use super::{
    classify, group_name, group_of, look, thread_cpu_ns, Finished, Kind, Method, Tally, Waits,
    Watched, REFRESH,
};
use crate::sample::procfs::OpenFiles;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Nanoseconds asleep by group, kind and stacks (process, kernel stack id, user stack id).
type StackTally = BTreeMap<StackKey, u64>;

/// `--waits=bpf`: every `REFRESH`, what the program timed since the last reading, of the
/// threads watched over that span, named by `classify`; with `stacks`, where each sleep began.
pub(super) fn time_exactly(
    mut program: fathom_bpf::Program,
    stacks: bool,
    server_pids: &[u32],
    embedded: bool,
    stop: &AtomicBool,
    ready: std::sync::mpsc::Sender<()>,
) -> Finished {
    let began = thread_cpu_ns();
    let kernel_before = program.cost();
    let mut watched = Watched::new(server_pids, embedded);
    for pid in std::iter::once(std::process::id()).chain(server_pids.iter().copied()) {
        // A process that cannot be watched leaves its threads untimed: they count nothing.
        let _ = program.watch(pid);
    }
    seed(&mut program, &watched);
    let mut sleeps = Sleeps::new(stacks);
    let _ = ready.send(());
    let mut tally = Tally::default();
    let mut at: StackTally = BTreeMap::new();
    let mut last = Totals::of(&program);
    loop {
        sleeps.drain(&mut program, &watched.threads);
        let stopping = stop.load(Ordering::Relaxed);
        if stopping || watched.at.elapsed() >= REFRESH {
            watched.refresh(server_pids, embedded);
            let now = Totals::of(&program);
            for &(tid, whose) in &watched.threads {
                tally.looked(whose);
                let cpu = now.cpu.get(&tid).copied().unwrap_or(0);
                let cpu_before = last.cpu.get(&tid).copied().unwrap_or(0);
                tally.add(
                    whose,
                    Kind::Cpu,
                    cpu.saturating_sub(cpu_before) as f64 / 1e9,
                );
                for (key, ns) in now.asleep.range(Totals::of_thread(tid)) {
                    let slept = ns.saturating_sub(last.asleep.get(key).copied().unwrap_or(0));
                    let state = if key.uninterruptible == 1 { 'D' } else { 'S' };
                    let kind = classify(state, Some(i64::from(key.nr)));
                    tally.add(whose, kind, slept as f64 / 1e9);
                    if stacks && slept > 0 {
                        let k = (group_of(whose), kind, key.tgid, key.kstack, key.ustack);
                        *at.entry(k).or_default() += slept;
                    }
                }
            }
            last = now;
        }
        if stopping {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let kernel = program.cost().saturating_sub(kernel_before);
    let cost_ms = (thread_cpu_ns().saturating_sub(began) + kernel) as f64 / 1e6;
    let hz = (Duration::from_secs(1).as_millis() / REFRESH.as_millis()) as u32;
    let method = if stacks {
        Method::BpfStacks
    } else {
        Method::Bpf
    };
    sleeps.drain(&mut program, &watched.threads);
    let folded = fold(&program, &at, &mut sleeps.names, &sleeps.walked);
    let (kept, sleeps_left_out) = (std::mem::take(&mut sleeps.kept), sleeps.left_out);
    // The files' symbols and call frame information, dropped: their heap goes back.
    drop(sleeps);
    fathom_bpf::release_freed_heap();
    Finished {
        waits: Waits {
            dropped: last.dropped,
            sleeps_left_out,
            ..tally.waits(method, hz, cost_ms)
        },
        folded,
        sleeps: kept,
    }
}

/// Tells the program of the threads there now, as they are now: one asleep since before
/// would otherwise be unknown to it until it wakes, and its sleep lost.
fn seed(program: &mut fathom_bpf::Program, watched: &Watched) {
    // One look a thread: its files are not kept.
    let files = OpenFiles::default();
    for (tid, ..) in watched.last.members() {
        let (Some(l), Some(tgid)) = (look(tid, &files), tgid_of(tid)) else {
            continue;
        };
        let asleep = (l.state != 'R').then(|| {
            let nr = l.nr.and_then(|n| i32::try_from(n).ok()).unwrap_or(-1);
            (nr, l.state == 'D')
        });
        let _ = program.seed(tid, tgid, asleep);
    }
}

/// The folded lines of the time asleep: `group;kind;process;user frames;kernel frames NS`,
/// outermost frame first. A process's user frames past the first are kept only when its
/// executable keeps frame pointers (the program walks them); else the first alone is exact,
/// but for the time of its long sleeps whose user stacks were walked by DWARF (`walked`),
/// which goes to their whole stacks.
fn fold(
    program: &fathom_bpf::Program,
    at: &StackTally,
    names: &mut fathom_bpf::symbols::Symbols,
    walked: &Walked,
) -> Vec<String> {
    let mut processes: BTreeMap<u32, (String, bool)> = BTreeMap::new();
    let mut lines: BTreeMap<String, u64> = BTreeMap::new();
    for (key, &ns) in at {
        let &(whose, kind, tgid, kstack, ustack) = key;
        let (comm, walks) = processes
            .entry(tgid)
            .or_insert_with(|| process(tgid))
            .clone();
        let head = [group_name(whose).to_string(), kind.name().to_string(), comm];
        let kernel: Vec<String> = program.stack(kstack).map_or_else(Vec::new, |k| {
            // The program's own frames (innermost) say nothing of the wait.
            let named: Vec<String> = k.iter().map(|&a| names.kernel(a)).collect();
            let from = named.iter().take_while(|n| n.contains("bpf_")).count();
            named[from..].iter().rev().cloned().collect()
        });
        let mut line = |user: &[String], ns: u64| {
            let frames: Vec<&str> = (head.iter().chain(user).chain(&kernel))
                .map(String::as_str)
                .collect();
            *lines.entry(frames.join(";")).or_default() += ns;
        };
        let mut left = ns;
        if !walks {
            for (user, &w) in walked.get(key).into_iter().flatten() {
                let take = w.min(left);
                line(user, take);
                left -= take;
            }
        }
        if left == 0 {
            continue;
        }
        let user: Vec<String> = match program.stack(ustack) {
            Some(user) => {
                let keep = if walks { user.len() } else { 1 };
                user.iter()
                    .take(keep)
                    .rev()
                    .map(|&a| names.user(tgid, a))
                    .collect()
            }
            None if ustack == fathom_bpf::SEEDED => vec!["[asleep since before the step]".into()],
            None => vec!["[no user stack]".into()],
        };
        line(&user, left);
    }
    lines
        .into_iter()
        .map(|(l, ns)| format!("{l} {ns}"))
        .collect()
}

/// The process thread `tid` belongs to.
fn tgid_of(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()
}

/// A process's name (`comm`) and whether its user stacks can be walked by frame pointers.
fn process(tgid: u32) -> (String, bool) {
    let comm = std::fs::read_to_string(format!("/proc/{tgid}/comm"))
        .map(|c| c.trim().to_string())
        .unwrap_or_else(|_| format!("pid {tgid}"));
    let walks = std::fs::read_link(format!("/proc/{tgid}/exe")).is_ok_and(|exe| {
        crate::unwind::unwinding(&exe) == fathom_schema::profile::Unwinding::FramePointers
    });
    (comm, walks)
}

/// The program's totals at one reading: ns on a CPU per thread, ns asleep per (thread, system
/// call, uninterruptible, stacks).
#[derive(Default)]
struct Totals {
    cpu: BTreeMap<u32, u64>,
    asleep: BTreeMap<fathom_bpf::WaitKey, u64>,
    dropped: u64,
}

impl Totals {
    fn of(program: &fathom_bpf::Program) -> Totals {
        // An unreadable map reads as nothing more timed.
        let Ok(r) = program.read() else {
            return Totals::default();
        };
        Totals {
            cpu: r.cpu_ns.into_iter().collect(),
            asleep: r.asleep_ns.into_iter().collect(),
            dropped: r.dropped,
        }
    }

    /// The keys of thread `tid`'s sleeps, as a range of `asleep`.
    fn of_thread(tid: u32) -> std::ops::RangeInclusive<fathom_bpf::WaitKey> {
        let key = |low: bool| fathom_bpf::WaitKey {
            tid,
            nr: if low { i32::MIN } else { i32::MAX },
            uninterruptible: if low { 0 } else { u32::MAX },
            kstack: if low { i32::MIN } else { i32::MAX },
            ustack: if low { i32::MIN } else { i32::MAX },
            tgid: if low { 0 } else { u32::MAX },
        };
        key(true)..=key(false)
    }
}
