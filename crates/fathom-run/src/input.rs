//! What a user writes, before it is checked: the same structures whether they come from
//! command flags (`--engine`, `--setup`, `--set`, `--param`, `--duration`, ...) or from an
//! experiment file's tables, so both go through one resolver.

use fathom_api::knobs::{Size, Span};
use fathom_schema::result::device::DeviceLayer;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A setup: an engine with its options and settings (`--engine ... --setup ... --set ...`, or
/// an experiment file's `[[setup]]` table).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupInput {
    /// The setup's label in reports; empty for the engine's name.
    #[serde(default)]
    pub name: String,
    pub engine: String,
    /// The engine's own options string; `@FILE` reads it from a file, one item per line.
    #[serde(default)]
    pub options: String,
    /// A file holding the options string (an experiment file's alternative to `@FILE`).
    pub options_file: Option<PathBuf>,
    /// fathom's typed engine settings.
    #[serde(default, deserialize_with = "scalars")]
    pub settings: BTreeMap<String, String>,
    /// This setup's memory limit, over the one every run has.
    pub memory_limit: Option<Size>,
    /// This setup's device profile, over the one every run has (`device` below).
    pub device: Option<String>,
    /// This setup's network profile, over the one every run has (`network` below).
    pub network: Option<String>,
    /// This setup's C allocator, over the one every run has (`allocator` below).
    pub allocator: Option<AllocatorName>,
    /// Profile this setup's steps (`true`) or not (`false`), over the experiment's `profile`.
    pub profile: Option<bool>,
    /// Workload parameters this setup's runs take over the workload's own (a universal
    /// compaction setup's `sequence = "universal"` for dbbench).
    #[serde(default, deserialize_with = "scalars")]
    pub params: BTreeMap<String, String>,
}

/// A workload and its parameters (`--workload ... --param ...`, or a `[[workload]]` table).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadInput {
    pub name: String,
    #[serde(default, deserialize_with = "scalars")]
    pub params: BTreeMap<String, String>,
}

/// How every run of one invocation is driven: `fathom run`'s flags below, or the same keys at
/// an experiment file's top level — this one definition is both. Given both, each flag
/// replaces its key (`over`); a setup's own `memory_limit`, `device`, `allocator` and `profile` replace
/// either for that setup.
#[derive(clap::Args, Deserialize, Clone, Debug, Default)]
#[command(next_help_heading = "Driving each run (with an experiment file, each replaces its key)")]
#[serde(default)]
pub struct DriveInput {
    /// Length of each timed step (sets the workload's `duration` parameter).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub duration: Option<Span>,
    /// Limit the engine's memory, page cache included (e.g. 256m), with a cgroup child group
    /// (as root, or in a cgroup delegated to you: see docs/running.md's `--memory-limit`).
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<Size>,
    /// Hold the engine's IO on the data directory's disk to a device profile's IOPS and
    /// bandwidth (`gp3`, `seed-disk-array`, ... or a profile file: see `fathom devices` and
    /// docs/devices.md), with a cgroup blkio group (root).
    #[arg(long, value_name = "PROFILE|FILE.toml")]
    pub device: Option<String>,
    /// How `--device` is imposed: `loop` (the default) puts the data directory on a device of
    /// the run's own (ext4 in a loop device over an image beside it), every write to it held,
    /// the kernel's writeback included; `group` holds the data directory's own disk with a
    /// blkio group, where writeback nobody syncs escapes the profile (docs/devices.md).
    #[arg(long, value_name = "loop|group")]
    pub device_layer: Option<DeviceLayer>,
    /// How the clients reach a server fathom starts: `unix` (its socket, the default),
    /// `loopback-tcp`, `same-az`, `cross-az`, `wan` or a profile file (round trip, jitter,
    /// bandwidth: see `fathom networks` and docs/network.md), through fathom's delay relay.
    #[arg(long, value_name = "PROFILE|FILE.toml")]
    pub network: Option<String>,
    /// Open loop: total intended operations per second for every timed step (loads and other
    /// fixed-work steps stay closed loop); latency then counts from each operation's intended
    /// start.
    #[arg(long, value_name = "OPS_PER_SEC")]
    pub rate: Option<f64>,
    /// Search each timed step for the highest arrival rate that meets TARGET (`p99<=5ms`,
    /// `READ:p99.9<=20ms`, `failed<=1%`, several joined by commas): a closed-loop run for the
    /// capacity, then open-loop probes, each a step of the run (`fathom findmax`).
    #[arg(long, value_name = "TARGET")]
    pub find_max: Option<String>,
    /// Spacing of open-loop arrivals [default: poisson].
    #[arg(long, value_enum)]
    pub arrivals: Option<Arrivals>,
    /// Open-loop queueing [default: per-client].
    #[arg(long, value_enum)]
    pub queue: Option<Queue>,
    /// Seconds between interval records [default: 1s].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub interval: Option<Span>,
    /// The C allocator an embedded engine runs with, preloaded into a process of its own for
    /// the run (`scripts/setup.sh --allocators` installs them) [default: glibc].
    #[arg(long, value_enum)]
    pub allocator: Option<AllocatorName>,
    /// Sample where each timed step's CPU goes with Linux perf (call graphs of fathom's
    /// process and the server's, over the step's measured span): folded stacks per step,
    /// flame graphs in the HTML report, top functions in the others.
    #[arg(long)]
    pub profile: bool,
    /// Samples per second per CPU for --profile [default: 99].
    #[arg(long, value_name = "HZ")]
    pub profile_hz: Option<u32>,
    /// What each thread off a CPU waits on (a lock, a sync, a timer, the network, the device, a
    /// page fault) over each step's measured span: `--waits` samples it 50 times a second;
    /// `--waits=bpf` times every sleep exactly with an eBPF program on the scheduler's
    /// tracepoints (root, a kernel with BTF).
    #[arg(long, value_name = "HOW", num_args = 0..=1, require_equals = true,
          default_missing_value = "sample", value_parser = fathom_measure::sample::waits::Method::parse)]
    #[serde(deserialize_with = "fathom_measure::sample::waits::deserialize_method")]
    pub waits: Option<fathom_measure::sample::waits::Method>,
    /// Serve the running step's figures in Prometheus' text format at http://ADDR/metrics
    /// (HOST:PORT, as 127.0.0.1:9464; port 0 picks one, printed) while runs go.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_addr, help_heading = "Live metrics")]
    #[serde(deserialize_with = "deserialize_addr")]
    pub metrics: Option<String>,
    /// Push the same to a Prometheus Pushgateway (http://host:port) after every interval, as
    /// job `fathom` and instance the host's name: for short runs a scrape would miss.
    #[arg(long, value_name = "URL", help_heading = "Live metrics")]
    pub metrics_push: Option<String>,
}

impl DriveInput {
    /// Where the runs' live figures go.
    pub fn live(&self) -> LiveTargets {
        LiveTargets {
            metrics: self.metrics.clone(),
            metrics_push: self.metrics_push.clone(),
        }
    }

    /// The one rule of precedence, the same for every option: what the command line gave
    /// (`self`) replaces the file's key; what it did not give leaves the file's.
    pub fn over(&self, file: DriveInput) -> DriveInput {
        let cli = self.clone();
        DriveInput {
            duration: cli.duration.or(file.duration),
            memory_limit: cli.memory_limit.or(file.memory_limit),
            device: cli.device.or(file.device),
            device_layer: cli.device_layer.or(file.device_layer),
            network: cli.network.or(file.network),
            rate: cli.rate.or(file.rate),
            find_max: cli.find_max.or(file.find_max),
            arrivals: cli.arrivals.or(file.arrivals),
            queue: cli.queue.or(file.queue),
            interval: cli.interval.or(file.interval),
            allocator: cli.allocator.or(file.allocator),
            // A switch: given, it is on; not given, the file says.
            profile: cli.profile || file.profile,
            profile_hz: cli.profile_hz.or(file.profile_hz),
            waits: cli.waits.or(file.waits),
            metrics: cli.metrics.or(file.metrics),
            metrics_push: cli.metrics_push.or(file.metrics_push),
        }
    }
}

/// Where a run's live figures go: `fathom run`'s `--metrics` and `--metrics-push`, or an
/// experiment file's `metrics` and `metrics_push` (both `DriveInput`'s), handed to a child run
/// in its spec.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveTargets {
    /// The address to serve `/metrics` at.
    pub metrics: Option<String>,
    /// The Pushgateway to push to.
    pub metrics_push: Option<String>,
}

/// An experiment file's `metrics`: checked as `--metrics` is.
pub fn deserialize_addr<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    use serde::Deserialize;
    Option::<String>::deserialize(d)?
        .map(|a| parse_addr(&a).map_err(serde::de::Error::custom))
        .transpose()
}

/// `--metrics`: an address this host can listen on, `HOST:PORT`; a port alone or a host alone
/// says which it lacks.
pub fn parse_addr(text: &str) -> Result<String, String> {
    use std::net::ToSocketAddrs;
    let expected = "expected HOST:PORT, as 127.0.0.1:9464 (this host only) or 0.0.0.0:9464 (every \
                    interface: anyone who can reach the host can read the run's figures)";
    match text.rsplit_once(':') {
        None if text.parse::<u16>().is_ok() => Err(format!(
            "`{text}` is a port alone: {expected}, so 127.0.0.1:{text}"
        )),
        None => Err(format!("`{text}` has no port: {expected}")),
        Some((host, port)) => {
            if host.is_empty() || port.parse::<u16>().is_err() {
                return Err(format!("`{text}`: {expected}"));
            }
            match text.to_socket_addrs().map(|mut a| a.next()) {
                Ok(Some(_)) => Ok(text.to_string()),
                _ => Err(format!(
                    "`{text}`: this host cannot resolve `{host}`; {expected}"
                )),
            }
        }
    }
}

/// How open-loop arrivals are spaced (`--arrivals`, an experiment's `arrivals`).
#[derive(clap::ValueEnum, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Every 1/rate seconds.
    Uniform,
    /// Exponential gaps: a Poisson process.
    Poisson,
}

/// Who takes an open-loop arrival (`--queue`, an experiment's `queue`).
#[derive(clap::ValueEnum, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Queue {
    /// Each client its own arrivals at its share of the rate.
    PerClient,
    /// One stream at the total rate, each idle client taking the next arrival, as
    /// LinkbenchX's requesters.
    Shared,
}

/// A C allocator an embedded engine can run with (`--allocator`, an experiment's or a
/// setup's `allocator`).
#[derive(clap::ValueEnum, serde::Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AllocatorName {
    /// glibc's malloc, which fathom is linked with.
    Glibc,
    /// gperftools' tcmalloc, as MongoDB links it.
    Tcmalloc,
    /// jemalloc.
    Jemalloc,
}

/// A table of scalars (strings, numbers, booleans) read as the strings `--set`/`--param` would
/// have given.
fn scalars<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        Bool(bool),
        Int(i64),
        Float(f64),
        Text(String),
    }
    let map = BTreeMap::<String, Scalar>::deserialize(d)?;
    Ok(map
        .into_iter()
        .map(|(k, v)| {
            let text = match v {
                Scalar::Bool(b) => b.to_string(),
                Scalar::Int(i) => i.to_string(),
                Scalar::Float(f) => f.to_string(),
                Scalar::Text(s) => s,
            };
            (k, text)
        })
        .collect())
}

/// The keys a struct's derived `Deserialize` reads (renames applied), asked of serde itself:
/// the experiment file's known keys come from its structs, never from a list beside them.
pub fn serde_keys<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    /// Carries the field names out of `deserialize_struct`; any other request finds none.
    #[derive(Debug)]
    struct Found(&'static [&'static str]);
    impl std::fmt::Display for Found {
        fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "{:?}", self.0)
        }
    }
    impl std::error::Error for Found {}
    impl de::Error for Found {
        fn custom<M: std::fmt::Display>(_: M) -> Found {
            Found(&[])
        }
    }
    struct Ask;
    impl<'de> Deserializer<'de> for Ask {
        type Error = Found;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Found> {
            Err(Found(&[]))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Found> {
            Err(Found(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    match T::deserialize(Ask) {
        Err(Found(fields)) => fields,
        Ok(_) => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        drive: DriveInput,
    }

    /// A value for every run option, as a flag and as the file's key; a new option fails
    /// `every_option_is_one_flag_and_one_key` until it has one here.
    const GIVEN: &[(&str, &str, &str)] = &[
        ("duration", "--duration=7s", "duration = \"9s\""),
        ("memory_limit", "--memory-limit=1g", "memory_limit = \"2g\""),
        ("device", "--device=gp3", "device = \"seed-ssd\""),
        (
            "device_layer",
            "--device-layer=group",
            "device_layer = \"loop\"",
        ),
        ("network", "--network=same-az", "network = \"cross-az\""),
        ("rate", "--rate=100", "rate = 200.0"),
        ("find_max", "--find-max=p99<=5ms", "find_max = \"p99<=9ms\""),
        ("arrivals", "--arrivals=uniform", "arrivals = \"poisson\""),
        ("queue", "--queue=shared", "queue = \"per-client\""),
        ("interval", "--interval=2s", "interval = \"3s\""),
        (
            "allocator",
            "--allocator=jemalloc",
            "allocator = \"tcmalloc\"",
        ),
        ("profile", "--profile", "profile = false"),
        ("profile_hz", "--profile-hz=49", "profile_hz = 199"),
        ("waits", "--waits=bpf", "waits = \"sample\""),
        (
            "metrics",
            "--metrics=127.0.0.1:9464",
            "metrics = \"127.0.0.1:9465\"",
        ),
        (
            "metrics_push",
            "--metrics-push=http://127.0.0.1:9091",
            "metrics_push = \"http://127.0.0.1:9092\"",
        ),
    ];

    fn flags(which: &[&str]) -> DriveInput {
        let args = GIVEN.iter().filter(|g| which.contains(&g.0)).map(|g| g.1);
        Cli::parse_from(std::iter::once("fathom").chain(args)).drive
    }

    fn file() -> DriveInput {
        let text: Vec<&str> = GIVEN.iter().map(|g| g.2).collect();
        toml::from_str(&text.join("\n")).unwrap()
    }

    #[test]
    fn every_option_is_one_flag_and_one_key() {
        let mut flags: Vec<String> =
            <DriveInput as clap::Args>::augment_args(clap::Command::new("f"))
                .get_arguments()
                .map(|a| a.get_id().as_str().to_string())
                .collect();
        let mut keys: Vec<String> = serde_keys::<DriveInput>()
            .iter()
            .map(|k| k.to_string())
            .collect();
        let mut tested: Vec<String> = GIVEN.iter().map(|g| g.0.to_string()).collect();
        flags.sort();
        keys.sort();
        tested.sort();
        assert_eq!(flags, keys, "the command line's options and the file's");
        assert_eq!(flags, tested, "every option has a value in GIVEN");
    }

    #[test]
    fn a_given_flag_replaces_its_key_and_an_absent_one_leaves_it() {
        let all: Vec<&str> = GIVEN.iter().map(|g| g.0).collect();
        let cli = flags(&all);
        assert_eq!(
            format!("{:?}", cli.over(file())),
            format!("{cli:?}"),
            "every flag given: the command line's values"
        );
        assert_eq!(
            format!("{:?}", flags(&[]).over(file())),
            format!("{:?}", file()),
            "none given: the file's"
        );
        for (name, ..) in GIVEN {
            let mixed = format!("{:?}", flags(&[name]).over(file()));
            assert_ne!(mixed, format!("{:?}", file()), "--{name} replaced its key");
        }
    }
}
