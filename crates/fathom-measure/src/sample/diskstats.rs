//! `/proc/diskstats`: the block-device counters behind r/o, rKB/o, wKB/o and the iostat-style
//! columns (rps, rmbps, rawait, rareqsz and their write twins).

use serde::{Deserialize, Serialize};

/// Cumulative counters of one block device (see the kernel's Documentation/admin-guide/iostats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub reads: u64,
    pub reads_merged: u64,
    /// 512-byte sectors read.
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    /// 512-byte sectors written.
    pub sectors_written: u64,
    pub write_ms: u64,
    /// Milliseconds the device had IO in flight.
    pub busy_ms: u64,
    /// Milliseconds of IO in flight summed over the requests (iostat's aqu-sz is its rate).
    #[serde(default)]
    pub queue_ms: u64,
    /// Flush requests completed (kernels from 5.5; `None` before).
    #[serde(default)]
    pub flushes: Option<u64>,
}

/// Finds the line for device `major:minor` in the text of `/proc/diskstats`.
pub fn parse(text: &str, major: u32, minor: u32) -> Option<DiskCounters> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 || f[0].parse() != Ok(major) || f[1].parse() != Ok(minor) {
            return None;
        }
        let n = |i: usize| f[i].parse::<u64>().ok();
        Some(DiskCounters {
            reads: n(3)?,
            reads_merged: n(4)?,
            sectors_read: n(5)?,
            read_ms: n(6)?,
            writes: n(7)?,
            writes_merged: n(8)?,
            sectors_written: n(9)?,
            write_ms: n(10)?,
            busy_ms: n(12)?,
            queue_ms: n(13)?,
            flushes: f.get(18).and_then(|x| x.parse().ok()),
        })
    })
}

/// The name of device `major:minor` in `/proc/diskstats`, e.g. `vda`.
pub fn device_name(text: &str, major: u32, minor: u32) -> Option<String> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.len() > 2 && f[0].parse() == Ok(major) && f[1].parse() == Ok(minor))
            .then(|| f[2].to_string())
    })
}

impl DiskCounters {
    /// Counters accumulated between `self` (earlier) and `later`.
    pub fn delta(&self, later: &DiskCounters) -> DiskCounters {
        DiskCounters {
            reads: later.reads.saturating_sub(self.reads),
            reads_merged: later.reads_merged.saturating_sub(self.reads_merged),
            sectors_read: later.sectors_read.saturating_sub(self.sectors_read),
            read_ms: later.read_ms.saturating_sub(self.read_ms),
            writes: later.writes.saturating_sub(self.writes),
            writes_merged: later.writes_merged.saturating_sub(self.writes_merged),
            sectors_written: later.sectors_written.saturating_sub(self.sectors_written),
            write_ms: later.write_ms.saturating_sub(self.write_ms),
            busy_ms: later.busy_ms.saturating_sub(self.busy_ms),
            queue_ms: later.queue_ms.saturating_sub(self.queue_ms),
            flushes: match (self.flushes, later.flushes) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            },
        }
    }

    pub fn read_kb(&self) -> f64 {
        self.sectors_read as f64 / 2.0
    }

    pub fn write_kb(&self) -> f64 {
        self.sectors_written as f64 / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../tests/data/proc/diskstats");

    #[test]
    fn parses_the_virtio_disk() {
        let d = parse(FIXTURE, 254, 0).expect("vda is in the fixture");
        assert_eq!(d.reads, 51785);
        assert_eq!(d.sectors_read, 4067922);
        assert_eq!(d.read_ms, 18138);
        assert_eq!(d.writes, 9860);
        assert_eq!(d.sectors_written, 2909688);
        assert_eq!(d.busy_ms, 10176);
        assert_eq!(d.queue_ms, 27713);
        assert_eq!(d.flushes, Some(652));
        assert_eq!(device_name(FIXTURE, 254, 0).as_deref(), Some("vda"));
        assert_eq!(parse(FIXTURE, 9, 9), None);
    }

    #[test]
    fn delta_and_units() {
        let a = parse(FIXTURE, 254, 0).unwrap();
        let mut b = a;
        b.reads += 10;
        b.sectors_read += 80;
        b.sectors_written += 2048;
        let d = a.delta(&b);
        assert_eq!(d.reads, 10);
        assert_eq!(d.read_kb(), 40.0);
        assert_eq!(d.write_kb(), 1024.0);
    }
}
