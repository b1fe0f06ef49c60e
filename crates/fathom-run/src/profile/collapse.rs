//! perf's samples folded into stacks: `perf script` read by inferno's perf collapser (kernel
//! frames marked `_[k]`), each stack then put under its process's label, so one file holds
//! fathom's process and the server's side by side.

use anyhow::Context;
use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;
use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};

/// One recording's stacks, folded and labelled.
pub struct Folded {
    /// `LABEL;THREAD;frames... NS` lines.
    pub text: String,
    /// CPU nanoseconds the stacks stand for.
    pub cpu_ns: u64,
    /// Of all frames (weighted by CPU time), the share (0–100) without a symbol.
    pub unnamed_pct: f64,
}

/// Folds the samples of perf's `data` file under `label`. inferno weighs each sample by its
/// period (perf script prints it), so a stack's count is the CPU nanoseconds it stands for.
pub fn fold(data: &Path, label: &str) -> anyhow::Result<Folded> {
    let mut child = Command::new("perf")
        // Inline frames would need addr2line on every address: 60 times slower here.
        .args(["script", "--no-inline", "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("running perf script")?;
    let stdout = child.stdout.take().expect("piped");
    let mut options = Options::default();
    options.annotate_kernel = true;
    let mut folded = Vec::new();
    let result = Folder::from(options).collapse(BufReader::new(stdout), &mut folded);
    let status = child.wait()?;
    result.with_context(|| format!("folding the stacks of {}", data.display()))?;
    if !status.success() {
        anyhow::bail!("perf script -i {} failed ({status})", data.display());
    }
    Ok(labelled(&String::from_utf8_lossy(&folded), label))
}

/// Puts every stack under `label` and counts what it holds.
fn labelled(folded: &str, label: &str) -> Folded {
    let mut text = String::with_capacity(folded.len() + folded.len() / 8);
    let (mut cpu_ns, mut frames, mut unnamed) = (0u64, 0u64, 0u64);
    for line in folded.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.parse::<u64>() else {
            continue;
        };
        cpu_ns += count;
        // The thread's name is the first frame; the rest are functions.
        for f in stack.split(';').skip(1) {
            frames += count;
            if fathom_core::profile::is_unnamed(f) {
                unnamed += count;
            }
        }
        text.push_str(label);
        text.push(';');
        text.push_str(line);
        text.push('\n');
    }
    Folded {
        text,
        cpu_ns,
        unnamed_pct: if frames == 0 {
            0.0
        } else {
            100.0 * unnamed as f64 / frames as f64
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_go_under_their_process() {
        let f = labelled(
            "postgres;main;ExecScan;[postgres] 3\npostgres;main;heap_getnext 1\n",
            "postgres",
        );
        assert_eq!(f.cpu_ns, 4);
        assert!(f
            .text
            .starts_with("postgres;postgres;main;ExecScan;[postgres] 3\n"));
        // The thread (`postgres`) is no function: 3 × (main, ExecScan, [postgres]) and
        // 1 × (main, heap_getnext) are 11 frames, 3 of them unnamed.
        assert!(
            (f.unnamed_pct - 300.0 / 11.0).abs() < 1e-9,
            "{}",
            f.unnamed_pct
        );
    }
}
