//! The results directory: one directory per run holding `run.json` (what was run and how it
//! ended) and, per step, a summary, interval records and an HdrHistogram log. Every file is
//! complete on disk before the next step starts; summaries are written atomically.

use crate::result::{IntervalRecord, RunManifest, RunStatus, StepSummary};
use anyhow::Context;
use serde::{de::DeserializeOwned, Serialize};
use std::path::{Path, PathBuf};

/// Where a step writes its time series as it goes.
pub struct StepFiles {
    /// One JSON `IntervalRecord` per line.
    pub intervals: PathBuf,
    /// HdrHistogram interval log (V2, deflate), one tagged histogram per kind per interval.
    pub histograms: PathBuf,
    /// With `--waits=bpf-stacks`: the folded stacks of the time asleep.
    pub offcpu: PathBuf,
}

pub const MANIFEST: &str = "run.json";
pub const STEPS: &str = "steps";

/// A run's directory, being written.
pub struct RunDir {
    pub path: PathBuf,
}

/// Writes JSON through a temporary file and a rename, so readers never see half a file;
/// passwords in it (a server URL's) are hidden.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(value)?;
    let text = fathom_api::secret::redact(&text);
    std::fs::write(&tmp, text.into_owned() + "\n")
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {}", tmp.display()))?;
    Ok(())
}

pub fn read_json<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not a fathom result file", path.display()))
}

/// A step's file in a run directory: `steps/NN-<step>.<ext>`. Built whole, not with
/// `with_extension`, which would cut a step name with a dot in it (`l.i0`).
/// A step's file in a run directory: `steps/NN-step.EXT`.
pub fn step_file(run: &Path, index: usize, step: &str, ext: &str) -> PathBuf {
    run.join(STEPS)
        .join(format!("{index:02}-{}.{ext}", slug(step)))
}

/// Bytes free to an unprivileged writer on the filesystem holding `path`, when it can be read.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: c is NUL-terminated and st is a valid out-pointer for one statvfs record.
    if unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the record.
    let st = unsafe { st.assume_init() };
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

/// What a failure that ran out of space says about where: when the failure `said` the disk was
/// full (an error of kind `Failure::OutOfSpace`) or one of `dirs` has under 1 MiB free, each
/// such directory with the bytes left on its filesystem.
pub fn out_of_space(said: bool, dirs: &[(&str, &Path)]) -> Option<String> {
    let mut notes = Vec::new();
    let mut least: Option<(u64, String)> = None;
    for (what, dir) in dirs {
        let Some(free) = free_bytes(dir) else {
            continue;
        };
        let note = format!(
            "the {what} {} has {free} bytes free on its filesystem",
            dir.display()
        );
        if free < 1 << 20 {
            notes.push(note);
        } else if least.as_ref().is_none_or(|(f, _)| free < *f) {
            least = Some((free, note));
        }
    }
    if notes.is_empty() && said {
        notes.extend(least.map(|(_, n)| n));
    }
    (!notes.is_empty()).then(|| {
        format!(
            "out of space (ENOSPC: no space left on device): {}",
            notes.join("; ")
        )
    })
}

/// A file-name-safe form of a label.
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl RunDir {
    /// Creates a new, uniquely named run directory under `root`.
    pub fn create(root: &Path, label: &str) -> anyhow::Result<RunDir> {
        let stamp = crate::result::now_utc().replace([':', '-'], "");
        let base = format!("{}-{}", stamp.trim_end_matches('Z'), slug(label));
        let mut path = root.join(&base);
        let mut n = 1;
        while path.exists() {
            n += 1;
            path = root.join(format!("{base}.{n}"));
        }
        std::fs::create_dir_all(path.join(STEPS))
            .with_context(|| format!("creating results directory {}", path.display()))?;
        Ok(RunDir { path })
    }

    /// Creates `root/name`, which must not exist yet (experiments name their cells).
    pub fn create_named(root: &Path, name: &str) -> anyhow::Result<RunDir> {
        let path = root.join(slug(name));
        if path.exists() {
            anyhow::bail!("{} already exists", path.display());
        }
        std::fs::create_dir_all(path.join(STEPS))
            .with_context(|| format!("creating results directory {}", path.display()))?;
        Ok(RunDir { path })
    }

    pub fn write_manifest(&self, manifest: &RunManifest) -> anyhow::Result<()> {
        write_json_atomic(&self.path.join(MANIFEST), manifest)
    }

    pub fn step_files(&self, index: usize, step: &str) -> StepFiles {
        StepFiles {
            intervals: step_file(&self.path, index, step, "intervals.jsonl"),
            histograms: step_file(&self.path, index, step, "hlog"),
            offcpu: step_file(&self.path, index, step, "offcpu.folded"),
        }
    }

    pub fn write_summary(&self, summary: &StepSummary) -> anyhow::Result<()> {
        write_json_atomic(
            &step_file(&self.path, summary.index, &summary.step, "json"),
            summary,
        )
    }
}

/// A finished (or interrupted) run, as reports read it.
#[derive(Clone, Debug)]
pub struct LoadedRun {
    pub path: PathBuf,
    pub manifest: RunManifest,
    pub steps: Vec<StepSummary>,
}

impl LoadedRun {
    pub fn load(dir: &Path) -> anyhow::Result<LoadedRun> {
        let manifest: RunManifest = read_json(&dir.join(MANIFEST))?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(STEPS))
            .with_context(|| format!("reading {}", dir.join(STEPS).display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        let steps = files
            .iter()
            .map(|f| read_json(f))
            .collect::<anyhow::Result<_>>()?;
        Ok(LoadedRun {
            path: dir.to_path_buf(),
            manifest,
            steps,
        })
    }

    /// How the run stands as reports show it: its recorded status, except that a `running` run
    /// whose fathom process is gone from this host shows as `killed`.
    pub fn status(&self) -> &'static str {
        let m = &self.manifest;
        match (m.status, m.pid) {
            (RunStatus::Running, Some(pid)) if m.host.hostname == this_host() && !alive(pid) => {
                "killed"
            }
            (status, _) => status.as_str(),
        }
    }

    /// The HdrHistogram interval log of one step.
    pub fn histogram_log(&self, step: &StepSummary) -> PathBuf {
        step_file(&self.path, step.index, &step.step, "hlog")
    }

    /// The interval records of one step.
    pub fn intervals(&self, step: &StepSummary) -> anyhow::Result<Vec<IntervalRecord>> {
        let path = step_file(&self.path, step.index, &step.step, "intervals.jsonl");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l).with_context(|| format!("bad line in {}", path.display()))
            })
            .collect()
    }
}

/// This machine's hostname.
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// True when `pid` is a fathom process other than this one.
fn alive(pid: u32) -> bool {
    pid != std::process::id()
        && std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "fathom")
}

/// Every run directory at or below `path` (a run directory itself, or a results directory),
/// in name order (start order for timestamped runs), skipping dot-directories.
pub fn find_runs(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if path.join(MANIFEST).is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        anyhow::bail!(
            "{} is not a results directory (no {MANIFEST} in it or below it)",
            path.display()
        );
    }
    let mut runs = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)?.flatten() {
            let p = e.path();
            if p.join(MANIFEST).is_file() {
                runs.push(p);
            } else if p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n != STEPS && !n.starts_with('.'))
            {
                // Dot-directories hold databases and set-aside attempts, not reportable runs.
                stack.push(p);
            }
        }
    }
    runs.sort();
    if runs.is_empty() {
        anyhow::bail!(
            "{} holds no fathom runs (no {MANIFEST} found below it)",
            path.display()
        );
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run left `running` by a process that is gone shows as killed; one from another host,
    /// or one that ended, shows as recorded.
    #[test]
    fn a_run_whose_process_is_gone_shows_as_killed() {
        let mut run = LoadedRun {
            path: PathBuf::from("r"),
            manifest: RunManifest {
                status: RunStatus::Running,
                // init: alive, but not fathom.
                pid: Some(1),
                ..RunManifest::default()
            },
            steps: Vec::new(),
        };
        run.manifest.host.hostname = this_host();
        assert_eq!(run.status(), "killed");
        run.manifest.host.hostname = "another-host".into();
        assert_eq!(run.status(), "running");
        run.manifest.host.hostname = this_host();
        run.manifest.status = RunStatus::Finished;
        assert_eq!(run.status(), "finished");
    }

    #[test]
    fn round_trip_and_discovery() {
        let root = tempfile::tempdir().unwrap();
        let run = RunDir::create(root.path(), "rocksdb dbbench").unwrap();
        let manifest = RunManifest {
            workload: "dbbench".into(),
            status: crate::result::RunStatus::Finished,
            ..Default::default()
        };
        run.write_manifest(&manifest).unwrap();
        let step = StepSummary {
            step: "fillseq".into(),
            index: 1,
            ops: 10,
            ..Default::default()
        };
        run.write_summary(&step).unwrap();
        std::fs::write(run.step_files(1, "fillseq").intervals, "").unwrap();
        let found = find_runs(root.path()).unwrap();
        assert_eq!(found, vec![run.path.clone()]);
        let loaded = LoadedRun::load(&run.path).unwrap();
        assert_eq!(loaded.manifest, manifest);
        assert_eq!(loaded.steps, vec![step.clone()]);
        assert!(loaded.intervals(&step).unwrap().is_empty());
        assert!(find_runs(&root.path().join("nope")).is_err());
    }
}
