//! Reading /proc and /sys files in as few system calls as they take: the samplers read the same
//! few files of the same processes every second, whatever the workload's rate, and at one client
//! that reading was a visible share of fathom's own CPU per operation.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Error, ErrorKind, Result};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Mutex;

/// Room for the whole of a process's or the host's /proc file here (`/proc/stat` on 2 cores:
/// 1.5 kB; `status`: 1.4 kB) in one read; a larger file takes more reads, never less text.
const FIRST_READ: usize = 16 * 1024;

/// A /proc or /sys file's text: open, reads until the end, close; four calls for most files.
/// A short read is not the end: a file of many records (`diskstats`, `smaps`) gives about a
/// page a read. (`std::fs::read_to_string` first asks the size, 0 here, then grows its buffer
/// from probe reads: eight calls a file.)
pub fn read_proc(path: impl AsRef<Path>) -> Result<String> {
    read_from_start(&File::open(path)?)
}

/// The most files one `OpenFiles` keeps open; past it a file is opened for each reading, so a
/// sampler watching a thousand threads stays far below the process's limit of open files.
const MOST_KEPT: usize = 256;

/// The files one sampler reads at every interval, each kept open and read again from its start:
/// two system calls a reading (the text, then its end) where opening, reading and closing took
/// four. A process's file,
/// kept open, reads "no such process" once it exits, never a later process given its pid; it is
/// then closed and opened afresh.
#[derive(Default)]
pub struct OpenFiles {
    files: Mutex<HashMap<String, File>>,
}

impl OpenFiles {
    /// The text of the file at `path` now.
    pub fn read(&self, path: &str) -> Result<String> {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = files.get(path) {
            match read_from_start(file) {
                Ok(text) => return Ok(text),
                Err(_) => {
                    files.remove(path);
                }
            }
        }
        let file = File::open(path)?;
        let text = read_from_start(&file)?;
        if files.len() < MOST_KEPT {
            files.insert(path.to_string(), file);
        }
        Ok(text)
    }

    /// Closes the files of processes other than `pids` (the host's own files stay open), so a
    /// server whose connections come and go does not leave fathom holding a file of each.
    pub fn keep_processes(&self, pids: &[u32]) {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        files.retain(|path, _| match process_of(path) {
            Some(pid) => pids.contains(&pid),
            None => true,
        });
    }

    /// How many files are open: for tests.
    pub fn len(&self) -> usize {
        self.files.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The pid a `/proc/PID/...` path belongs to.
fn process_of(path: &str) -> Option<u32> {
    path.strip_prefix("/proc/")?.split('/').next()?.parse().ok()
}

/// The text of `file` from its start to its end, read at offsets (a /proc file kept open reads
/// afresh from offset 0).
fn read_from_start(file: &File) -> Result<String> {
    let mut out = vec![0u8; FIRST_READ];
    let mut len = 0;
    loop {
        if len == out.len() {
            out.resize(out.len() * 2, 0);
        }
        match file.read_at(&mut out[len..], len as u64) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    out.truncate(len);
    String::from_utf8(out).map_err(|e| Error::new(ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file kept open reads the process's counters as they are now, and a process that exited
    /// reads as gone rather than as its last figures.
    #[test]
    fn a_kept_file_reads_fresh_figures_and_an_exited_process_as_gone() {
        let files = OpenFiles::default();
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 5",
            ])
            .spawn()
            .unwrap();
        let path = format!("/proc/{}/stat", child.id());
        let ticks = |t: &str| crate::sample::process::parse_stat(t).map(|(u, s, _)| u + s);
        let first = ticks(&files.read(&path).unwrap()).unwrap();
        let mut later = first;
        for _ in 0..200 {
            std::thread::sleep(std::time::Duration::from_millis(10));
            later = ticks(&files.read(&path).unwrap()).unwrap();
            if later > first {
                break;
            }
        }
        assert!(
            later > first,
            "the kept file read {first} ticks, then still {later}"
        );
        assert_eq!(files.len(), 1);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            files.read(&path).is_err(),
            "an exited process read as alive"
        );
        files.keep_processes(&[]);
        assert!(files.is_empty());
    }

    #[test]
    fn a_file_larger_than_one_read_is_read_whole() {
        let files = OpenFiles::default();
        let kept = files.read("/proc/self/smaps").unwrap();
        let opened = read_proc("/proc/self/smaps").unwrap();
        for text in [&kept, &opened] {
            assert!(
                text.len() > FIRST_READ,
                "smaps read as {} bytes",
                text.len()
            );
            let last = text.lines().last().unwrap_or_default();
            assert!(last.starts_with("VmFlags:"), "smaps ends in {last:?}");
        }
        assert_eq!(process_of("/proc/42/io"), Some(42));
        assert_eq!(process_of("/proc/stat"), None);
    }
}
