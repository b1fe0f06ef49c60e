//! A device profile imposed by the kernel (`--device`): a cgroup child group whose rules (v1's
//! blkio throttle files, or v2's `io.max`) hold the engine's reads and writes on the data
//! directory's disk to the profile's IOPS and bandwidth. The engine's processes join it
//! (fathom's own for an embedded engine, a server's as it starts); dropping it moves them back
//! and removes it. What cgroup v1 cannot hold is counted, not hidden: writeback of dirty pages
//! is the kernel flusher's, so a buffered write that is never synced reaches the disk uncapped;
//! `escaped` says how much.

use crate::own_device::{OwnDevice, ServiceTime};
use crate::sample::{diskstats, Device};
use fathom_schema::result::device::{DeviceLayer, DeviceProfile};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ThrottleError {
    #[error("a device profile needs cgroup v1's blkio controller with throttling (`blkio.throttle.read_iops_device`) or cgroup v2's io controller (`io.max`) available to fathom's group, and this host has neither (looked in /proc/self/mountinfo and /proc/self/cgroup){}", if v2() { "; cgroup v2 is mounted, but `io` is not in its group's cgroup.controllers (a delegated group needs it delegated too)" } else { "" })]
    NoController,
    #[error("{0}")]
    Group(#[from] crate::cgroup::CgroupError),
    #[error("{0} is on no block device listed in /proc/diskstats (tmpfs or overlay?): there is no device to hold to the profile")]
    NoDevice(PathBuf),
    #[error("a device of the run's own (`--device-layer loop`, the default): {0}")]
    NoLoop(String),
    #[error("cannot {action} {path}: {cause}; throttling a device needs root (or a blkio group delegated to you)")]
    Io {
        action: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
}

fn v2() -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|m| crate::cgroup::mount_of(&m, "").is_some())
}

fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ThrottleError + 'a {
    move |cause| ThrottleError::Io {
        action,
        path: path.to_path_buf(),
        cause,
    }
}

/// The whole disk a device is on: a partition's parent (throttling takes disks only).
pub fn whole_disk(d: &Device) -> Device {
    let whole = crate::sample::identity::disk_dir(&d.name).and_then(|dir| {
        let name = dir.file_name()?.to_string_lossy().into_owned();
        let numbers = std::fs::read_to_string(dir.join("dev")).ok()?;
        let (major, minor) = numbers.trim().split_once(':')?;
        Some(Device {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
            name,
        })
    });
    whole.unwrap_or_else(|| d.clone())
}

/// Which cgroup interface holds a profile's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    /// cgroup v1's blkio throttle files.
    V1,
    /// cgroup v2's `io.max` and `io.stat`.
    V2,
}

/// The group fathom's groups go under: the caller's own blkio group on cgroup v1, else its own
/// cgroup v2 group where the io controller is available to it.
fn parent_group() -> Result<(PathBuf, Api), ThrottleError> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let groups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let own_dir = |controller: &str| {
        let mount = crate::cgroup::mount_of(&mountinfo, controller)?;
        let own = crate::cgroup::own_group(&groups, controller)?;
        Some(mount.join(own.trim_start_matches('/')))
    };
    if let Some(v1) = own_dir("blkio") {
        if v1.join("blkio.throttle.read_iops_device").exists() {
            return Ok((v1, Api::V1));
        }
    }
    let v2 = own_dir("").ok_or(ThrottleError::NoController)?;
    let controllers = std::fs::read_to_string(v2.join("cgroup.controllers")).unwrap_or_default();
    if !controllers.split_whitespace().any(|c| c == "io") {
        return Err(ThrottleError::NoController);
    }
    Ok((v2, Api::V2))
}

/// Whether a device profile would be held through cgroup v2 here (where a process is in one
/// group, so a memory limit's group and the profile's cannot both hold it).
pub fn through_v2() -> bool {
    parent_group().is_ok_and(|(_, api)| api == Api::V2)
}

/// The root of the blkio hierarchy, where a device of the run's own is held on cgroup v1 (the
/// kernel's flusher and journal threads are in it).
fn root_group() -> Result<PathBuf, ThrottleError> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let root = crate::cgroup::mount_of(&mountinfo, "blkio").ok_or(ThrottleError::NoController)?;
    if !root.join("blkio.throttle.read_iops_device").exists() {
        return Err(ThrottleError::NoController);
    }
    Ok(root)
}

/// The disk `dir` (or its nearest existing ancestor) is on, checked to be throttleable here
/// the way `profile`'s layer asks (and, for a service time, that FUSE is there): what
/// `--device` is refused for, found before anything runs.
pub fn check(dir: &Path, profile: &DeviceProfile) -> Result<Device, ThrottleError> {
    let (parent, api) = parent_group()?;
    if profile.layer == DeviceLayer::Loop {
        if api == Api::V1 {
            root_group()?;
        }
        crate::own_device::check().map_err(ThrottleError::NoLoop)?;
        if profile.imposed_service_us().is_some() {
            crate::held_image::check().map_err(ThrottleError::NoLoop)?;
        }
        return disk_of(dir);
    }
    let disk = disk_of(dir)?;
    let probe = parent.join(format!("fathom-io-{}-check", std::process::id()));
    std::fs::create_dir(&probe).map_err(io("create", &probe))?;
    let _ = std::fs::remove_dir(&probe);
    Ok(disk)
}

/// The whole disk `dir` (or its nearest existing ancestor) is on.
fn disk_of(dir: &Path) -> Result<Device, ThrottleError> {
    let existing = (dir.ancestors())
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"));
    let device = Device::of(existing).ok_or_else(|| ThrottleError::NoDevice(dir.into()))?;
    Ok(whole_disk(&device))
}

/// Bytes read and written on `disk` through a group, from its `blkio.throttle.io_service_bytes`
/// (v1) or its `io.stat` (v2).
fn serviced(group: &Path, disk: &Device, api: Api) -> (u64, u64) {
    let key = format!("{}:{}", disk.major, disk.minor);
    if api == Api::V2 {
        let text = std::fs::read_to_string(group.join("io.stat")).unwrap_or_default();
        return io_stat_bytes(&text, &key);
    }
    let text =
        std::fs::read_to_string(group.join("blkio.throttle.io_service_bytes")).unwrap_or_default();
    let mut rw = (0, 0);
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 3 && f[0] == key {
            let n = f[2].parse().unwrap_or(0);
            match f[1] {
                "Read" => rw.0 = n,
                "Write" => rw.1 = n,
                _ => {}
            }
        }
    }
    rw
}

/// Bytes read and written on the device `key` (`MAJ:MIN`) from cgroup v2's `io.stat` text.
fn io_stat_bytes(text: &str, key: &str) -> (u64, u64) {
    let mut rw = (0, 0);
    for line in text
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(key))
    {
        for field in line.split_whitespace().skip(1) {
            match field.split_once('=') {
                Some(("rbytes", n)) => rw.0 = n.parse().unwrap_or(0),
                Some(("wbytes", n)) => rw.1 = n.parse().unwrap_or(0),
                _ => {}
            }
        }
    }
    rw
}

/// Bytes written to `disk` by anyone, from /proc/diskstats.
fn disk_written(disk: &Device) -> u64 {
    crate::sample::read_proc("/proc/diskstats")
        .ok()
        .and_then(|t| diskstats::parse(&t, disk.major, disk.minor))
        .map_or(0, |c| c.sectors_written * 512)
}

/// A device held to a profile: a live blkio group holding its processes on the data
/// directory's disk, or a device of the run's own held in the root group.
#[derive(Debug)]
pub struct DeviceThrottle {
    /// The group whose throttle files hold the rules.
    dir: PathBuf,
    parent: PathBuf,
    disk: Device,
    profile: DeviceProfile,
    /// The disk's bytes written when the group was made.
    written_before: u64,
    /// The group's bytes read and written on the disk when it was made (a device of the run's
    /// own: its file system's making).
    serviced_before: (u64, u64),
    /// The device of the run's own (`layer = loop`); on cgroup v1 its rules are the root
    /// group's.
    own: Option<OwnDevice>,
    api: Api,
    /// On cgroup v2, the leaf fathom moved itself to so that its group could give the io
    /// controller to its children (as a memory limit's does).
    leaf: Option<PathBuf>,
}

impl DeviceThrottle {
    /// Holds the engine's IO in `dir` to `profile`, the way its `layer` says: `group` makes
    /// `fathom-io-<pid>` under the caller's blkio group, holds the disk `dir` is on and moves
    /// `pids` into it; `loop` mounts `dir` on a device of its own (its image kept if `keep`)
    /// and holds that device in the root group, `pids` moved there.
    pub fn create(
        profile: &DeviceProfile,
        dir: &Path,
        pids: &[u32],
        keep: bool,
    ) -> Result<DeviceThrottle, ThrottleError> {
        let (parent, api) = parent_group()?;
        let own = match profile.layer {
            DeviceLayer::Loop => {
                let service = profile.service_us.map(|us| ServiceTime {
                    us,
                    depth: profile.depth(),
                });
                Some(OwnDevice::mount(dir, keep, service).map_err(ThrottleError::NoLoop)?)
            }
            DeviceLayer::Group => None,
        };
        let disk = match &own {
            Some(own) => own.device().clone(),
            None => disk_of(dir)?,
        };
        // A device of the run's own is held in v1's root group; a group of the run's own holds
        // it on v2, whose root group takes no io.max.
        let (group, parent, leaf) = match (&own, api) {
            (Some(_), Api::V1) => {
                let root = root_group()?;
                (root.clone(), root, None)
            }
            _ => {
                remove_stale(&parent);
                let group = parent.join(format!("fathom-io-{}", std::process::id()));
                if !group.exists() {
                    std::fs::create_dir(&group).map_err(io("create", &group))?;
                }
                let leaf = match api {
                    Api::V2 => {
                        let help =
                            crate::cgroup::delegation_help(crate::cgroup::Version::V2, &parent);
                        crate::cgroup::enable_for_children(&parent, "io", &help)?
                    }
                    Api::V1 => None,
                };
                (group, parent, leaf)
            }
        };
        let throttle = DeviceThrottle {
            serviced_before: serviced(&group, &disk, api),
            dir: group,
            parent,
            written_before: disk_written(&disk),
            disk,
            profile: profile.clone(),
            own,
            api,
            leaf,
        };
        throttle.write_rules()?;
        for pid in pids {
            throttle.add(*pid)?;
        }
        Ok(throttle)
    }

    /// Writes the profile's four rates for the disk: v1's four throttle files, or v2's `io.max`.
    fn write_rules(&self) -> Result<(), ThrottleError> {
        let p = &self.profile;
        let mib = |x: f64| (x * 1048576.0).round() as u64;
        let rates = [
            p.read_iops.round() as u64,
            p.write_iops.round() as u64,
            mib(p.read_mibps),
            mib(p.write_mibps),
        ]
        .map(|r| r.max(1));
        let key = format!("{}:{}", self.disk.major, self.disk.minor);
        if self.api == Api::V2 {
            let path = self.dir.join("io.max");
            let [riops, wiops, rbps, wbps] = rates;
            let rule = format!("{key} riops={riops} wiops={wiops} rbps={rbps} wbps={wbps}");
            return std::fs::write(&path, rule).map_err(io("write", &path));
        }
        for (file, limit) in RULE_FILES.into_iter().zip(rates) {
            let path = self.dir.join(file);
            std::fs::write(&path, format!("{key} {limit}")).map_err(io("write", &path))?;
        }
        Ok(())
    }

    /// Moves a process (all its threads) into the group.
    pub fn add(&self, pid: u32) -> Result<(), ThrottleError> {
        let procs = self.procs_file();
        std::fs::write(&procs, pid.to_string()).map_err(io("write", &procs))
    }

    /// The file a process writes its pid (or 0 for itself) to, to join the group.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// The disk held to the profile.
    pub fn disk(&self) -> &Device {
        &self.disk
    }

    /// The profile's limits as steps are judged against them.
    pub fn limits(&self) -> fathom_schema::result::device::DeviceLimits {
        let cache =
            std::fs::read_to_string(format!("/sys/block/{}/queue/write_cache", self.disk.name));
        let flushes = cache.is_ok_and(|c| c.trim() == "write back");
        (self.profile).limits(&self.disk.name, self.disk.major, self.disk.minor, flushes)
    }

    /// How the profile was imposed and what of the disk's writes went around it so far.
    pub fn describe(&self) -> String {
        let (read, written) = serviced(&self.dir, &self.disk, self.api);
        let (read, written) = (
            read.saturating_sub(self.serviced_before.0),
            written.saturating_sub(self.serviced_before.1),
        );
        let all = disk_written(&self.disk).saturating_sub(self.written_before);
        let mib = |b: u64| b as f64 / 1048576.0;
        if let (Some(own), Api::V1) = (&self.own, self.api) {
            let layer = own
                .describe_layer()
                .map_or(String::new(), |l| format!("; {l}"));
            return format!(
                "a device of the run's own, {} ({}:{}), held in the root blkio group to profile \
                 {}: {:.0} MiB read and {:.0} MiB written, the kernel's writeback and the file \
                 system's journal included{layer}",
                own.describe(),
                self.disk.major,
                self.disk.minor,
                self.profile.name,
                mib(read),
                mib(written)
            );
        }
        let (kind, how, why) = match self.api {
            Api::V2 => (
                "cgroup v2 group",
                " with io.max",
                "the kernel's writeback of the group's dirty pages is held where the memory \
                 controller is on v2 too",
            ),
            Api::V1 => (
                "blkio group",
                "",
                "the kernel's writeback of dirty pages, and other processes, are not held on \
                 cgroup v1",
            ),
        };
        let own = (self.own.as_ref()).map_or(String::new(), |o| {
            let layer = o
                .describe_layer()
                .map_or(String::new(), |l| format!("; {l}"));
            format!(", a device of the run's own, {}{layer}", o.describe())
        });
        format!(
            "{kind} {} held {} ({}:{}{own}) to profile {}{how}: {:.0} MiB read and {:.0} MiB \
             written through it; the disk took {:.0} MiB of writes in all meanwhile ({why})",
            self.dir.display(),
            self.disk.name,
            self.disk.major,
            self.disk.minor,
            self.profile.name,
            mib(read),
            mib(written),
            mib(all)
        )
    }
}

impl Drop for DeviceThrottle {
    fn drop(&mut self) {
        if self.own.is_some() && self.api == Api::V1 {
            // The root group's rules for the device go; the device goes with `own`.
            clear_rules(&self.dir, &self.disk);
            return;
        }
        crate::cgroup::remove_group(&self.dir, &self.parent, self.leaf.as_deref(), "io");
    }
}

/// Releases the device of its own a killed run left on `dir` (unmounted, detached, its rules
/// gone from the root group); the image stays for the caller to remove.
pub fn release_own_device(dir: &Path) {
    let detached = crate::own_device::release(dir);
    if let Ok(root) = root_group() {
        for device in &detached {
            clear_rules(&root, device);
        }
    }
}

/// Removes a group's rules for `disk` (a rate of 0 is none).
fn clear_rules(group: &Path, disk: &Device) {
    for file in RULE_FILES {
        let _ = std::fs::write(group.join(file), format!("{}:{} 0", disk.major, disk.minor));
    }
}

/// The throttle files a profile's four rates go in, in the order of `rates`.
const RULE_FILES: [&str; 4] = [
    "blkio.throttle.read_iops_device",
    "blkio.throttle.write_iops_device",
    "blkio.throttle.read_bps_device",
    "blkio.throttle.write_bps_device",
];

/// Removes the `fathom-io-<pid>` groups of processes that no longer exist (a run's process
/// the kernel killed) under this process's blkio group.
pub fn remove_stale_groups() {
    if let Ok((parent, _)) = parent_group() {
        remove_stale(&parent);
    }
}

/// Removes `fathom-io-<pid>` groups left by processes that no longer exist.
fn remove_stale(parent: &Path) {
    fathom_api::leftovers::remove_dead(
        parent,
        "blkio cgroup",
        |n| fathom_api::leftovers::pid_after(n, "fathom-io-", None),
        |p: &Path| std::fs::remove_dir(p),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_groups_serviced_bytes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("blkio.throttle.io_service_bytes"),
            "254:0 Read 8192\n254:0 Write 4096\n254:0 Sync 0\n254:0 Total 12288\n7:1 Read 5\nTotal 12293\n",
        )
        .unwrap();
        let disk = Device {
            major: 254,
            minor: 0,
            name: "vda".into(),
        };
        assert_eq!(serviced(dir.path(), &disk, Api::V1), (8192, 4096));
        let other = Device {
            major: 8,
            minor: 0,
            name: "sda".into(),
        };
        assert_eq!(serviced(dir.path(), &other, Api::V1), (0, 0));
    }

    #[test]
    fn reads_a_v2_groups_io_stat() {
        let text = "254:0 rbytes=8192 wbytes=4096 rios=2 wios=1 dbytes=0 dios=0\n\
                    7:1 rbytes=5 wbytes=6 rios=1 wios=1 dbytes=0 dios=0\n";
        assert_eq!(io_stat_bytes(text, "254:0"), (8192, 4096));
        assert_eq!(io_stat_bytes(text, "7:1"), (5, 6));
        assert_eq!(io_stat_bytes(text, "8:0"), (0, 0));
    }
}
