//! `/proc/<pid>/stat`, `status` and `io`: CPU time, resident memory and IO of the processes
//! that are the engine (a server) or the harness (fathom itself, which is also the engine when
//! the engine is embedded).

use crate::sample::procfs::OpenFiles;
use serde::{Deserialize, Serialize};

/// Cumulative figures of one process, summed over its threads by the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcCounters {
    /// User and system CPU ticks (USER_HZ).
    pub utime: u64,
    pub stime: u64,
    pub major_faults: u64,
    /// Resident set size and its peak, bytes.
    pub rss_bytes: u64,
    pub rss_peak_bytes: u64,
    /// Anonymous resident memory (RssAnon: heap, stacks, anonymous maps; no file pages), bytes.
    pub anon_bytes: u64,
    /// Bytes this process caused to be read from storage, and to be written to it (counted
    /// when it dirtied them, as pidstat's kB_wr/s: a file deleted before its pages reached the
    /// device still counts).
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// CPU ticks of a process's children that exited and were reaped (cutime, cstime): a server's
/// backends' CPU moves here when a connection closes.
pub fn parse_reaped(text: &str) -> Option<(u64, u64)> {
    let after = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    Some((f.get(16 - 3)?.parse().ok()?, f.get(17 - 3)?.parse().ok()?))
}

/// Parses `/proc/<pid>/stat`: utime, stime and major faults. The command name may hold spaces
/// and parentheses, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<(u64, u64, u64)> {
    let after = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // after ')' : state(3) ppid(4) pgrp pgid tty tpgid flags minflt cminflt majflt(12) cmajflt
    // utime(14) stime(15); index = field number - 3.
    let n = |field: usize| f.get(field - 3)?.parse::<u64>().ok();
    Some((n(14)?, n(15)?, n(12)?))
}

/// The parent pid in `/proc/<pid>/stat`.
pub fn parse_ppid(text: &str) -> Option<u32> {
    let after = &text[text.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// One process as a walk of /proc finds it: its parent, and its CPU ticks (user + system) with
/// and without its reaped children's.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub pid: u32,
    pub ppid: u32,
    pub own_ticks: u64,
    pub reaped_ticks: u64,
}

/// Every process on the host, from one read of each `/proc/PID/stat`: what the server's
/// descendants, their CPU and the kernel's threads' are all read from, in one walk.
pub fn table() -> Vec<Entry> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = crate::sample::read_proc(format!("/proc/{pid}/stat")).ok()?;
            let (u, s, _) = parse_stat(&stat)?;
            let (cu, cs) = parse_reaped(&stat).unwrap_or((0, 0));
            Some(Entry {
                pid,
                ppid: parse_ppid(&stat)?,
                own_ticks: u + s,
                reaped_ticks: cu + cs,
            })
        })
        .collect()
}

/// `roots` and every process in `table` descending from them, roots first.
pub fn descendants(table: &[Entry], roots: &[u32]) -> Vec<u32> {
    let mut all: Vec<u32> = roots.to_vec();
    let mut i = 0;
    while i < all.len() {
        let parent = all[i];
        for e in table {
            if e.ppid == parent && !all.contains(&e.pid) {
                all.push(e.pid);
            }
        }
        i += 1;
    }
    all
}

/// `roots` and every live process descending from them (a server's workers and backends,
/// which may come and go between samples).
pub fn with_descendants(roots: &[u32]) -> Vec<u32> {
    descendants(&table(), roots)
}

/// CPU ticks (user + system, with reaped children's) of `roots` and every process in `table`
/// descending from them, by pid: the processes an interference figure leaves out.
pub fn tree_ticks(table: &[Entry], roots: &[u32]) -> std::collections::BTreeMap<u32, u64> {
    let tree = descendants(table, roots);
    table
        .iter()
        .filter(|e| tree.contains(&e.pid))
        .map(|e| (e.pid, e.own_ticks + e.reaped_ticks))
        .collect()
}

/// CPU ticks (user + system) of the kernel's own threads in `table`, by pid: kthreadd (pid 2)
/// and its children (writeback, kswapd, jbd2, kcompactd, the kworkers). They serve every
/// process's IO and memory, the engine's first, so interference leaves them out and reports
/// them apart.
pub fn kernel_thread_ticks(table: &[Entry]) -> std::collections::BTreeMap<u32, u64> {
    table
        .iter()
        .filter(|e| e.pid == 2 || e.ppid == 2)
        .map(|e| (e.pid, e.own_ticks))
        .collect()
}

/// The ticks threads spent between two readings by pid: each thread alive at the end less what
/// it had at the start (a thread born in the window counts whole). A thread that exited in the
/// window is in neither sum: its ticks before the window are not taken from the others'.
pub fn ticks_between(
    start: &std::collections::BTreeMap<u32, u64>,
    end: &std::collections::BTreeMap<u32, u64>,
) -> u64 {
    end.iter()
        .map(|(pid, t)| t.saturating_sub(start.get(pid).copied().unwrap_or(0)))
        .sum()
}

/// Proportional set size (shared pages divided among the processes mapping them), bytes: the
/// memory of a multi-process server without counting its shared buffers once per backend.
pub fn pss_bytes(pid: u32) -> Option<u64> {
    let text = crate::sample::read_proc(format!("/proc/{pid}/smaps_rollup")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// Parses `VmRSS` and `VmHWM` (kB) from `/proc/<pid>/status`, in bytes.
pub fn parse_status(text: &str) -> Option<(u64, u64)> {
    Some((
        status_kb(text, "VmRSS:")?,
        status_kb(text, "VmHWM:").unwrap_or(0),
    ))
}

/// One `KEY: N kB` line of `/proc/<pid>/status`, in bytes.
pub fn status_kb(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|v| v * 1024)
}

/// This process's C heap (glibc's malloc, every arena and mmap'd chunk): bytes in use, and
/// bytes malloc holds free (its arenas' free chunks and slack, resident or not). None when
/// another allocator took malloc's place (LD_PRELOAD of tcmalloc or jemalloc): glibc's
/// bookkeeping then reads nothing in use.
pub fn own_heap() -> Option<(u64, u64)> {
    // SAFETY: mallinfo2 only reads malloc's own bookkeeping, under its arenas' locks.
    let m = unsafe { libc::mallinfo2() };
    let used = (m.uordblks + m.hblkhd) as u64;
    (used > 0).then_some((used, m.fordblks as u64))
}

/// Parses `read_bytes` and `write_bytes` from `/proc/<pid>/io`.
pub fn parse_io(text: &str) -> Option<(u64, u64)> {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some((get("read_bytes:")?, get("write_bytes:")?))
}

/// Bytes the calling thread has caused to be written (`/proc/thread-self/io`), 0 where unknown.
pub fn thread_write_bytes() -> u64 {
    crate::sample::read_proc("/proc/thread-self/io")
        .ok()
        .and_then(|t| parse_io(&t))
        .map_or(0, |(_, w)| w)
}

/// Reads the counters of a live process through `files` (kept open between samples); `None`
/// when it is gone. With `reaped`, its reaped children's CPU counts as its own, so the CPU of a
/// process tree's exited members is kept.
pub fn read(pid: u32, reaped: bool, files: &OpenFiles) -> Option<ProcCounters> {
    let stat = files.read(&format!("/proc/{pid}/stat")).ok()?;
    let (mut utime, mut stime, major_faults) = parse_stat(&stat)?;
    if reaped {
        let (cu, cs) = parse_reaped(&stat)?;
        utime += cu;
        stime += cs;
    }
    let status = files.read(&format!("/proc/{pid}/status")).ok()?;
    let (rss_bytes, rss_peak_bytes) = parse_status(&status)?;
    let anon_bytes = status_kb(&status, "RssAnon:").unwrap_or(0);
    // `io` is readable only by the owner or root; missing IO figures are not fatal.
    let (read_bytes, write_bytes) = files
        .read(&format!("/proc/{pid}/io"))
        .ok()
        .and_then(|t| parse_io(&t))
        .unwrap_or((0, 0));
    Some(ProcCounters {
        utime,
        stime,
        major_faults,
        rss_bytes,
        rss_peak_bytes,
        anon_bytes,
        read_bytes,
        write_bytes,
    })
}

/// The voluntary context switches of this process, every thread's, exited ones included: the
/// times its threads blocked (`getrusage`'s `ru_nvcsw`).
pub fn own_voluntary_switches() -> u64 {
    // SAFETY: rusage is plain integers, for which all zeroes is a value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: one valid rusage to write, for the duration of the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    usage.ru_nvcsw.max(0) as u64
}

#[cfg(test)]
mod tests {
    /// A kworker that exited in the window takes its lifetime with it, not from the others'
    /// figure; one born in it counts whole; the rest count their difference.
    #[test]
    fn threads_count_their_ticks_in_the_window() {
        let map = |v: &[(u32, u64)]| v.iter().copied().collect();
        let start = map(&[(2, 10), (40, 5000), (41, 7)]);
        let end = map(&[(2, 12), (41, 9), (90, 3)]);
        assert_eq!(ticks_between(&start, &end), 2 + 2 + 3);
    }

    use super::*;

    #[test]
    fn parses_real_files() {
        let stat = include_str!("../../tests/data/proc/pid_stat");
        assert_eq!(parse_stat(stat), Some((3, 6, 0))); // field 13 (317) is cmajflt, not ours
        let status = include_str!("../../tests/data/proc/pid_status");
        assert_eq!(parse_status(status), Some((4256 * 1024, 4256 * 1024)));
        let io = include_str!("../../tests/data/proc/pid_io");
        assert_eq!(parse_io(io), Some((586100736, 441270272)));
    }

    #[test]
    fn command_names_with_spaces_and_parens() {
        let stat = "77 (my (odd) name) S 1 77 77 0 -1 0 10 0 4 0 250 50 0 0 20 0 3 0 1 1 1";
        assert_eq!(parse_stat(stat), Some((250, 50, 4)));
        assert_eq!(parse_ppid(stat), Some(1));
        assert_eq!(parse_reaped(stat), Some((0, 0)));
    }

    #[test]
    fn finds_child_processes() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let tree = with_descendants(&[std::process::id()]);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(tree[0], std::process::id());
        assert!(tree.contains(&child.id()), "{tree:?}");
        assert!(pss_bytes(std::process::id()).is_some_and(|b| b > 0));
    }

    #[test]
    fn reads_this_process() {
        let me = read(std::process::id(), false, &OpenFiles::default()).expect("own /proc entry");
        assert!(me.rss_bytes > 0);
    }

    /// A thread that blocks on a channel twice is counted, after it exited too.
    #[test]
    fn counts_the_times_its_threads_blocked() {
        let before = own_voluntary_switches();
        let (tx, rx) = std::sync::mpsc::channel::<u8>();
        let (back, done) = std::sync::mpsc::channel::<u8>();
        let t = std::thread::spawn(move || {
            for _ in 0..2 {
                let v = rx.recv().unwrap();
                back.send(v).unwrap();
            }
        });
        for i in 0..2 {
            std::thread::sleep(std::time::Duration::from_millis(20));
            tx.send(i).unwrap();
            done.recv().unwrap();
        }
        t.join().unwrap();
        assert!(own_voluntary_switches() >= before + 4);
    }
}
