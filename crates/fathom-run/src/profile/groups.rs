//! The processes a profile samples, grouped by executable (each unwound as its executable
//! allows): fathom's own process first, then a server's processes and their children. The
//! groups are read when a step starts and again when it ends, so backends forked during the
//! step are counted as their server's.

use fathom_measure::sample::process::with_descendants;
use fathom_schema::profile::{Unwinding, FATHOM};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Processes of one executable.
pub struct Group {
    /// The first frame of their stacks (`fathom`, `mariadbd`, `postgres`).
    pub label: String,
    pub pids: Vec<u32>,
    pub exe: PathBuf,
    pub unwinding: Unwinding,
}

/// The groups now: fathom's process, then the descendants of `server` by executable.
pub fn read(server: &[u32]) -> Vec<Group> {
    let mut by_exe: BTreeMap<PathBuf, Vec<u32>> = BTreeMap::new();
    for pid in with_descendants(server) {
        if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) {
            by_exe.entry(exe).or_default().push(pid);
        }
    }
    let own = std::env::current_exe().unwrap_or_default();
    std::iter::once((own, vec![std::process::id()]))
        .chain(by_exe)
        .enumerate()
        .map(|(i, (exe, pids))| Group {
            label: if i == 0 {
                FATHOM.to_string()
            } else {
                exe.file_name()
                    .map_or("server".into(), |n| n.to_string_lossy().into_owned())
            },
            unwinding: fathom_measure::unwind::unwinding(&exe),
            pids,
            exe,
        })
        .collect()
}

/// Adds the processes of `later` (read at the step's end) to the groups of the same
/// executable, and any new executable's group.
pub fn extend(groups: &mut Vec<Group>, later: Vec<Group>) {
    for l in later {
        match groups.iter_mut().find(|g| g.exe == l.exe) {
            Some(g) => {
                for pid in l.pids {
                    if !g.pids.contains(&pid) {
                        g.pids.push(pid);
                    }
                }
            }
            None => groups.push(l),
        }
    }
}

/// Each sampled pid's group index.
pub fn by_pid(groups: &[Group]) -> BTreeMap<u32, usize> {
    groups
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.pids.iter().map(move |p| (*p, i)))
        .collect()
}

/// The unwinding modes the groups need, in a fixed order.
pub fn modes(groups: &[Group]) -> Vec<Unwinding> {
    let mut out: Vec<Unwinding> = Vec::new();
    for g in groups {
        if !out.contains(&g.unwinding) {
            out.push(g.unwinding);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(label: &str, pids: &[u32], unwinding: Unwinding) -> Group {
        Group {
            label: label.into(),
            pids: pids.to_vec(),
            exe: PathBuf::from(format!("/bin/{label}")),
            unwinding,
        }
    }

    #[test]
    fn a_backend_forked_during_the_step_joins_its_server() {
        let mut g = vec![
            group("fathom", &[1], Unwinding::Dwarf),
            group("postgres", &[10, 11], Unwinding::FramePointers),
        ];
        extend(
            &mut g,
            vec![
                group("fathom", &[1], Unwinding::Dwarf),
                group("postgres", &[10, 12], Unwinding::FramePointers),
            ],
        );
        assert_eq!(g[1].pids, vec![10, 11, 12]);
        let map = by_pid(&g);
        assert_eq!((map[&1], map[&12]), (0, 1));
        assert_eq!(modes(&g), vec![Unwinding::Dwarf, Unwinding::FramePointers]);
    }

    #[test]
    fn fathoms_own_process_comes_first() {
        let g = read(&[]);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].label, "fathom");
        assert_eq!(g[0].pids, vec![std::process::id()]);
    }
}
