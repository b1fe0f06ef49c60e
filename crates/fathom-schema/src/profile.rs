//! A step's CPU profile as results keep it: the record beside the step's summary (what was
//! sampled, how, and what was lost), and what reports read from its folded stacks: the
//! functions by self and total share, and the shares of the engine, fathom, the kernel and
//! the rest. See docs/profiles.md.
//!
//! A folded line is `PROCESS;THREAD;outermost;...;innermost NS`: the first frame names the
//! process (`fathom`, or the server's), the second the thread (`fathom:client3`,
//! `rocksdb:low`, `postgres`), the rest the call stack, kernel frames ending in `_[k]`; `NS` is
//! the CPU time its samples stand for, in nanoseconds (each sample of perf's `cpu-clock`
//! weighs its period).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The first frame of fathom's own process in the folded stacks.
pub const FATHOM: &str = "fathom";

/// How a process's call stacks were unwound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unwinding {
    /// Its executable keeps frame pointers: cheap, and exact where every frame has one.
    FramePointers,
    /// Its executable has none: each sample copies the stack's top and perf unwinds it from
    /// the binaries' DWARF call-frame information.
    Dwarf,
}

impl Unwinding {
    /// perf's `--call-graph` value.
    pub fn perf_mode(self) -> &'static str {
        match self {
            Unwinding::FramePointers => "fp",
            // 16 KiB of stack per sample: RocksDB's write path needs more than perf's default
            // 8 KiB (5% of its stacks reached the thread's start at 8 KiB, 99.4% at 16 KiB).
            Unwinding::Dwarf => "dwarf,16384",
        }
    }
}

/// The processes of one executable a profile sampled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProfiledProcess {
    pub pids: Vec<u32>,
    /// Their first frame in the folded stacks.
    pub label: String,
    /// Its executable.
    pub exe: String,
    pub unwinding: Unwinding,
    /// CPU nanoseconds its samples stand for.
    pub cpu_ns: u64,
    /// Of its frames, the share (0–100) perf could not name: code without symbols.
    pub unnamed_pct: f64,
}

/// A step's profile: where its folded stacks are and how they were taken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProfileRecord {
    /// The folded stacks, relative to the run directory (`steps/02-readrandom.folded`).
    pub folded: String,
    /// Samples per second per CPU (perf's `-F`).
    pub frequency_hz: u32,
    /// Seconds sampled: the step's measured part and its maintenance.
    pub seconds: f64,
    /// perf's own CPU seconds over them (reading and writing the samples; the kernel's part
    /// of sampling is charged to the sampled threads).
    #[serde(default)]
    pub perf_cpu_seconds: f64,
    pub samples: u64,
    /// The CPU nanoseconds the samples stand for (the folded counts' total).
    pub cpu_ns: u64,
    /// Samples the kernel dropped because perf fell behind.
    pub lost: u64,
    pub processes: Vec<ProfiledProcess>,
    /// CPU nanoseconds per thread name (threads of one name together).
    pub thread_cpu_ns: BTreeMap<String, u64>,
    /// Function-name prefixes of the engine's own code in fathom's process (an embedded
    /// engine's), for the shares.
    pub engine_code: Vec<String>,
    /// What the profile cannot show, or what went wrong taking it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// CPU microseconds per operation of `ns` nanoseconds of CPU over `ops` operations.
pub fn us_per_op(ns: f64, ops: u64) -> f64 {
    if ops == 0 {
        0.0
    } else {
        ns / 1e3 / ops as f64
    }
}

/// `lost` samples as a share (0–100) of `samples` taken and those lost.
pub fn lost_pct(samples: u64, lost: u64) -> f64 {
    let all = samples + lost;
    if all == 0 {
        0.0
    } else {
        100.0 * lost as f64 / all as f64
    }
}

/// Whose code a sample was running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    Engine,
    Fathom,
    Kernel,
    Other,
}

impl Part {
    pub const ALL: [Part; 4] = [Part::Engine, Part::Fathom, Part::Kernel, Part::Other];

    pub fn name(self) -> &'static str {
        match self {
            Part::Engine => "engine",
            Part::Fathom => "fathom",
            Part::Kernel => "kernel",
            Part::Other => "other",
        }
    }
}

/// A function's samples: where it was running (self) and where it was on the stack (total).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FnSamples {
    pub own: u64,
    pub total: u64,
}

/// Folded stacks, read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stacks {
    pub lines: Vec<(Vec<String>, u64)>,
}

/// True for a kernel frame (inferno marks them `_[k]`).
pub fn is_kernel(frame: &str) -> bool {
    frame.ends_with("_[k]")
}

/// True for frames every stack of a thread passes through (its start-up: `clone3`,
/// `start_thread`, Rust's thread and panic wrappers) and unnamed ones: they say nothing of
/// where the time went.
pub fn is_plumbing(frame: &str) -> bool {
    const EXACT: &[&str] = &[
        "clone",
        "clone3",
        "start_thread",
        "_start",
        "main",
        "__libc_start_main",
        "__libc_start_call_main",
    ];
    const WITHIN: &[&str] = &[
        "__rust_begin_short_backtrace",
        "thread_start",
        "catch_unwind",
        "call_once",
        "do_call<",
        "spawn_unchecked",
        "std::rt::lang_start",
        "std::panicking::try",
        "__rust_try",
    ];
    is_unnamed(frame)
        || frame.starts_with("{closure")
        || EXACT.contains(&frame)
        || WITHIN.iter().any(|w| frame.contains(w))
}

/// True for a frame perf could not name: `[unknown]`, or the executable's name in brackets
/// (`[postgres]`: an address in it without a symbol).
pub fn is_unnamed(frame: &str) -> bool {
    frame.starts_with('[') && frame.ends_with(']')
}

/// True for a function of fathom's own crates (`fathom_measure::...`, `<fathom_workloads::... as
/// ...>::next`).
pub fn is_fathom(frame: &str) -> bool {
    frame.trim_start_matches('<').starts_with("fathom_")
}

impl Stacks {
    /// Parses folded text; a line that is not `STACK COUNT` is an error naming it.
    pub fn parse(text: &str) -> anyhow::Result<Stacks> {
        let mut lines = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (stack, count) = line
                .rsplit_once(' ')
                .and_then(|(s, c)| Some((s, c.trim().parse::<u64>().ok()?)))
                .ok_or_else(|| {
                    anyhow::anyhow!("line {}: expected `frame;frame;... COUNT`", n + 1)
                })?;
            lines.push((stack.split(';').map(str::to_string).collect(), count));
        }
        Ok(Stacks { lines })
    }

    pub fn read(path: &Path) -> anyhow::Result<Stacks> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        Stacks::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    pub fn total(&self) -> u64 {
        self.lines.iter().map(|(_, c)| c).sum()
    }

    /// Every function's samples (the process and thread frames left out; a thread's start-up
    /// frames, under every stack of it, and unnamed frames count in no total).
    pub fn functions(&self) -> BTreeMap<&str, FnSamples> {
        let mut out: BTreeMap<&str, FnSamples> = BTreeMap::new();
        for (stack, count) in &self.lines {
            let frames = stack.get(2..).unwrap_or_default();
            if let Some(leaf) = frames.last() {
                out.entry(leaf).or_default().own += count;
            }
            let mut seen: Vec<&str> = Vec::with_capacity(frames.len());
            for f in frames {
                if !is_plumbing(f) && !seen.contains(&f.as_str()) {
                    seen.push(f);
                    out.entry(f).or_default().total += count;
                }
            }
        }
        out
    }

    /// The `n` functions with the most samples, by self (`own`) or by total.
    pub fn top(&self, n: usize, own: bool) -> Vec<(String, FnSamples)> {
        let mut all: Vec<(String, FnSamples)> = self
            .functions()
            .into_iter()
            .map(|(f, s)| (f.to_string(), s))
            .collect();
        let key = |s: &FnSamples| if own { s.own } else { s.total };
        all.sort_by(|a, b| key(&b.1).cmp(&key(&a.1)).then_with(|| a.0.cmp(&b.0)));
        all.retain(|(_, s)| key(s) > 0);
        all.truncate(n);
        all
    }

    /// Samples per part: the kernel when the innermost frame is the kernel's; the engine
    /// for any other sample of a server's process; in fathom's process, whoever's code the
    /// nearest named frame is (the engine's by `engine_code` prefixes, fathom's crates), and
    /// `other` when no frame says (the C library, Rust's std on its own, unnamed code).
    pub fn shares(&self, engine_code: &[String]) -> BTreeMap<Part, u64> {
        let mut out: BTreeMap<Part, u64> = Part::ALL.iter().map(|p| (*p, 0)).collect();
        for (stack, count) in &self.lines {
            *out.entry(part_of(stack, engine_code)).or_default() += count;
        }
        out
    }
}

/// Whose code one stack was running (see `Stacks::shares`).
pub fn part_of(stack: &[String], engine_code: &[String]) -> Part {
    let frames = stack.get(2..).unwrap_or_default();
    if frames.last().is_some_and(|f| is_kernel(f)) {
        return Part::Kernel;
    }
    if stack.first().is_some_and(|p| p != FATHOM) {
        return Part::Engine;
    }
    for f in frames.iter().rev() {
        let name = f.trim_start_matches('<');
        if engine_code.iter().any(|p| name.starts_with(p.as_str())) {
            return Part::Engine;
        }
        if is_fathom(f) {
            return Part::Fathom;
        }
    }
    Part::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOLDED: &str = "\
fathom;fathom:client0;clone3;fathom_measure::driver::threads::client_loop;rocksdb::DBImpl::GetImpl;memcmp 6
fathom;fathom:client0;clone3;fathom_measure::driver::threads::client_loop;<fathom_workloads::dbbench::Reader as fathom_api::step::Client>::next 3
fathom;fathom:client0;fathom_measure::driver::threads::client_loop;rocksdb::DBImpl::GetImpl;__x64_sys_pread64_[k] 2
fathom;rocksdb:low;rocksdb::CompactionJob::Run;rocksdb::CompactionJob::Run 4
fathom;fathom;malloc 1
postgres;postgres;ExecScan;heap_getnext 5
";

    fn stacks() -> Stacks {
        Stacks::parse(FOLDED).unwrap()
    }

    #[test]
    fn shares_follow_the_nearest_named_frame() {
        let s = stacks().shares(&["rocksdb::".into()]);
        assert_eq!(s[&Part::Engine], 6 + 4 + 5);
        assert_eq!(s[&Part::Fathom], 3);
        assert_eq!(s[&Part::Kernel], 2);
        assert_eq!(s[&Part::Other], 1);
        assert_eq!(s.values().sum::<u64>(), stacks().total());
    }

    #[test]
    fn self_and_total_count_a_recursive_function_once() {
        let f = stacks();
        let f = f.functions();
        assert_eq!(
            f["rocksdb::CompactionJob::Run"],
            FnSamples { own: 4, total: 4 }
        );
        assert_eq!(
            f["fathom_measure::driver::threads::client_loop"],
            FnSamples { own: 0, total: 11 }
        );
        assert!(
            !f.contains_key("fathom:client0"),
            "thread frames are not functions"
        );
        let top = stacks().top(2, true);
        assert_eq!(top[0].0, "memcmp");
        assert_eq!(top[1].0, "heap_getnext");
        assert_eq!(
            stacks().top(1, false)[0].0,
            "fathom_measure::driver::threads::client_loop"
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let e = Stacks::parse("a;b 3\na;b three\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn per_op_cost_and_lost_share() {
        // One CPU second over 1e6 operations: 1 µs each.
        assert!((us_per_op(1e9, 1_000_000) - 1.0).abs() < 1e-9);
        assert_eq!(us_per_op(1e9, 0), 0.0);
        assert!((lost_pct(200, 50) - 20.0).abs() < 1e-9);
        assert_eq!(lost_pct(0, 0), 0.0);
    }
}
