//! `/proc/stat`: host-wide CPU time by state and the context-switch count, the vmstat figures
//! (us, sy, id, wa, st, cs) behind cpu/o and cs/o.

use serde::{Deserialize, Serialize};

/// Cumulative host CPU ticks (USER_HZ) by state, and context switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuCounters {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub context_switches: u64,
}

/// Reads the aggregate `cpu` line and the `ctxt` line of `/proc/stat`.
pub fn parse(text: &str) -> Option<CpuCounters> {
    let mut c = CpuCounters::default();
    let mut seen_cpu = false;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        match f.next() {
            Some("cpu") => {
                let v: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
                if v.len() < 8 {
                    return None;
                }
                (c.user, c.nice, c.system, c.idle) = (v[0], v[1], v[2], v[3]);
                (c.iowait, c.irq, c.softirq, c.steal) = (v[4], v[5], v[6], v[7]);
                seen_cpu = true;
            }
            Some("ctxt") => c.context_switches = f.next()?.parse().ok()?,
            _ => {}
        }
    }
    seen_cpu.then_some(c)
}

/// The `some` total of `/proc/pressure/cpu`'s text: µs in which some task waited for a CPU.
pub fn parse_pressure(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

impl CpuCounters {
    pub fn delta(&self, later: &CpuCounters) -> CpuCounters {
        CpuCounters {
            user: later.user.saturating_sub(self.user),
            nice: later.nice.saturating_sub(self.nice),
            system: later.system.saturating_sub(self.system),
            idle: later.idle.saturating_sub(self.idle),
            iowait: later.iowait.saturating_sub(self.iowait),
            irq: later.irq.saturating_sub(self.irq),
            softirq: later.softirq.saturating_sub(self.softirq),
            steal: later.steal.saturating_sub(self.steal),
            context_switches: later.context_switches.saturating_sub(self.context_switches),
        }
    }

    /// vmstat's us: user + nice.
    pub fn us(&self) -> u64 {
        self.user + self.nice
    }

    /// vmstat's sy: system + irq + softirq.
    pub fn sy(&self) -> u64 {
        self.system + self.irq + self.softirq
    }

    pub fn total(&self) -> u64 {
        self.us() + self.sy() + self.idle + self.iowait + self.steal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_pressure() {
        let text = "some avg10=0.26 avg60=8.21 avg300=18.80 total=4035524313\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure(text), Some(4_035_524_313));
        assert_eq!(parse_pressure("garbage"), None);
    }

    #[test]
    fn parses_real_proc_stat() {
        let c = parse(include_str!("../../tests/data/proc/stat")).unwrap();
        assert_eq!((c.user, c.nice, c.system, c.idle), (21037, 0, 4310, 31779));
        assert_eq!((c.iowait, c.irq, c.softirq, c.steal), (472, 0, 49, 37));
        assert_eq!(c.context_switches, 351373);
        assert_eq!(c.us(), 21037);
        assert_eq!(c.sy(), 4359);
    }

    #[test]
    fn rejects_text_without_a_cpu_line() {
        assert_eq!(parse("ctxt 5\n"), None);
    }
}
