//! Memory limits through a cgroup child group (v1 or v2) holding the engine's processes, so a
//! database several times the limit is IO-bound as on a real server. The group is created
//! under the caller's own group and removed when the limit is dropped.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("memory limits need a cgroup memory controller, but none is mounted (looked in /proc/self/mountinfo)")]
    NoController,
    #[error("cannot {action} {path}: {source} (memory limits need root or a delegated cgroup)")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// A live child group with a memory limit; dropping it moves its processes back and removes it.
#[derive(Debug)]
pub struct MemoryLimit {
    dir: PathBuf,
    parent: PathBuf,
    version: Version,
    limit_bytes: u64,
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> CgroupError + 'a {
    move |source| CgroupError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Finds the mount point of the v1 memory controller and of cgroup2 in mountinfo text.
pub fn mounts(mountinfo: &str) -> (Option<PathBuf>, Option<PathBuf>) {
    let (mut v1, mut v2) = (None, None);
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mount_point = left.split_whitespace().nth(4).map(PathBuf::from);
        let mut r = right.split_whitespace();
        let fstype = r.next();
        let super_opts = r.nth(1).unwrap_or("");
        match fstype {
            Some("cgroup") if super_opts.split(',').any(|o| o == "memory") => v1 = mount_point,
            Some("cgroup2") => v2 = mount_point,
            _ => {}
        }
    }
    (v1, v2)
}

/// The caller's group path for the v1 memory controller and for cgroup2, from
/// `/proc/self/cgroup` text.
pub fn own_groups(proc_cgroup: &str) -> (Option<String>, Option<String>) {
    let (mut v1, mut v2) = (None, None);
    for line in proc_cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next(), f.next(), f.next());
        match (controllers, path) {
            (Some(""), Some(p)) => v2 = Some(p.to_string()),
            (Some(c), Some(p)) if c.split(',').any(|x| x == "memory") => v1 = Some(p.to_string()),
            _ => {}
        }
    }
    (v1, v2)
}

impl MemoryLimit {
    /// Creates `fathom-<pid>` under the caller's memory group, limits it to `limit_bytes`, and
    /// moves `pids` into it.
    pub fn create(limit_bytes: u64, pids: &[u32]) -> Result<MemoryLimit, CgroupError> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let groups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let (m1, m2) = mounts(&mountinfo);
        let (g1, g2) = own_groups(&groups);
        let (parent, version) = match (m1, g1, m2, g2) {
            (Some(m), Some(g), _, _) => (m.join(g.trim_start_matches('/')), Version::V1),
            (_, _, Some(m), Some(g)) => (m.join(g.trim_start_matches('/')), Version::V2),
            _ => return Err(CgroupError::NoController),
        };
        remove_stale(&parent);
        let dir = parent.join(format!("fathom-{}", std::process::id()));
        if !dir.exists() {
            std::fs::create_dir(&dir).map_err(io("create", &dir))?;
        }
        let limit = MemoryLimit {
            dir,
            parent,
            version,
            limit_bytes,
        };
        let (file, value) = match version {
            Version::V1 => ("memory.limit_in_bytes", limit_bytes.to_string()),
            Version::V2 => {
                let control = limit.parent.join("cgroup.subtree_control");
                std::fs::write(&control, "+memory")
                    .map_err(io("enable the memory controller in", &control))?;
                ("memory.max", limit_bytes.to_string())
            }
        };
        let path = limit.dir.join(file);
        std::fs::write(&path, value).map_err(io("write", &path))?;
        for pid in pids {
            limit.add(*pid)?;
        }
        Ok(limit)
    }

    /// Moves a process (all its threads) into the group.
    pub fn add(&self, pid: u32) -> Result<(), CgroupError> {
        let procs = self.dir.join("cgroup.procs");
        std::fs::write(&procs, pid.to_string()).map_err(io("write", &procs))
    }

    /// The file a process writes its pid (or 0 for itself) to, to join the group.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    pub fn describe(&self) -> String {
        let v = match self.version {
            Version::V1 => "v1",
            Version::V2 => "v2",
        };
        format!(
            "cgroup {v} {} limited to {} bytes",
            self.dir.display(),
            self.limit_bytes
        )
    }

    /// Processes the kernel's out-of-memory killer killed in the group, where it says.
    pub fn oom_kills(&self) -> Option<u64> {
        self.read("memory.oom_control", "memory.events")?
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|v| v.trim().parse().ok())
    }

    /// Peak memory charged to the group, bytes (page cache included).
    pub fn peak_bytes(&self) -> Option<u64> {
        self.read("memory.max_usage_in_bytes", "memory.peak")?
            .trim()
            .parse()
            .ok()
    }

    /// The group's file of that name under this cgroup version, if readable.
    fn read(&self, v1: &str, v2: &str) -> Option<String> {
        let file = match self.version {
            Version::V1 => v1,
            Version::V2 => v2,
        };
        std::fs::read_to_string(self.dir.join(file)).ok()
    }
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            let _ = std::fs::write(self.parent.join("cgroup.procs"), pid);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Removes `fathom-<pid>` groups left by processes that no longer exist.
fn remove_stale(parent: &Path) {
    crate::leftovers::remove_dead(
        parent,
        "memory cgroup",
        |n| crate::leftovers::pid_after(n, "fathom-", None),
        |p: &Path| std::fs::remove_dir(p),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_v1_and_v2_mounts() {
        let info =
            "35 25 0:30 / /sys/fs/cgroup/memory rw,relatime shared:15 - cgroup cgroup rw,memory\n\
                    36 25 0:31 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
                    40 25 0:35 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let (v1, v2) = mounts(info);
        assert_eq!(v1, Some(PathBuf::from("/sys/fs/cgroup/memory")));
        assert_eq!(v2, Some(PathBuf::from("/sys/fs/cgroup/unified")));
    }

    #[test]
    fn finds_own_groups() {
        let text = "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/user.slice\n";
        assert_eq!(
            own_groups(text),
            (
                Some("/process_api/abc".to_string()),
                Some("/user.slice".to_string())
            )
        );
    }
}
