//! The one resolver: what a user wrote (flags or an experiment file's tables, see `input`)
//! becomes a checked `RunSpec`. Units, the options file, open-loop arrivals, the interval's
//! lower bound, `--duration` and what the workload needs of the engine are all decided here,
//! once, so the command line and experiment files cannot drift apart. Errors name the flag
//! or the file's key and what was expected.

use crate::input::{AllocatorName, Arrivals, DriveInput, Queue, SetupInput, WorkloadInput};
use anyhow::Context;
use fathom_api::capability::{Need, Offer};
use fathom_api::family::Family;
use fathom_api::pace::Spacing;
use fathom_api::step::{LatencyFrom, OpenLoop, StepPlan};
use fathom_engines::settings::Settings;
use fathom_engines::EngineEntry;
use fathom_schema::result::device::DeviceLayer;
use fathom_workloads::params::Params;
use fathom_workloads::WorkloadEntry;
use std::path::Path;
use std::time::Duration;

/// The shortest interval between records: shorter ones measure the samplers more than the
/// engine.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// The interval records' length when none is given.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// A setup, resolved: an engine with its options string and settings.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The setup's label in reports.
    pub name: String,
    pub engine: &'static EngineEntry,
    /// The engine's own options string.
    pub options: String,
    pub settings: Settings,
    pub memory_limit: Option<u64>,
    /// `--device`: the profile the engine's IO on its disk is held to.
    pub device: Option<fathom_schema::result::device::DeviceProfile>,
    /// `--network`: how the clients reach the server; None for its unix socket.
    pub network: Option<fathom_schema::result::network::NetworkProfile>,
    /// The C allocator preloaded into the run's process (`--allocator`); `None` for glibc's.
    pub allocator: Option<Allocator>,
    /// `--profile`: samples per second per CPU; `None` for no profile.
    pub profile_hz: Option<u32>,
}

/// One run, resolved and checked: a setup, a workload with its parameters, the client count
/// and how the steps are driven. It crosses to a run's own process as its serialized form
/// (`spec_form`, which serializes it), engine and workload by name.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub setup: Setup,
    pub workload: &'static WorkloadEntry,
    /// The workload's name as the user knows it: the entry's, or a workload file's `name`
    /// (`ycsb-a`, not `declared`); run directories and headers carry it.
    pub title: String,
    pub params: Params,
    pub clients: usize,
    pub interval: Duration,
    pub open_loop: Option<OpenLoop>,
    /// `--find-max`: the target, and how the probes' arrivals come.
    pub find_max: Option<crate::findmax::FindMax>,
    /// Settings fathom set because the workload needs them (`transactions=optimistic: ...`),
    /// printed in the run's header.
    pub implied: Vec<String>,
    /// What may go wrong with the setup as given, found before anything runs (a memory limit
    /// below the engine's caches), printed in the run's header.
    pub warnings: Vec<String>,
    /// `--waits`: what the threads off a CPU wait on, and how it is learnt.
    pub waits: Option<fathom_measure::sample::waits::Method>,
    /// Where the run's live figures go (`--metrics`, `--metrics-push`).
    pub live: crate::input::LiveTargets,
}

/// How errors name what the user wrote: flags, or keys of an experiment file.
#[derive(Clone, Debug)]
pub enum Keys {
    Flags,
    File {
        /// `setup[0] (rocksdb.def)`
        setup: String,
        /// `workload[1] (ibench)`
        workload: String,
    },
}

impl Keys {
    fn flag(key: &str) -> String {
        match key {
            "options" => "--setup".into(),
            "settings" => "--set".into(),
            "params" => "--param".into(),
            k => format!("--{}", k.replace('_', "-")),
        }
    }

    /// A key of the setup (`engine`, `options`, `settings`, `memory_limit`).
    pub fn setup(&self, key: &str) -> String {
        match self {
            Keys::Flags => Self::flag(key),
            Keys::File { setup, .. } => format!("{setup}.{key}"),
        }
    }

    /// A key of the workload (`name`, `params`).
    pub fn workload(&self, key: &str) -> String {
        match self {
            Keys::Flags if key == "name" => "--workload".into(),
            Keys::Flags => Self::flag(key),
            Keys::File { workload, .. } => format!("{workload}.{key}"),
        }
    }

    /// A key every run shares (`duration`, `interval`, `rate`, ...).
    pub fn drive(&self, key: &str) -> String {
        match self {
            Keys::Flags => Self::flag(key),
            Keys::File { .. } => key.to_string(),
        }
    }
}

/// Resolves one setup and workload for `clients` client threads. `base` is the directory
/// relative options files are read from.
pub fn resolve(
    setup: &SetupInput,
    workload: &WorkloadInput,
    drive: &DriveInput,
    clients: usize,
    keys: &Keys,
    base: &Path,
) -> anyhow::Result<RunSpec> {
    let resolved = resolve_setup(setup, drive, keys, base)?;
    // A workload file (a `.toml` path, or a bundled name) runs as the declared workload.
    let declared = fathom_workloads::declared::file::is_file(&workload.name);
    let entry = match declared {
        true => &fathom_workloads::declared::ENTRY,
        false => fathom_workloads::find(&workload.name)
            .map_err(|e| anyhow::anyhow!("{}: {e}", keys.workload("name")))?,
    };
    let mut given = workload.params.clone();
    given.extend(setup.params.clone());
    let mut params = Params::new(given);
    let mut title = entry.name.to_string();
    if declared {
        let file = fathom_workloads::declared::file::resolve_path(&workload.name, base);
        let loaded = fathom_workloads::declared::file::load(&file)
            .map_err(|e| anyhow::anyhow!("{}: {e}", keys.workload("name")))?;
        title = loaded.file.name;
        params.set("file", file);
    }
    if let Some(d) = &drive.duration {
        params.set(entry.duration_param, String::from(d.clone()));
    }
    let interval = drive
        .interval
        .as_ref()
        .map_or(DEFAULT_INTERVAL, |i| i.value);
    if interval < MIN_INTERVAL {
        anyhow::bail!("{}: at least 100ms", keys.drive("interval"));
    }
    if clients == 0 {
        anyhow::bail!(
            "{}: every count must be at least 1, got 0",
            keys.drive("clients")
        );
    }
    let mut spec = RunSpec {
        setup: resolved,
        workload: entry,
        title,
        params,
        clients,
        interval,
        open_loop: open_loop(drive, keys)?,
        find_max: find_max(drive, keys)?,
        implied: Vec::new(),
        warnings: Vec::new(),
        waits: drive.waits,
        live: drive.live(),
    };
    if drive.waits == Some(fathom_measure::sample::waits::Method::Bpf) {
        fathom_measure::sample::waits::bpf_loads().map_err(|e| {
            anyhow::anyhow!(
                "{}: bpf: {e}; --waits (sampling) works without it",
                keys.drive("waits")
            )
        })?;
    }
    spec.check().map_err(|e| match keys {
        Keys::Flags => e,
        Keys::File { setup, workload } => e.context(format!("{setup} with {workload}")),
    })?;
    Ok(spec)
}

/// Resolves a setup: the engine, its options string (read from a file where asked), its
/// settings checked against the engine's list, and its memory limit (the setup's own, else
/// the one every run has).
pub fn resolve_setup(
    setup: &SetupInput,
    drive: &DriveInput,
    keys: &Keys,
    base: &Path,
) -> anyhow::Result<Setup> {
    let engine = fathom_engines::find(&setup.engine)
        .map_err(|e| anyhow::anyhow!("{}: {e}", keys.setup("engine")))?;
    let memory_limit = setup
        .memory_limit
        .as_ref()
        .or(drive.memory_limit.as_ref())
        .map(|m| m.value);
    (engine.settings.check)(engine.name, &setup.settings)
        .map_err(|e| anyhow::anyhow!("{}: {e}", keys.setup("settings")))?;
    let profile_hz = profile_hz(setup, engine, drive, keys)?;
    let device = device(setup, drive, keys, base)?;
    if device.is_some() && memory_limit.is_some() && fathom_measure::throttle::through_v2() {
        anyhow::bail!(
            "{}: a device profile with a memory limit is not yet held on cgroup v2 (a process \
             is in one v2 group, and fathom makes one for each); run one without the other, or \
             on a host whose blkio controller is on cgroup v1",
            keys.setup("device")
        );
    }
    let network = network(setup, engine, drive, keys, base)?;
    let allocator = match (setup.allocator, drive.allocator) {
        (Some(a), _) => Some((a, keys.setup("allocator"))),
        (None, Some(a)) => Some((a, keys.drive("allocator"))),
        (None, None) => None,
    };
    let allocator = match allocator {
        Some((name, key)) => Allocator::named(name, engine, &key)?
            .map(|a| a.reaches(&setup.settings, &key).map(|_| a))
            .transpose()?,
        None => None,
    };
    Ok(Setup {
        name: if setup.name.is_empty() {
            setup.engine.clone()
        } else {
            setup.name.clone()
        },
        engine,
        options: options(setup, engine, keys, base)?,
        settings: setup.settings.clone(),
        memory_limit,
        device,
        network,
        allocator,
        profile_hz,
    })
}

/// The setup's network profile (its own over the run's), checked before anything runs: its
/// figures, and that the engine is a server fathom starts.
fn network(
    setup: &SetupInput,
    engine: &EngineEntry,
    drive: &DriveInput,
    keys: &Keys,
    base: &Path,
) -> anyhow::Result<Option<fathom_schema::result::network::NetworkProfile>> {
    let (given, key) = match (&setup.network, &drive.network) {
        (Some(n), _) => (n, keys.setup("network")),
        (None, Some(n)) => (n, keys.drive("network")),
        (None, None) => return Ok(None),
    };
    let profile = crate::network::profile::find(given, base, &key)?;
    if !profile.tcp {
        return Ok(None);
    }
    if profile.namespace {
        crate::network::namespace::Namespace::check(&key)?;
    }
    if !engine.server {
        anyhow::bail!(
            "{key}: `{given}` needs a server fathom starts (postgres, innodb, myrocks, \
             mongodb); {} is embedded: its clients call it in fathom's own process, over no \
             network",
            engine.name,
        );
    }
    if setup.settings.contains_key("url") {
        anyhow::bail!(
            "{key}: `{given}` is for a server fathom starts; with `url` the server is reached \
             over whatever network the URL names"
        );
    }
    Ok(Some(profile))
}

/// The setup's device profile (its own over the run's), checked before anything runs: the
/// profile's figures, and that this host can hold a disk to them the way `--device-layer`
/// says (a device of the run's own unless it says `group`).
fn device(
    setup: &SetupInput,
    drive: &DriveInput,
    keys: &Keys,
    base: &Path,
) -> anyhow::Result<Option<fathom_schema::result::device::DeviceProfile>> {
    let (given, key) = match (&setup.device, &drive.device) {
        (Some(d), _) => (d, keys.setup("device")),
        (None, Some(d)) => (d, keys.drive("device")),
        (None, None) => return Ok(None),
    };
    let mut profile = crate::device_profile::find(given, base, &key)?;
    profile.layer = drive.device_layer.unwrap_or(DeviceLayer::Loop);
    fathom_measure::throttle::check(base, &profile).map_err(|e| anyhow::anyhow!("{key}: {e}"))?;
    Ok(Some(profile))
}

/// A C allocator other than glibc's, preloaded (LD_PRELOAD) into the process a run gets of
/// its own (`supervise`): the one its engine's own builds link (MongoDB links tcmalloc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocator {
    pub which: AllocatorName,
    pub name: &'static str,
    pub library: &'static str,
}

impl Allocator {
    /// The allocator `name` (at `key`), checked for `engine`; None for glibc's.
    pub(crate) fn named(
        name: AllocatorName,
        engine: &EngineEntry,
        key: &str,
    ) -> anyhow::Result<Option<Allocator>> {
        // Debian's libraries (`scripts/setup.sh --allocators`).
        let a = match name {
            AllocatorName::Glibc => return Ok(None),
            AllocatorName::Tcmalloc => Allocator {
                which: name,
                name: "tcmalloc",
                library: "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
            },
            AllocatorName::Jemalloc => Allocator {
                which: name,
                name: "jemalloc",
                library: "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
            },
        };
        if engine.server {
            anyhow::bail!(
                "{key}: `{}` is a server, whose allocator is its build's; `allocator` is for \
                 embedded engines, which live in fathom's process",
                engine.name
            );
        }
        if !Path::new(a.library).exists() {
            anyhow::bail!(
                "{key}: {} is not installed ({} is missing); install it with \
                 `scripts/setup.sh --allocators`",
                a.name,
                a.library
            );
        }
        Ok(Some(a))
    }

    /// A release loaded at run time (`version`, `library`) is deep-bound (its own dependencies
    /// first, so releases never meet): its malloc stays glibc's whatever is preloaded, and
    /// memory passing between it and the C++ runtime would meet two allocators.
    fn reaches(&self, settings: &Settings, key: &str) -> anyhow::Result<()> {
        for loaded in ["version", "library"] {
            if let Some(v) = settings.get(loaded).filter(|v| !v.trim().is_empty()) {
                anyhow::bail!(
                    "{key}: the setting `{loaded} = {v}` loads a release at run time, deep-bound \
                     to its own dependencies, where a preloaded {} would not reach its malloc; \
                     run the linked release with it, or this one with glibc's",
                    self.name
                );
            }
        }
        Ok(())
    }

    /// Whether this process runs with it: its library is mapped.
    pub fn is_loaded(&self) -> bool {
        std::fs::read_to_string("/proc/self/maps").is_ok_and(|m| m.contains(self.library))
    }
}

/// The setup's profile frequency, when it is profiled: the setup's `profile` over the run's,
/// checked before anything runs (perf there and allowed, a server's processes known).
fn profile_hz(
    setup: &SetupInput,
    engine: &EngineEntry,
    drive: &DriveInput,
    keys: &Keys,
) -> anyhow::Result<Option<u32>> {
    let hz = drive.profile_hz.unwrap_or(crate::profile::DEFAULT_HZ);
    if !(1..=crate::profile::MAX_HZ).contains(&hz) {
        anyhow::bail!(
            "{}: {hz} is not a sampling frequency: expected 1 to {}",
            keys.drive("profile_hz"),
            crate::profile::MAX_HZ
        );
    }
    if !setup.profile.unwrap_or(drive.profile) {
        return Ok(None);
    }
    let key = match setup.profile {
        Some(_) => keys.setup("profile"),
        None => keys.drive("profile"),
    };
    crate::profile::check_perf().map_err(|e| anyhow::anyhow!("{key}: {e}"))?;
    let given = |k: &str| setup.settings.get(k).is_some_and(|v| !v.is_empty());
    if engine.server && given("url") && !given("pid") {
        anyhow::bail!(
            "{key}: a profile samples the server's processes, and fathom did not start this one: \
             name them with `{} pid=PID[,PID...]`",
            keys.setup("settings")
        );
    }
    Ok(Some(hz))
}

impl RunSpec {
    /// Checks the settings, parameters and family, and meets what the workload needs of the
    /// engine (setting what one setting makes work), before any database is touched.
    fn check(&mut self) -> anyhow::Result<()> {
        let engine = self.setup.engine;
        let w = self.workload;
        self.params.check(w.name, &(w.params)())?;
        let family = engine.family();
        if !w.families.contains(&family) {
            anyhow::bail!(
                "workload `{}` runs on {} engines; `{}` is a {family} engine",
                w.name,
                Family::list(w.families),
                engine.name
            );
        }
        // What a workload sets on servers unless given (dbbench keeps its database open
        // between steps there, a server staying up from step to step).
        if engine.server {
            for (key, value) in w.on_servers {
                if !self.params.given().contains_key(*key) {
                    self.params.set(key, *value);
                }
            }
        }
        let built = (w.build)(&self.params, self.clients)?;
        let reopens = |s: &&StepPlan| s.reopen || s.options_for(engine.syntax).is_some();
        if let Some(step) = built.steps().iter().find(|s| engine.server && reopens(s)) {
            anyhow::bail!(
                "step `{}` of workload `{}` reopens the database (or opens it with options of its own), which fathom does for embedded engines only; `{}` is a server",
                step.name,
                w.name,
                engine.name
            );
        }
        if let Some(why) = built.refuses(family) {
            anyhow::bail!("{why}; `{}` is a {family} engine", engine.name);
        }
        if let Some(f) = &self.find_max {
            // Every step the search will probe, checked now rather than when its turn comes.
            let timed: Vec<&StepPlan> = (built.steps().iter())
                .filter(|s| s.runs_for_a_time())
                .collect();
            if timed.is_empty() {
                anyhow::bail!(
                    "--find-max searches a timed step, and workload `{}` has none as given (its steps run a fixed amount of work); give --duration (e.g. --duration 60s)",
                    w.name
                );
            }
            for step in timed {
                let kinds: Vec<&str> = step.kinds.list().iter().map(|k| k.name).collect();
                f.target
                    .check_kinds(&kinds)
                    .map_err(|e| anyhow::anyhow!("step {}: {e}", step.name))?;
            }
        }
        for need in built.needs() {
            self.meet(need)?;
        }
        // The settings as the engine will open with them, what a need set included.
        (engine.settings.check)(engine.name, &self.setup.settings)?;
        self.check_memory()
    }

    /// A memory limit below what the engine is configured to hold at least (its cache and one
    /// write buffer) is said in the run's header: the kernel kills the engine once they fill,
    /// which a database smaller than them never makes them do.
    fn check_memory(&mut self) -> anyhow::Result<()> {
        let Some(limit) = self.setup.memory_limit else {
            return Ok(());
        };
        let engine = self.setup.engine;
        let parts = (engine.memory)(&self.setup.settings, &self.setup.options)?;
        let held: u64 = parts.iter().map(|p| p.1).sum();
        if held <= limit {
            return Ok(());
        }
        let mib = |b: u64| format!("{} MiB", b >> 20);
        let list: Vec<String> = parts
            .iter()
            .map(|(name, bytes)| format!("{name} {}", mib(*bytes)))
            .collect();
        self.warnings.push(format!(
            "memory limit {}: `{}` is configured to hold {} ({}), more than the limit: the \
             kernel kills it if they fill; set cache_size (or the options' buffers) below it, \
             as --set cache_size={}m",
            mib(limit),
            engine.name,
            mib(held),
            list.join(", "),
            (limit / 4) >> 20
        ));
        Ok(())
    }

    fn meet(&mut self, need: Need) -> anyhow::Result<()> {
        let engine = self.setup.engine;
        match (engine.offers)(need, &self.setup.settings) {
            Offer::Yes => Ok(()),
            Offer::With(key, value) => {
                self.setup.settings.insert(key.into(), value.into());
                self.implied.push(format!(
                    "{key}={value} (workload `{}` needs {})",
                    self.workload.name,
                    need.describe()
                ));
                Ok(())
            }
            Offer::No(why) => anyhow::bail!(
                "workload `{}` needs {} and `{}` {why}",
                self.workload.name,
                need.describe(),
                engine.name
            ),
        }
    }

    /// The workload built for this spec's clients, afresh for each run (a `seed` of 0 picks
    /// its own from the clock).
    pub fn build(&self) -> anyhow::Result<Box<dyn fathom_workloads::Workload>> {
        (self.workload.build)(&self.params, self.clients)
    }
}

/// The engine's options string: as given, or read from `@FILE` or `options_file`.
fn options(
    setup: &SetupInput,
    engine: &EngineEntry,
    keys: &Keys,
    base: &Path,
) -> anyhow::Result<String> {
    match (&setup.options_file, setup.options.strip_prefix('@')) {
        (Some(_), _) if !setup.options.is_empty() => anyhow::bail!(
            "{}: expected `options` or `options_file`, not both",
            keys.setup("options")
        ),
        (Some(file), _) => read_options_file(&base.join(file), engine)
            .map_err(|e| anyhow::anyhow!("{}: {e:#}", keys.setup("options_file"))),
        (None, Some(file)) => read_options_file(&base.join(file), engine)
            .map_err(|e| anyhow::anyhow!("{}: {e:#}", keys.setup("options"))),
        (None, None) => Ok(setup.options.clone()),
    }
}

/// An options file: one item per line (blank lines and `#` comments skipped), joined with the
/// engine's separator.
pub fn read_options_file(path: &Path, engine: &EngineEntry) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("cannot read options file `{}`", path.display()))?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(engine.syntax.separator()))
}

/// `--find-max`'s target, its probes' arrivals spaced and queued as `--rate`'s would be.
fn find_max(drive: &DriveInput, keys: &Keys) -> anyhow::Result<Option<crate::findmax::FindMax>> {
    let Some(text) = &drive.find_max else {
        return Ok(None);
    };
    if drive.rate.is_some() {
        anyhow::bail!(
            "{} searches for the rate: leave out {}",
            keys.drive("find_max"),
            keys.drive("rate")
        );
    }
    let target = crate::findmax::Target::parse(text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", keys.drive("find_max")))?;
    Ok(Some(crate::findmax::FindMax {
        target,
        spacing: match drive.arrivals.unwrap_or(Arrivals::Poisson) {
            Arrivals::Uniform => Spacing::Uniform,
            Arrivals::Poisson => Spacing::Poisson,
        },
        shared: drive.queue == Some(Queue::Shared),
    }))
}

/// Open-loop arrivals from a rate, a spacing name and a queue name.
fn open_loop(drive: &DriveInput, keys: &Keys) -> anyhow::Result<Option<OpenLoop>> {
    let spacing = match drive.arrivals.unwrap_or(Arrivals::Poisson) {
        Arrivals::Uniform => Spacing::Uniform,
        Arrivals::Poisson => Spacing::Poisson,
    };
    let shared = drive.queue == Some(Queue::Shared);
    let given = drive.arrivals.is_some() || drive.queue.is_some();
    match drive.rate {
        Some(r) if r > 0.0 && r.is_finite() => Ok(Some(OpenLoop {
            ops_per_sec: r,
            spacing,
            shared,
            latency_from: LatencyFrom::Arrival,
        })),
        Some(r) => anyhow::bail!(
            "{}: expected a positive number of operations per second, got {r}",
            keys.drive("rate")
        ),
        None if given && drive.find_max.is_none() => anyhow::bail!(
            "{} and {} shape open-loop arrivals: give {} too",
            keys.drive("arrivals"),
            keys.drive("queue"),
            keys.drive("rate")
        ),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_api::knobs::Span;

    fn setup(engine: &str) -> SetupInput {
        SetupInput {
            engine: engine.into(),
            ..Default::default()
        }
    }

    fn workload(name: &str, params: &[(&str, &str)]) -> WorkloadInput {
        WorkloadInput {
            name: name.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn flags(s: &SetupInput, w: &WorkloadInput, d: &DriveInput) -> anyhow::Result<RunSpec> {
        resolve(s, w, d, 2, &Keys::Flags, Path::new("."))
    }

    #[test]
    fn duration_sets_each_workloads_own_parameter() {
        let d = DriveInput {
            duration: Some(Span::new("3s")),
            ..Default::default()
        };
        let spec = flags(&setup("null"), &workload("ibench", &[]), &d).unwrap();
        assert_eq!(spec.build().unwrap().params()["query_secs"], "3s");
        let spec = flags(&setup("null"), &workload("dbbench", &[]), &d).unwrap();
        assert_eq!(spec.build().unwrap().params()["duration"], "3s");
    }

    #[test]
    fn errors_name_the_flag_or_the_key() {
        let d = DriveInput {
            interval: Some(Span::new("10ms")),
            ..Default::default()
        };
        let w = workload("dbbench", &[]);
        let e = flags(&setup("null"), &w, &d).unwrap_err().to_string();
        assert!(e.contains("--interval: at least 100ms"), "{e}");
        let keys = Keys::File {
            setup: "setup[0] (a)".into(),
            workload: "workload[0] (dbbench)".into(),
        };
        let e = resolve(&setup("null"), &w, &d, 2, &keys, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("interval: at least 100ms"), "{e}");
        let d = DriveInput {
            queue: Some(Queue::Shared),
            ..Default::default()
        };
        let e = flags(&setup("null"), &w, &d).unwrap_err().to_string();
        assert!(e.contains("give --rate too"), "{e}");
        let mut s = setup("null");
        s.options = "@/nonexistent/file".into();
        let e = format!("{:#}", flags(&s, &w, &DriveInput::default()).unwrap_err());
        assert!(e.contains("--setup: cannot read options file"), "{e}");
        // A setting's value is read as the engine reads it, before anything runs.
        let mut s = setup("rocksdb");
        s.settings.insert("cache_size".into(), "lots".into());
        let e = format!("{:#}", flags(&s, &w, &DriveInput::default()).unwrap_err());
        assert!(e.contains("--set: setting `cache_size`"), "{e}");
    }
}
