//! perf's samples folded into stacks: `perf script` read by inferno's perf collapser (kernel
//! frames marked `_[k]`, each stack under its thread's name and pid), then each stack of a
//! sampled process put under its group's label, the rest (other processes, idle CPUs)
//! dropped: one file holds fathom's process and the server's side by side.

use anyhow::Context;
use fathom_schema::profile::FATHOM;
use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// One group's stacks, folded and labelled.
#[derive(Default)]
pub struct Folded {
    /// `LABEL;THREAD;frames... NS` lines.
    pub text: String,
    /// CPU nanoseconds the stacks stand for.
    pub cpu_ns: u64,
    /// CPU nanoseconds per thread name.
    pub threads: BTreeMap<String, u64>,
    /// Frames (weighted by CPU time), and those without a symbol.
    frames: u64,
    unnamed: u64,
}

impl Folded {
    /// Of all frames (weighted by CPU time), the share (0–100) without a symbol.
    pub fn unnamed_pct(&self) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            100.0 * self.unnamed as f64 / self.frames as f64
        }
    }
}

/// Folds the samples of perf's `data` file into `into[group]` for the processes `group_of`
/// knows, under `labels[group]`. inferno weighs each sample by its period (perf script
/// prints it), so a stack's count is the CPU nanoseconds it stands for.
pub fn fold(
    data: &Path,
    group_of: &dyn Fn(u32) -> Option<usize>,
    labels: &[String],
    into: &mut [Folded],
) -> anyhow::Result<()> {
    let mut child = Command::new("perf")
        // The process id beside the thread's (`PID/TID`), to pick the processes out; inline
        // frames would need addr2line on every address: 60 times slower here.
        .args([
            "script",
            "--no-inline",
            "-F",
            "comm,pid,tid,time,period,event,ip,sym,dso",
            "-i",
        ])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("running perf script")?;
    let stdout = child.stdout.take().expect("piped");
    // inferno reads a thread's name up to the first space: names with spaces (WiredTiger
    // 11's `eviction-ser 1`) are joined with `_` first, or their samples would be lost.
    let mut script = Vec::new();
    for line in BufReader::new(stdout).lines() {
        script.extend_from_slice(joined_name(&line?).as_bytes());
        script.push(b'\n');
    }
    let status = child.wait()?;
    if !status.success() {
        anyhow::bail!("perf script -i {} failed ({status})", data.display());
    }
    let mut options = Options::default();
    options.annotate_kernel = true;
    options.include_tid = true;
    let mut folded = Vec::new();
    Folder::from(options)
        .collapse(&script[..], &mut folded)
        .with_context(|| format!("folding the stacks of {}", data.display()))?;
    labelled(&String::from_utf8_lossy(&folded), group_of, labels, into);
    Ok(())
}

/// An event line of `perf script` with its thread's name joined by `_` where it has spaces
/// (`eviction-ser 1 19692/19699 ...` → `eviction-ser_1 19692/19699 ...`); other lines as
/// they are.
fn joined_name(line: &str) -> String {
    if line.starts_with(char::is_whitespace) {
        return line.to_string();
    }
    let words: Vec<&str> = line.split(' ').filter(|w| !w.is_empty()).collect();
    let is_ids = |w: &str| {
        w.split_once('/')
            .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
    };
    match words.iter().position(|w| is_ids(w)) {
        Some(at) if at > 1 => format!("{} {}", words[..at].join("_"), words[at..].join(" ")),
        _ => line.to_string(),
    }
}

/// Puts each stack of a known process under its group's label (its first frame,
/// `THREAD-PID/TID`, becoming `LABEL;THREAD`) and counts what it holds; drops the others. In
/// fathom's own process a thread other than the main one still named `fathom` was started by
/// a library without naming it (WiredTiger 3's eviction threads): it is `unnamed-thread`.
fn labelled(
    folded: &str,
    group_of: &dyn Fn(u32) -> Option<usize>,
    labels: &[String],
    into: &mut [Folded],
) {
    for line in folded.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.parse::<u64>() else {
            continue;
        };
        let (first, frames) = stack.split_once(';').unwrap_or((stack, ""));
        let Some((thread, ids)) = first.rsplit_once('-') else {
            continue;
        };
        let (pid, tid) = ids.split_once('/').unwrap_or((ids, ids));
        let Some(g) = pid.parse().ok().and_then(group_of) else {
            continue;
        };
        let thread = if labels[g] == FATHOM && thread == FATHOM && pid != tid {
            "unnamed-thread"
        } else {
            thread
        };
        let f = &mut into[g];
        f.cpu_ns += count;
        for frame in frames.split(';').filter(|x| !x.is_empty()) {
            f.frames += count;
            if fathom_schema::profile::is_unnamed(frame) {
                f.unnamed += count;
            }
        }
        *f.threads.entry(thread.to_string()).or_default() += count;
        let _ = writeln!(f.text, "{};{thread};{frames} {count}", labels[g]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_go_under_their_process_and_others_are_dropped() {
        let folded = "postgres-10/10;main;ExecScan;[postgres] 3\n\
                      postgres-11/11;main;heap_getnext 1\n\
                      swapper-0/0;cpu_idle_[k] 50\n\
                      fathom:client0-7/9;fathom_core::x 2\n\
                      fathom-7/7;fathom_core::collect 1\n\
                      fathom-7/12;__wt_evict 5\n";
        let group_of = |pid: u32| match pid {
            7 => Some(0),
            10 | 11 => Some(1),
            _ => None,
        };
        let labels = ["fathom".to_string(), "postgres".to_string()];
        let mut into = [Folded::default(), Folded::default()];
        labelled(folded, &group_of, &labels, &mut into);
        assert_eq!(
            into[0].text,
            "fathom;fathom:client0;fathom_core::x 2\n\
             fathom;fathom;fathom_core::collect 1\n\
             fathom;unnamed-thread;__wt_evict 5\n"
        );
        assert_eq!(into[1].cpu_ns, 4, "the idle CPU is nobody's");
        assert!(into[1]
            .text
            .starts_with("postgres;postgres;main;ExecScan;[postgres] 3\n"));
        // 3 × (main, ExecScan, [postgres]) and 1 × (main, heap_getnext): 11 frames, 3 unnamed.
        assert!((into[1].unnamed_pct() - 300.0 / 11.0).abs() < 1e-9);
    }

    #[test]
    fn a_thread_name_with_spaces_is_joined() {
        let line = "eviction-ser 1 19692/19699  4265.809779:   10101010 cpu-clock: ";
        assert!(joined_name(line).starts_with("eviction-ser_1 19692/19699 "));
        let plain = "fathom:client0 19692/19710  4265.8: 10101010 cpu-clock: ";
        assert_eq!(joined_name(plain), plain);
        let frame = "\t    5245 [unknown] (/usr/bin/yes)";
        assert_eq!(joined_name(frame), frame);
    }
}
