//! Runs one `RunSpec` into a run directory: a fresh data directory, the memory limit in place
//! before the engine opens, `run.json` written as the run starts and again as it ends, and the
//! steps in order, each saved as it finishes (see `steps`). What a user sees on the way comes
//! through an `Observer`.

use crate::open::OpenEngine;
use crate::place::{remove_dead_data_dirs, RUNNING};
pub use crate::place::{Observer, Place, Quiet};
use crate::profile::Profiler;
use crate::resolve::RunSpec;
use anyhow::Context;
use fathom_api::family::Engine;
use fathom_api::retry::Failure;
use fathom_api::stop::Stop;
use fathom_engines::EngineConfig;
use fathom_measure::cgroup::MemoryLimit;
use fathom_measure::sample::Sampler;
use fathom_measure::throttle::DeviceThrottle;
use fathom_schema::result::{
    now_utc, HostFacts, RunManifest, RunStatus, SetupRecord, FORMAT_VERSION,
};
use fathom_schema::store::{out_of_space, RunDir};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Removes the data directory when dropped, unless asked to keep it.
struct DataDir {
    path: PathBuf,
    keep: bool,
    /// Beside a data directory fathom chose (`RESULTS/.data/LABEL.PID`), a file
    /// `LABEL.PID.running` while the run lasts: a run killed before its cleanup leaves it, and
    /// the next run in the results directory removes both.
    running: Option<PathBuf>,
}

impl DataDir {
    /// The data directory for the run labelled `label`: fresh and empty, or with
    /// `existing_data` the one given, as an earlier run left it.
    fn fresh(place: &Place, label: &str) -> anyhow::Result<DataDir> {
        if place.data_dir.is_none() {
            remove_dead_data_dirs(&place.results.join(".data"));
        }
        let data = DataDir {
            path: place.data_dir.clone().unwrap_or_else(|| {
                place
                    .results
                    .join(".data")
                    .join(format!("{label}.{}", std::process::id()))
            }),
            keep: place.keep_data || place.data_dir.is_some(),
            running: None,
        };
        if !place.existing_data
            && data.path.exists()
            && std::fs::read_dir(&data.path)?.next().is_some()
        {
            anyhow::bail!(
                "--data-dir {} is not empty; fathom starts every run on a fresh database",
                data.path.display()
            );
        }
        std::fs::create_dir_all(&data.path)
            .with_context(|| format!("creating {}", data.path.display()))?;
        // Servers are started from elsewhere and take their paths as given: a relative
        // results directory (`--results out`) must not reach them as relative.
        let mut data = data;
        data.path = std::path::absolute(&data.path)
            .with_context(|| format!("resolving {}", data.path.display()))?;
        if place.data_dir.is_none() {
            let marker = data.path.with_file_name(format!(
                "{}{RUNNING}",
                data.path.file_name().unwrap_or_default().to_string_lossy()
            ));
            std::fs::write(&marker, std::process::id().to_string())
                .with_context(|| format!("creating {}", marker.display()))?;
            data.running = Some(marker);
        }
        Ok(data)
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
        if let Some(marker) = self.running.take() {
            let _ = std::fs::remove_file(marker);
        }
    }
}

/// Runs `spec`, in a process of its own where it needs one (`supervise`); returns the run
/// directory.
pub fn run(spec: &RunSpec, place: &Place, observer: &mut dyn Observer) -> anyhow::Result<PathBuf> {
    check_existing_data(spec, place)?;
    if let Some(elsewhere) = crate::supervise::in_own_process(spec, place) {
        return elsewhere;
    }
    run_here(spec, place, observer, None)
}

/// Runs `spec` in this process; `handed` is the memory group a supervising fathom made for it.
pub(crate) fn run_here(
    spec: &RunSpec,
    place: &Place,
    observer: &mut dyn Observer,
    handed: Option<MemoryLimit>,
) -> anyhow::Result<PathBuf> {
    // `--metrics`: the live figures see what the observer sees.
    let mut observing = crate::live::Observing(observer);
    let observer: &mut dyn Observer = &mut observing;
    let workload = spec.build()?;
    let label = place.dir_name.clone().unwrap_or_else(|| {
        format!(
            "{}-{}-c{}",
            spec.setup.name,
            fathom_schema::store::slug(&spec.title),
            spec.clients
        )
    });
    check_existing_data(spec, place)?;
    // On before the engine's threads exist, off (as it was) when the run ends.
    let _delay_accounting = fathom_measure::sample::threads::DelayAccounting::on();
    let data = DataDir::fresh(place, &label)?;
    // The engine bound last, so dropped first on an early return, before what is around it.
    let (around, mut engine) = open_engine(spec, place, (&data.path, data.keep), handed)?;
    let (limit, throttle) = (around.limit.as_ref(), around.throttle.as_ref());
    let target = engine.get().expect("just opened").target();
    // Checked before the run directory exists, like the setup.
    let profiler = profiler(spec, target, limit)?;
    // The run directory exists only once the engine has accepted its setup.
    let run_dir = match &place.dir_name {
        Some(name) => RunDir::create_named(&place.results, name)?,
        None => RunDir::create(&place.results, &label)?,
    };
    let sampler = Sampler::new(target.data_dirs(), target.pids());
    let mut host = fathom_measure::sample::host::host_facts(
        &data.path,
        sampler.device().map(|d| d.name.as_str()),
        limit.map(MemoryLimit::describe),
    );
    host.device_limits = judged_limits(throttle, &sampler, place, &host);
    host.network_path = around.network().map(crate::network::RunNetwork::describe);
    let mut manifest = manifest(spec, workload.params(), target, host, place);
    run_dir.write_manifest(&manifest)?;
    observer.run_started(&manifest, spec, &run_dir.path);
    let mut steps = crate::steps::Steps {
        spec,
        calibrate: place.calibrate,
        workload: workload.as_ref(),
        engine: &mut engine,
        sampler: &sampler,
        run_dir: &run_dir,
        profiler: profiler.as_ref(),
        gate: &place.gate,
        stop: &place.stop,
        network: around.network(),
    };
    let dirs = [
        ("data directory", data.path.as_path()),
        ("results directory", place.results.as_path()),
    ];
    let result = steps
        .run(observer)
        .map_err(|e| explain_failure(e, engine.get(), limit, &dirs));
    finish(&mut manifest, &result, (limit, throttle), &place.stop);
    let saved = run_dir.write_manifest(&manifest);
    engine.close();
    drop(around);
    match (result, saved) {
        (Ok(()), Ok(())) => Ok(run_dir.path.clone()),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        // What failed the step says more than the manifest that could not follow it.
        (Err(e), Err(saving)) => Err(anyhow::anyhow!("{e:#}\n(and {saving:#})")),
    }
}

/// What a run puts in place around its engine, dropped after it closes in this order: the
/// network path (the relay, the namespace), the memory limit, the device profile's group.
struct Around {
    network: Option<crate::network::RunNetwork>,
    /// A client host of its own's network (`--host-namespace`): no server to place, metered.
    joined: Option<crate::network::RunNetwork>,
    limit: Option<MemoryLimit>,
    throttle: Option<DeviceThrottle>,
}

impl Around {
    /// The path the run's clients reach the server over, when it is not the unix socket.
    fn network(&self) -> Option<&crate::network::RunNetwork> {
        self.network.as_ref().or(self.joined.as_ref())
    }
}

/// Opens the engine in `data` with what goes around it in place first (the memory limit, the
/// device profile's group, the network path) and the network settled after; `handed` is the
/// memory group a supervising fathom made.
fn open_engine(
    spec: &RunSpec,
    place: &Place,
    (data, keep): (&Path, bool),
    handed: Option<MemoryLimit>,
) -> anyhow::Result<(Around, OpenEngine)> {
    let limit = memory_limit(spec, handed)?;
    let throttle = device_throttle(spec, data, keep)?;
    let mut network = (spec.setup.network.as_ref())
        .map(|n| crate::network::RunNetwork::start(n, data))
        .transpose()?
        .flatten();
    let groups = (limit.iter().map(MemoryLimit::procs_file))
        .chain(throttle.iter().map(DeviceThrottle::procs_file));
    let engine = OpenEngine::open(
        spec.setup.engine,
        EngineConfig {
            data_dir: data.to_path_buf(),
            options: spec.setup.options.clone(),
            settings: spec.setup.settings.clone(),
            groups: groups.collect(),
            stop: place.stop.clone(),
            network: network.as_ref().and_then(|n| n.path.clone()),
        },
    )?;
    if let Some(n) = &mut network {
        n.settle()?;
    }
    // A client host of its own drives a server another fathom placed.
    let joined = (place.host_link.as_deref())
        .filter(|_| network.is_none())
        .map(crate::network::RunNetwork::joined);
    let around = Around {
        network,
        joined,
        limit,
        throttle,
    };
    Ok((around, engine))
}

/// The memory limit, in place before the database opens so its pages are charged to the group:
/// fathom's own process for an embedded engine (or the group a supervising fathom handed this
/// process), the server's processes for a server (which joins the group as it starts).
fn memory_limit(
    spec: &RunSpec,
    handed: Option<MemoryLimit>,
) -> anyhow::Result<Option<MemoryLimit>> {
    if handed.is_some() {
        return Ok(handed);
    }
    let own = [std::process::id()];
    let pids: &[u32] = if spec.setup.engine.server { &[] } else { &own };
    spec.setup
        .memory_limit
        .map(|bytes| MemoryLimit::create(bytes, pids))
        .transpose()
        .context("--memory-limit")
}

/// The device profile's group, in place before the database opens: fathom's own process for
/// an embedded engine, the server's processes for a server (which join it as they start).
fn device_throttle(
    spec: &RunSpec,
    data: &Path,
    keep: bool,
) -> anyhow::Result<Option<DeviceThrottle>> {
    let own = [std::process::id()];
    let pids: &[u32] = if spec.setup.engine.server { &[] } else { &own };
    (spec.setup.device.as_ref())
        .map(|p| DeviceThrottle::create(p, data, pids, keep))
        .transpose()
        .context("--device")
}

/// The limits the run's steps are judged against: a device profile's, else what `fathom
/// calibrate` kept for the data directory's device.
fn judged_limits(
    throttle: Option<&DeviceThrottle>,
    sampler: &Sampler,
    place: &Place,
    host: &HostFacts,
) -> Option<fathom_schema::result::device::DeviceLimits> {
    match throttle {
        Some(t) => Some(t.limits()),
        None => sampler.device().and_then(|d| {
            fathom_measure::device::kept_for(&place.results, d, host.disk_model.as_deref())
        }),
    }
}

/// `--profile`'s profiler of the run's processes; perf leaves an embedded engine's memory
/// limit (fathom is in it) for the group fathom came from.
fn profiler(
    spec: &RunSpec,
    target: &dyn fathom_api::target::Target,
    limit: Option<&MemoryLimit>,
) -> anyhow::Result<Option<Profiler>> {
    let outside = limit
        .filter(|_| !spec.setup.engine.server)
        .map(MemoryLimit::outside_procs_file);
    spec.setup
        .profile_hz
        .map(|hz| Profiler::new(hz, spec.setup.engine, &target.pids(), outside))
        .transpose()
}

/// `--existing-data` needs a data directory given and an engine that keeps one.
fn check_existing_data(spec: &RunSpec, place: &Place) -> anyhow::Result<()> {
    if place.existing_data && (spec.setup.engine.server || place.data_dir.is_none()) {
        anyhow::bail!(
            "--existing-data opens the database an earlier run left in --data-dir: it needs \
             --data-dir and an embedded engine (`{}` {})",
            spec.setup.engine.name,
            if spec.setup.engine.server {
                "is a server, which initialises its data directory"
            } else {
                "was given no --data-dir"
            }
        );
    }
    Ok(())
}

/// `run.json` as the run starts.
fn manifest(
    spec: &RunSpec,
    params: std::collections::BTreeMap<String, String>,
    target: &dyn fathom_api::target::Target,
    host: HostFacts,
    place: &Place,
) -> RunManifest {
    RunManifest {
        format_version: FORMAT_VERSION,
        setup: SetupRecord {
            name: spec.setup.name.clone(),
            engine: spec.setup.engine.name.to_string(),
            engine_version: target.version(),
            options: spec.setup.options.clone(),
            settings: spec.setup.settings.clone(),
            memory_limit_bytes: spec.setup.memory_limit,
            device_profile: spec.setup.device.clone(),
            network_profile: spec.setup.network.clone(),
            effective: effective_options(spec, target),
        },
        workload: spec.workload.name.to_string(),
        params,
        clients: spec.clients,
        host,
        started_at: now_utc(),
        finished_at: None,
        status: RunStatus::Running,
        error: None,
        notes: target.notes(),
        pid: Some(std::process::id()),
        experiment: place.cell.clone(),
        existing_data: place.existing_data,
        merged: None,
    }
}

/// The options the engine reports it runs with, and the allocator the run's process has when
/// it is not glibc's.
fn effective_options(
    spec: &RunSpec,
    target: &dyn fathom_api::target::Target,
) -> std::collections::BTreeMap<String, String> {
    let mut effective = target.effective_options();
    if let Some(a) = &spec.setup.allocator {
        effective.insert(
            "fathom.allocator".into(),
            format!("{} ({})", a.name, a.library),
        );
    }
    effective
}

/// How the run ended, into its manifest.
fn finish(
    manifest: &mut RunManifest,
    result: &anyhow::Result<()>,
    (limit, throttle): (Option<&MemoryLimit>, Option<&DeviceThrottle>),
    stop: &Stop,
) {
    manifest.finished_at = Some(now_utc());
    manifest.pid = None;
    (manifest.status, manifest.error) = match result {
        Ok(()) if stop.requested() => (RunStatus::Interrupted, None),
        Ok(()) => (RunStatus::Finished, None),
        Err(e) => (RunStatus::Failed, Some(format!("{e:#}"))),
    };
    if let Some(l) = limit {
        if let Some(peak) = l.peak_bytes() {
            manifest.host.memory_limit = Some(format!("{} (peak {peak} bytes)", l.describe()));
        }
    }
    manifest.host.device_throttle = throttle.map(DeviceThrottle::describe);
}

/// What a step's failure says about where, when `dirs` (named directories) ran out of space.
fn explain_failure(
    e: anyhow::Error,
    engine: Option<&Engine>,
    limit: Option<&MemoryLimit>,
    dirs: &[(&str, &Path)],
) -> anyhow::Error {
    let e = explain_dead_engine(e, engine, limit);
    let said = fathom_engines::failure::failure(&e) == Some(Failure::OutOfSpace);
    match out_of_space(said, dirs) {
        Some(full) => e.context(full),
        None => e,
    }
}

/// A server that died explains a failure better than the statement that saw it; a killed
/// server's client may see the reset a moment before its exit can be collected.
fn explain_dead_engine(
    e: anyhow::Error,
    engine: Option<&Engine>,
    limit: Option<&MemoryLimit>,
) -> anyhow::Error {
    let Some(engine) = engine else {
        return e;
    };
    for _ in 0..20 {
        if let Err(dead) = engine.target().check() {
            // The step may have failed on this very check (at an interval boundary).
            if e.chain().any(|c| c.to_string() == dead.to_string()) {
                return e;
            }
            let oom = match limit.and_then(|l| l.oom_kills()) {
                Some(n) if n > 0 => format!(
                    "\nthe memory limit's cgroup recorded {n} out-of-memory kill{}: the server needs more than --memory-limit (or smaller caches)",
                    if n == 1 { "" } else { "s" }
                ),
                _ => String::new(),
            };
            return e.context(format!("{dead:#}{oom}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    e
}
