//! Memory limits through a cgroup child group (v1 or v2) holding the engine's processes, so a
//! database several times the limit is IO-bound as on a real server. The group is created
//! under the caller's own group and removed when the limit is dropped: as root anywhere, as
//! anyone else in a group delegated to them (`systemd-run --user --scope -p Delegate=yes` on
//! cgroup v2, a directory chowned to them on v1), which `delegation_help` says how to get.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("memory limits need a cgroup memory controller, but none is mounted (looked in /proc/self/mountinfo)")]
    NoController,
    #[error("cannot {action} {path}: {cause}; memory limits need root or a cgroup delegated to you: {help}")]
    Io {
        action: &'static str,
        path: PathBuf,
        /// Not a `source`: the message says it already, before the help.
        cause: std::io::Error,
        help: String,
    },
    #[error("the memory group handed over by the supervising fathom has no parent group: {0}")]
    Handoff(PathBuf),
    #[error("cannot enable the {controller} controller for the groups under {group}: it holds processes other than fathom (cgroup v2 lets a group with processes of its own give no controller to its children); start fathom alone in a group of its own: {help}")]
    Busy {
        controller: &'static str,
        group: PathBuf,
        help: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Version {
    V1,
    V2,
}

/// A group as a supervising fathom hands it to the process it starts for a run: the child
/// joins it (`MemoryLimit::adopt`) and the supervisor removes it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Handoff {
    pub version: Version,
    pub limit_bytes: u64,
    /// The group's directory.
    pub dir: PathBuf,
    /// The `cgroup.procs` of where the supervisor was before the limit.
    pub outside: PathBuf,
}

/// A live child group with a memory limit; dropping it moves its processes back and removes it.
#[derive(Debug)]
pub struct MemoryLimit {
    dir: PathBuf,
    parent: PathBuf,
    /// On cgroup v2, the leaf beside the group that fathom moved itself to, so that its own
    /// group could give the memory controller to its children; moved back and removed after.
    leaf: Option<PathBuf>,
    version: Version,
    limit_bytes: u64,
    /// How to get a delegated group, for errors.
    help: String,
    /// Whether dropping it removes the group: false for a group a supervising fathom made
    /// and handed to this process (`adopt`), which the supervisor removes.
    owned: bool,
}

/// How an ordinary user gets a group of their own to run fathom in, for the cgroup version
/// that holds the memory controller (mounted at `mount`).
pub fn delegation_help(version: Version, mount: &Path) -> String {
    match version {
        Version::V2 => "start fathom in a delegated scope, `systemd-run --user --scope -p Delegate=yes fathom run ...`".to_string(),
        Version::V1 => {
            let dir = mount.join("fathom-$USER");
            let dir = dir.display();
            format!(
                "have root make one and give it to you, `sudo mkdir {dir} && sudo chown -R $USER {dir}`, \
                 then start fathom in it: `echo $$ > {dir}/cgroup.procs; fathom run ...`"
            )
        }
    }
}

fn io<'a>(
    action: &'static str,
    path: &'a Path,
    help: &'a str,
) -> impl FnOnce(std::io::Error) -> CgroupError + 'a {
    move |cause| CgroupError::Io {
        action,
        path: path.to_path_buf(),
        cause,
        help: help.to_string(),
    }
}

/// The mount point of a v1 controller (`memory`, `cpu`), or of cgroup2 for `""`, in
/// mountinfo text.
pub fn mount_of(mountinfo: &str, controller: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut r = right.split_whitespace();
        let (fstype, super_opts) = (r.next()?, r.nth(1).unwrap_or(""));
        let found = match controller {
            "" => fstype == "cgroup2",
            c => fstype == "cgroup" && super_opts.split(',').any(|o| o == c),
        };
        found.then(|| left.split_whitespace().nth(4).map(PathBuf::from))?
    })
}

/// Finds the mount point of the v1 memory controller and of cgroup2 in mountinfo text.
pub fn mounts(mountinfo: &str) -> (Option<PathBuf>, Option<PathBuf>) {
    (mount_of(mountinfo, "memory"), mount_of(mountinfo, ""))
}

/// The caller's group path for a v1 controller, or for cgroup2 with `""`, from
/// `/proc/self/cgroup` text.
pub fn own_group(proc_cgroup: &str, controller: &str) -> Option<String> {
    proc_cgroup.lines().find_map(|line| {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let found = match controller {
            "" => controllers.is_empty(),
            c => controllers.split(',').any(|x| x == c),
        };
        found.then(|| path.to_string())
    })
}

/// The caller's group path for the v1 memory controller and for cgroup2, from
/// `/proc/self/cgroup` text.
pub fn own_groups(proc_cgroup: &str) -> (Option<String>, Option<String>) {
    (own_group(proc_cgroup, "memory"), own_group(proc_cgroup, ""))
}

/// This process's own group directory for a v1 controller, or for cgroup2 with `""`.
pub fn own_dir(controller: &str) -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let group = own_group(&groups, controller)?;
    Some(mount_of(&mountinfo, controller)?.join(group.trim_start_matches('/')))
}

impl MemoryLimit {
    /// Creates `fathom-<pid>` under the caller's memory group, limits it to `limit_bytes`, and
    /// moves `pids` into it.
    pub fn create(limit_bytes: u64, pids: &[u32]) -> Result<MemoryLimit, CgroupError> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let groups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let (m1, m2) = mounts(&mountinfo);
        let (g1, g2) = own_groups(&groups);
        let (mount, group, version) = match (m1, g1, m2, g2) {
            (Some(m), Some(g), _, _) => (m, g, Version::V1),
            (_, _, Some(m), Some(g)) => (m, g, Version::V2),
            _ => return Err(CgroupError::NoController),
        };
        let parent = mount.join(group.trim_start_matches('/'));
        let help = delegation_help(version, &mount);
        remove_stale(&parent);
        let dir = parent.join(format!("fathom-{}", std::process::id()));
        if !dir.exists() {
            std::fs::create_dir(&dir).map_err(io("create", &dir, &help))?;
        }
        let mut limit = MemoryLimit {
            dir,
            parent,
            leaf: None,
            version,
            limit_bytes,
            help,
            owned: true,
        };
        let file = match version {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => {
                limit.leaf = enable_for_children(&limit.parent, "memory", &limit.help)?;
                "memory.max"
            }
        };
        let path = limit.dir.join(file);
        std::fs::write(&path, limit_bytes.to_string()).map_err(io("write", &path, &limit.help))?;
        for pid in pids {
            limit.add(*pid)?;
        }
        Ok(limit)
    }

    /// The group as a child process is handed it, to `adopt`.
    pub fn handoff(&self) -> Handoff {
        Handoff {
            version: self.version,
            limit_bytes: self.limit_bytes,
            dir: self.dir.clone(),
            outside: self.outside_procs_file(),
        }
    }

    /// Joins the group a supervising fathom made and handed over: this process moves into it,
    /// and dropping the result leaves the group to the supervisor.
    pub fn adopt(handed: &Handoff) -> Result<MemoryLimit, CgroupError> {
        let parent = handed
            .outside
            .parent()
            .ok_or_else(|| CgroupError::Handoff(handed.outside.clone()))?
            .to_path_buf();
        let limit = MemoryLimit {
            dir: handed.dir.clone(),
            parent,
            leaf: None,
            version: handed.version,
            limit_bytes: handed.limit_bytes,
            help: String::new(),
            owned: false,
        };
        limit.add(std::process::id())?;
        Ok(limit)
    }

    /// Moves a process (all its threads) into the group.
    pub fn add(&self, pid: u32) -> Result<(), CgroupError> {
        let procs = self.dir.join("cgroup.procs");
        std::fs::write(&procs, pid.to_string()).map_err(io("write", &procs, &self.help))
    }

    /// The `cgroup.procs` of where fathom was before the limit: a helper fathom starts (perf)
    /// moves there, so the limit holds the engine alone.
    pub fn outside_procs_file(&self) -> PathBuf {
        self.leaf
            .as_ref()
            .unwrap_or(&self.parent)
            .join("cgroup.procs")
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

/// Enables `controller` (`memory`, `io`) for the children of cgroup v2 group `parent`. A group
/// holding processes cannot (but the root): where `parent` holds only fathom (a delegated scope
/// fathom was started in), fathom moves itself to a leaf beside the limited group first, and
/// that leaf is returned.
pub(crate) fn enable_for_children(
    parent: &Path,
    controller: &'static str,
    help: &str,
) -> Result<Option<PathBuf>, CgroupError> {
    let control = parent.join("cgroup.subtree_control");
    let enable = || std::fs::write(&control, format!("+{controller}"));
    let action = match controller {
        "memory" => "enable the memory controller in",
        _ => "enable the io controller in",
    };
    let busy = |e: &std::io::Error| e.kind() == std::io::ErrorKind::ResourceBusy;
    match enable() {
        Ok(()) => return Ok(None),
        Err(e) if busy(&e) => {}
        Err(e) => return Err(io(action, &control, help)(e)),
    }
    let leaf = parent.join(format!("fathom-{}-{controller}-self", std::process::id()));
    if !leaf.exists() {
        std::fs::create_dir(&leaf).map_err(io("create", &leaf, help))?;
    }
    let procs = leaf.join("cgroup.procs");
    std::fs::write(&procs, std::process::id().to_string()).map_err(io("write", &procs, help))?;
    match enable() {
        Ok(()) => Ok(Some(leaf)),
        Err(e) => {
            let _ = std::fs::write(parent.join("cgroup.procs"), std::process::id().to_string());
            let _ = std::fs::remove_dir(&leaf);
            Err(if busy(&e) {
                CgroupError::Busy {
                    controller,
                    group: parent.to_path_buf(),
                    help: help.to_string(),
                }
            } else {
                io(action, &control, help)(e)
            })
        }
    }
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        remove_group(&self.dir, &self.parent, self.leaf.as_deref(), "memory");
    }
}

/// Removes a child group fathom made under `parent`: its processes go back to where fathom is
/// (its leaf on v2 when it made one, as a group giving controllers to its children takes no
/// processes; else the parent), and where there is a leaf the parent is left as fathom found
/// it, `controller` off for its children and fathom back in it.
pub(crate) fn remove_group(dir: &Path, parent: &Path, leaf: Option<&Path>, controller: &str) {
    let home = leaf.unwrap_or(parent);
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    for pid in procs.split_whitespace() {
        let _ = std::fs::write(home.join("cgroup.procs"), pid);
    }
    let _ = std::fs::remove_dir(dir);
    if let Some(leaf) = leaf {
        let _ = std::fs::write(
            parent.join("cgroup.subtree_control"),
            format!("-{controller}"),
        );
        let _ = std::fs::write(parent.join("cgroup.procs"), std::process::id().to_string());
        let _ = std::fs::remove_dir(leaf);
    }
}

/// Removes `fathom-<pid>` groups (and v2 leaves `fathom-<pid>-self`) left by processes that
/// no longer exist.
fn remove_stale(parent: &Path) {
    fathom_api::leftovers::remove_dead(
        parent,
        "memory cgroup",
        |n| {
            fathom_api::leftovers::pid_after(n, "fathom-", None)
                .or_else(|| fathom_api::leftovers::pid_after(n, "fathom-", Some('-')))
        },
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
        assert_eq!(
            mount_of(info, "cpu"),
            Some(PathBuf::from("/sys/fs/cgroup/cpu"))
        );
    }

    /// The way to a delegated group is the one for the version holding the controller, with
    /// this machine's paths.
    #[test]
    fn delegation_help_names_the_command() {
        let v1 = delegation_help(Version::V1, Path::new("/sys/fs/cgroup/memory"));
        assert!(
            v1.contains("sudo mkdir /sys/fs/cgroup/memory/fathom-$USER")
                && v1.contains("echo $$ > /sys/fs/cgroup/memory/fathom-$USER/cgroup.procs"),
            "{v1}"
        );
        let v2 = delegation_help(Version::V2, Path::new("/sys/fs/cgroup"));
        assert!(
            v2.contains("systemd-run --user --scope -p Delegate=yes"),
            "{v2}"
        );
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
