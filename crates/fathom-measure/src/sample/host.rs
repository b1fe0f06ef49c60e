//! Facts about the host a run used (name, kernel, cores, memory, the data directory's device
//! and what kind of device it is), read once when the run starts and kept in `run.json`.

use fathom_schema::result::HostFacts;
use std::path::Path;

fn read(path: impl AsRef<Path>) -> String {
    crate::sample::read_proc(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The kernel driver of a block device (`virtio_blk`, `nvme`, `sd`), looking through a
/// partition to its disk.
pub(crate) fn driver(device: &str) -> Option<String> {
    let disk = super::identity::disk_dir(device)?;
    let link = std::fs::read_link(disk.join("device/driver")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// The driver of a virtual disk (the host may cache it: its counts are real, its limits the
/// host's); `None` for a physical one.
pub(crate) fn virtual_driver(device: &str) -> Option<String> {
    driver(device).filter(|d| {
        ["virtio_blk", "xen_blkfront", "vmw_pvscsi", "hv_storvsc"].contains(&d.as_str())
    })
}

/// What a reader of the IO figures should know about the device: nothing for a physical
/// disk; a virtual disk's counts are real but its limits are the host's.
fn device_note(device: Option<&str>) -> Option<String> {
    let Some(d) = device else {
        return Some(
            "the data directory is on no block device (tmpfs?): IO figures are missing".into(),
        );
    };
    virtual_driver(d).map(|v| {
        format!("{d} is a virtual disk ({v}) the host may cache: IO counts are real, a physical device's limits are not")
    })
}

/// Reads the host's facts for a run whose database is in `data_dir` on `device`.
pub fn host_facts(
    data_dir: &Path,
    device: Option<&str>,
    memory_limit: Option<String>,
) -> HostFacts {
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    HostFacts {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        device: device.map(str::to_string),
        data_dir: data_dir.display().to_string(),
        fathom_version: env!("CARGO_PKG_VERSION").to_string(),
        memory_limit,
        note: device_note(device),
        cpu_model: super::identity::cpu_model(),
        disk_model: device.and_then(super::identity::disk_model),
        disk_scheduler: device.and_then(super::identity::disk_scheduler),
        filesystem: super::identity::filesystem(data_dir),
        cgroup_limits: super::identity::cgroup_limits(),
        device_limits: None,
        device_throttle: None,
        network_path: None,
    }
}
