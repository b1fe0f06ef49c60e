//! What `--waits` names: the kinds of wait a sleeping thread is in, told from its state and
//! the system call it sleeps in (the sampler's and the eBPF program's entries alike), and how
//! the kinds are learnt (`Method`), as flags and files give it.

use schemars::JsonSchema;
use serde::{Deserializer, Serialize};

/// The kinds of wait, as the results name them.
pub use fathom_schema::result::threads::WaitKind as Kind;

/// How `--waits` learns what the threads off a CPU wait on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Each thread's state and system call read `HZ` times a second.
    Sample,
    /// Each sleep timed by an eBPF program (root, a kernel with BTF).
    Bpf,
    /// As `Bpf`, each sleep also with its stacks, folded beside the step.
    BpfStacks,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Sample => "sample",
            Method::Bpf => "bpf",
            Method::BpfStacks => "bpf-stacks",
        }
    }

    /// `sample`, `bpf` or `bpf-stacks`.
    pub fn parse(s: &str) -> Result<Method, String> {
        match s {
            "sample" => Ok(Method::Sample),
            "bpf" => Ok(Method::Bpf),
            // `bpfstacks`: as runs handed to a child wrote it before (a run's saved spec).
            "bpf-stacks" | "bpfstacks" => Ok(Method::BpfStacks),
            _ => Err(format!("expected sample, bpf or bpf-stacks, got {s:?}")),
        }
    }

    /// Whether the eBPF program times the sleeps.
    pub fn is_bpf(self) -> bool {
        self != Method::Sample
    }
}

/// Whether `--waits=bpf` can work here: the program loaded once (per process) to see, or why
/// not.
pub fn bpf_loads() -> Result<(), String> {
    static LOADS: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    LOADS
        .get_or_init(|| fathom_bpf::Program::load(true, true).map(drop))
        .clone()
}

/// Reads `waits = true | false | "sample" | "bpf"` (an experiment's key, a run's spec) as the
/// method, `None` for off.
pub fn deserialize_method<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Method>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = Option<Method>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("true, false, \"sample\", \"bpf\" or \"bpf-stacks\"")
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok(v.then_some(Method::Sample))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Method::parse(v).map(Some).map_err(E::custom)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

/// The kind of wait of a thread in state `state` (`stat`'s third field) inside system call
/// `nr` (`syscall`'s first field; -1 outside one, `None` when running or unreadable), by the
/// x86-64 numbers.
pub fn classify(state: char, nr: Option<i64>) -> Kind {
    if state == 'R' {
        return Kind::Cpu;
    }
    let kind = match nr {
        Some(202) => Kind::Futex,
        // fsync, fdatasync, msync, sync, sync_file_range, syncfs
        Some(74 | 75 | 26 | 162 | 277 | 306) => Kind::Fsync,
        // nanosleep, clock_nanosleep, pause
        Some(35 | 230 | 34) => Kind::Sleep,
        // poll, select, sendto, recvfrom, sendmsg, recvmsg, accept, connect, epoll_wait,
        // pselect6, ppoll, epoll_pwait, accept4, recvmmsg, sendmmsg, epoll_pwait2
        Some(
            7 | 23 | 44 | 45 | 46 | 47 | 43 | 42 | 232 | 270 | 271 | 281 | 288 | 299 | 307 | 441,
        ) => Kind::Socket,
        // read, write, pread64, pwrite64, readv, writev, preadv, pwritev, io_getevents,
        // io_submit, io_uring_enter, preadv2, pwritev2, fallocate, openat, unlink, rename
        Some(
            0 | 1 | 17 | 18 | 19 | 20 | 295 | 296 | 208 | 209 | 426 | 327 | 328 | 285 | 257 | 87
            | 82,
        ) => {
            // A read asleep interruptibly waits for a socket or a pipe; uninterruptibly, for
            // the device.
            if state == 'D' || matches!(nr, Some(208 | 426)) {
                Kind::Io
            } else {
                Kind::Socket
            }
        }
        Some(-1) if state == 'D' => Kind::Fault,
        _ if state == 'D' => Kind::Io,
        _ => Kind::Other,
    };
    if cfg!(target_arch = "x86_64") {
        kind
    } else if state == 'D' {
        Kind::Io
    } else {
        Kind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each method as written (a run handed to the child that joins a memory limit) reads back
    /// as itself: `bpf-stacks` was written `bpfstacks` and refused.
    #[test]
    fn every_method_reads_back_as_written() {
        #[derive(serde::Deserialize)]
        struct Spec {
            #[serde(deserialize_with = "deserialize_method")]
            waits: Option<Method>,
        }
        for m in [Method::Sample, Method::Bpf, Method::BpfStacks] {
            let text = format!("{{\"waits\": {}}}", serde_json::to_string(&m).unwrap());
            let back: Spec = serde_json::from_str(&text).unwrap();
            assert_eq!(back.waits, Some(m), "{text}");
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.name())
            );
        }
    }
}
