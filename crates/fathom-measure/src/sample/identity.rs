//! What makes two hosts the same for a comparison: CPU model, memory, kernel, the data
//! directory's disk (its model or driver and IO scheduler) and filesystem, and the cgroup
//! limits fathom ran under. Read once per run into `run.json`; `fathom compare` warns when a
//! verdict compares runs whose hosts differ in any of them.

use std::path::Path;

fn read(path: impl AsRef<Path>) -> Option<String> {
    crate::sample::read_proc(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `/proc/cpuinfo`'s first `model name`.
pub fn cpu_model() -> Option<String> {
    read("/proc/cpuinfo")?.lines().find_map(|l| {
        l.strip_prefix("model name")?
            .split_once(':')
            .map(|(_, v)| v.trim().to_string())
    })
}

/// The whole disk a block device is, or is a partition of.
pub(crate) fn disk_dir(device: &str) -> Option<std::path::PathBuf> {
    let node = std::fs::canonicalize(format!("/sys/class/block/{device}")).ok()?;
    Some(if node.join("partition").exists() {
        node.parent()?.to_path_buf()
    } else {
        node
    })
}

/// The whole disk's `major:minor` (what block IO throttles take: disks, not partitions).
pub fn disk_numbers(device: &str) -> Option<String> {
    read(disk_dir(device)?.join("dev"))
}

/// A disk's model (vendor and model where sysfs has them), else its driver.
pub fn disk_model(device: &str) -> Option<String> {
    let disk = disk_dir(device)?;
    let named: Vec<String> = ["device/vendor", "device/model"]
        .iter()
        .filter_map(|f| read(disk.join(f)))
        .collect();
    if !named.is_empty() {
        return Some(named.join(" "));
    }
    let driver = std::fs::read_link(disk.join("device/driver")).ok()?;
    Some(driver.file_name()?.to_string_lossy().into_owned())
}

/// The IO scheduler in use (`[mq-deadline]` in `queue/scheduler`).
pub fn disk_scheduler(device: &str) -> Option<String> {
    let text = read(disk_dir(device)?.join("queue/scheduler"))?;
    let open = text.find('[')?;
    let close = text[open..].find(']')? + open;
    Some(text[open + 1..close].to_string())
}

/// The filesystem type of the mount holding `dir` (the longest mount point that is a prefix).
pub fn filesystem(dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let text = read("/proc/self/mountinfo")?;
    let mut best: Option<(usize, String)> = None;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(dash) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        let (Some(point), Some(fstype)) = (f.get(4), f.get(dash + 1)) else {
            continue;
        };
        let len = point.len();
        if dir.starts_with(point) && best.as_ref().is_none_or(|b| len >= b.0) {
            best = Some((len, fstype.to_string()));
        }
    }
    best.map(|b| b.1)
}

/// The CPU and memory limits of fathom's own cgroup, v2 or v1, as `cpu 2 cores, memory 8.0G`;
/// `None` when neither is limited.
pub fn cgroup_limits() -> Option<String> {
    use crate::cgroup::own_dir;
    let number = |dir: &Option<std::path::PathBuf>, file: &str| -> Option<f64> {
        read(dir.as_ref()?.join(file))?.parse().ok()
    };
    let v2 = own_dir("");
    let mut limits = Vec::new();
    let cpu = v2
        .as_ref()
        .and_then(|d| read(d.join("cpu.max")))
        .and_then(|t| {
            let (q, p) = t.split_once(' ')?;
            Some((q.parse::<f64>().ok()?, p.parse::<f64>().ok()?))
        })
        .or_else(|| {
            let v1 = own_dir("cpu");
            let q = number(&v1, "cpu.cfs_quota_us")?;
            let p = number(&v1, "cpu.cfs_period_us")?;
            (q > 0.0).then_some((q, p))
        });
    if let Some((q, p)) = cpu {
        limits.push(format!("cpu {:.2} cores", q / p));
    }
    let memory = number(&v2, "memory.max")
        .or_else(|| number(&own_dir("memory"), "memory.limit_in_bytes"))
        .filter(|b| *b < (1u64 << 60) as f64);
    if let Some(b) = memory {
        limits.push(format!("memory {:.1}G", b / fathom_api::units::GIB));
    }
    (!limits.is_empty()).then(|| limits.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::result::HostFacts;

    #[test]
    fn this_hosts_identity_reads_and_differences_are_named() {
        assert!(cpu_model().is_some());
        assert!(filesystem(Path::new(env!("CARGO_MANIFEST_DIR"))).is_some());
        let a = HostFacts {
            cpu_model: Some("AMD EPYC".into()),
            cores: 2,
            memory_bytes: 24 << 30,
            kernel: "6.1.0".into(),
            ..HostFacts::default()
        };
        assert!(a.differences(&a.clone()).is_empty());
        let b = HostFacts {
            cpu_model: Some("Intel Xeon".into()),
            memory_bytes: (24 << 30) + (1 << 20),
            hostname: "other".into(),
            ..a.clone()
        };
        assert_eq!(a.differences(&b), vec!["CPU `AMD EPYC` vs `Intel Xeon`"]);
    }
}
