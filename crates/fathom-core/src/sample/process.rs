//! `/proc/<pid>/stat`, `status` and `io`: CPU time, resident memory and IO of the processes
//! that are the engine (a server) or the harness (fathom itself, which is also the engine when
//! the engine is embedded).

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
    /// Bytes this process caused to be read from / sent to storage.
    pub read_bytes: u64,
    pub write_bytes: u64,
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

/// Parses `VmRSS` and `VmHWM` (kB) from `/proc/<pid>/status`, in bytes.
pub fn parse_status(text: &str) -> Option<(u64, u64)> {
    let kb = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|v| v * 1024)
    };
    Some((kb("VmRSS:")?, kb("VmHWM:").unwrap_or(0)))
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

/// Reads the counters of a live process; `None` when it is gone.
pub fn read(pid: u32) -> Option<ProcCounters> {
    let dir = format!("/proc/{pid}");
    let (utime, stime, major_faults) =
        parse_stat(&std::fs::read_to_string(format!("{dir}/stat")).ok()?)?;
    let (rss_bytes, rss_peak_bytes) =
        parse_status(&std::fs::read_to_string(format!("{dir}/status")).ok()?)?;
    // `io` is readable only by the owner or root; missing IO figures are not fatal.
    let (read_bytes, write_bytes) = std::fs::read_to_string(format!("{dir}/io"))
        .ok()
        .and_then(|t| parse_io(&t))
        .unwrap_or((0, 0));
    Some(ProcCounters {
        utime,
        stime,
        major_faults,
        rss_bytes,
        rss_peak_bytes,
        read_bytes,
        write_bytes,
    })
}

#[cfg(test)]
mod tests {
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
    }

    #[test]
    fn reads_this_process() {
        let me = read(std::process::id()).expect("own /proc entry");
        assert!(me.rss_bytes > 0);
    }
}
