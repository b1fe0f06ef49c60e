//! What a killed fathom leaves behind — socket directories, run data directories, memory
//! cgroups — is named after its process id, so the next run finds entries whose process no
//! longer exists and removes them.

use std::path::{Path, PathBuf};

/// True while a process with this id exists (it may be another program after pid reuse: then
/// its leftovers wait for that one to end, which is safe).
pub fn process_alive(pid: u32) -> bool {
    pid != 0 && Path::new("/proc").join(pid.to_string()).exists()
}

/// Removes the entries of `parent` whose name `owner` maps to a process id that no longer
/// exists, with `remove` (a directory tree, or an empty cgroup directory); says on stderr what
/// went, as `what`. Returns the paths removed. A missing `parent` is nothing to do.
pub fn remove_dead(
    parent: &Path,
    what: &str,
    owner: impl Fn(&str) -> Option<u32>,
    remove: impl Fn(&Path) -> std::io::Result<()>,
) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = owner(&name) else { continue };
        if pid == std::process::id() || process_alive(pid) {
            continue;
        }
        let path = e.path();
        match remove(&path) {
            Ok(()) => {
                eprintln!(
                    "fathom: removed {what} {} left by process {pid}, which no longer runs",
                    path.display()
                );
                removed.push(path);
            }
            Err(err) => eprintln!(
                "fathom: cannot remove {what} {} left by process {pid}: {err}",
                path.display()
            ),
        }
    }
    removed
}

/// The process id in a name `PREFIX<pid>SEP…` (`fathom-123-0` with prefix `fathom-` and
/// separator `-`), or in `PREFIX<pid>` when `sep` is None.
pub fn pid_after(name: &str, prefix: &str, sep: Option<char>) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let digits = match sep {
        Some(c) => rest.split_once(c)?.0,
        None => rest,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The process id at the end of a name `LABEL.<pid>` (a run's data directory).
pub fn pid_suffix(name: &str) -> Option<u32> {
    let digits = name.rsplit_once('.')?.1;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_their_process() {
        assert_eq!(pid_after("fathom-123-4", "fathom-", Some('-')), Some(123));
        assert_eq!(pid_after("fathom-123", "fathom-", None), Some(123));
        assert_eq!(
            pid_after("fathom-rocksdb-version-9", "fathom-", Some('-')),
            None
        );
        assert_eq!(pid_after("fathom-12x-4", "fathom-", Some('-')), None);
        assert_eq!(pid_after("other-1-2", "fathom-", Some('-')), None);
        assert_eq!(pid_suffix("rocksdb.dbbench.c1.4242"), Some(4242));
        assert_eq!(pid_suffix("nodot"), None);
        assert_eq!(pid_suffix("a.b"), None);
    }

    #[test]
    fn only_dead_processes_lose_their_directories() {
        let parent = std::env::temp_dir().join(format!("fathom-leftovers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        // A pid above the kernel's maximum never runs; our own pid always does.
        let dead = parent.join("fathom-4194399-0");
        let ours = parent.join(format!("fathom-{}-0", std::process::id()));
        let unrelated = parent.join("fathom-notapid");
        for d in [&dead, &ours, &unrelated] {
            std::fs::create_dir_all(d.join("inner")).unwrap();
        }
        let removed = remove_dead(
            &parent,
            "test directory",
            |n| pid_after(n, "fathom-", Some('-')),
            |p: &Path| std::fs::remove_dir_all(p),
        );
        assert_eq!(removed, vec![dead.clone()]);
        assert!(!dead.exists() && ours.exists() && unrelated.exists());
        std::fs::remove_dir_all(&parent).unwrap();
        assert!(remove_dead(
            &parent,
            "x",
            |_| Some(1),
            |p: &Path| { std::fs::remove_dir_all(p) }
        )
        .is_empty());
    }
}
