//! Executes one resolved run (a setup, a workload, a client count): opens a fresh database
//! (inside a memory-limited cgroup when asked), calibrates the harness's own cost on the null
//! engine, runs the steps in order and saves each one as it finishes. `fathom run` and
//! experiments both end here.

use crate::progress::StepProgress;
use anyhow::Context;
use fathom_core::cgroup::MemoryLimit;
use fathom_core::driver::{self, OpenLoop, StepRun};
use fathom_core::family::{Db, Engine};
use fathom_core::interrupt;
use fathom_core::pace::Spacing;
use fathom_core::result::{
    now_utc, ExperimentCell, HostFacts, IntervalRecord, RunManifest, SetupRecord, StepSummary,
    FORMAT_VERSION,
};
use fathom_core::sample::Sampler;
use fathom_core::store::RunDir;
use fathom_engines::{EngineConfig, EngineEntry};
use fathom_workloads::params::Params;
use fathom_workloads::{Workload, WorkloadEntry};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A setup and workload, resolved and checked before any database is touched.
pub struct Plan {
    pub engine: &'static EngineEntry,
    pub workload: &'static WorkloadEntry,
    /// The engine's own options string.
    pub options: String,
    pub settings: BTreeMap<String, String>,
    pub params: Params,
    /// The setup's label in reports.
    pub name: String,
    pub memory_limit: Option<u64>,
    pub open_loop: Option<OpenLoop>,
    pub interval: Duration,
}

impl Plan {
    /// Checks the plan can be built for each client count (bad parameters fail here).
    pub fn check(&self, clients: &[usize]) -> anyhow::Result<()> {
        fathom_engines::settings::validate(self.engine.name, self.engine.settings, &self.settings)?;
        self.params
            .check(self.workload.name, self.workload.params)?;
        let family = self.engine.family();
        if !self.workload.families.contains(&family) {
            anyhow::bail!(
                "workload `{}` runs on {} engines; `{}` is a {family} engine",
                self.workload.name,
                self.workload.families.join(" and "),
                self.engine.name
            );
        }
        for &c in clients {
            if c == 0 {
                anyhow::bail!("a client count must be at least 1");
            }
            (self.workload.build)(&self.params, c)?;
        }
        Ok(())
    }
}

/// Where and how a run is written.
pub struct Place {
    /// The results directory the run directory goes in.
    pub results: PathBuf,
    /// The run directory's name; `None` for a timestamped one.
    pub dir_name: Option<String>,
    /// Where the database lives; `None` for RESULTS/.data/RUN, removed afterwards.
    pub data_dir: Option<PathBuf>,
    pub keep_data: bool,
    pub calibrate: bool,
    /// The experiment cell this run is, if any.
    pub cell: Option<ExperimentCell>,
}

pub fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if interrupt::requested() {
            eprintln!("\nfathom: second interrupt, exiting now");
            std::process::exit(130);
        }
        eprintln!("\nfathom: interrupted; finishing the current step's records (Ctrl-C again to quit now)");
        interrupt::request();
    });
}

/// Removes the data directory when dropped, unless asked to keep it.
struct DataDir {
    path: PathBuf,
    keep: bool,
}

impl Drop for DataDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn host_facts(data_dir: &Path, sampler: &Sampler, limit: Option<&MemoryLimit>) -> HostFacts {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    let device = sampler.device().map(|d| d.name.clone());
    let note = match &device {
        Some(d) if d.starts_with("vd") => Some(format!(
            "{d} is a virtio disk the host may cache: IO counts are real, a physical device's limits are not"
        )),
        None => Some("the data directory is on no block device (tmpfs?): IO figures are missing".to_string()),
        _ => None,
    };
    HostFacts {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        device,
        data_dir: data_dir.display().to_string(),
        fathom_version: env!("CARGO_PKG_VERSION").to_string(),
        memory_limit: limit.map(|l| l.describe()),
        note,
    }
}

/// Runs `plan` with `clients` client threads; returns the run directory.
pub fn run_one(place: &Place, plan: &Plan, clients: usize) -> anyhow::Result<PathBuf> {
    let workload = (plan.workload.build)(&plan.params, clients)?;
    let label = place
        .dir_name
        .clone()
        .unwrap_or_else(|| format!("{}-{}-c{clients}", plan.name, plan.workload.name));
    let data = DataDir {
        path: place.data_dir.clone().unwrap_or_else(|| {
            place
                .results
                .join(".data")
                .join(format!("{label}.{}", std::process::id()))
        }),
        keep: place.keep_data || place.data_dir.is_some(),
    };
    if data.path.exists() && std::fs::read_dir(&data.path)?.next().is_some() {
        anyhow::bail!(
            "--data-dir {} is not empty; fathom starts every run on a fresh database",
            data.path.display()
        );
    }
    std::fs::create_dir_all(&data.path)
        .with_context(|| format!("creating {}", data.path.display()))?;

    // The limit is in place before the database opens, so its pages are charged to the group:
    // fathom's own process for an embedded engine, the server's processes for a server (which
    // joins the group as it starts).
    let own = [std::process::id()];
    let limit = plan
        .memory_limit
        .map(|bytes| MemoryLimit::create(bytes, if plan.engine.server { &[] } else { &own }))
        .transpose()
        .context("--memory-limit")?;
    let config = EngineConfig {
        data_dir: data.path.clone(),
        options: plan.options.clone(),
        settings: plan.settings.clone(),
        memory_group: limit.as_ref().map(|l| l.procs_file()),
    };
    let engine = fathom_engines::open(plan.engine, &config)?;
    let target = engine.target();
    // The run directory exists only once the engine has accepted its setup.
    let run_dir = match &place.dir_name {
        Some(name) => RunDir::create_named(&place.results, name)?,
        None => RunDir::create(&place.results, &label)?,
    };
    let sampler = Sampler::new(target.data_dirs(), target.pids());
    let mut manifest = RunManifest {
        format_version: FORMAT_VERSION,
        setup: SetupRecord {
            name: plan.name.clone(),
            engine: plan.engine.name.to_string(),
            engine_version: target.version(),
            options: plan.options.clone(),
            settings: plan.settings.clone(),
            memory_limit_bytes: plan.memory_limit,
            effective: target.effective_options(),
        },
        workload: plan.workload.name.to_string(),
        params: workload.params(),
        clients,
        host: host_facts(&data.path, &sampler, limit.as_ref()),
        started_at: now_utc(),
        finished_at: None,
        status: "running".into(),
        error: None,
        experiment: place.cell.clone(),
    };
    run_dir.write_manifest(&manifest)?;
    eprintln!(
        "fathom: {} {} / {} with {clients} client{} -> {}",
        plan.engine.name,
        manifest.setup.engine_version,
        plan.workload.name,
        if clients == 1 { "" } else { "s" },
        run_dir.path.display()
    );
    let result = run_steps(place, plan, workload.as_ref(), &engine, &sampler, &run_dir)
        // A server that died explains the failure better than the statement that saw it; a
        // killed server's client may see the reset a moment before its exit can be collected.
        .map_err(|e| {
            for _ in 0..20 {
                if let Err(dead) = target.check() {
                    let oom = match limit.as_ref().and_then(|l| l.oom_kills()) {
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
        });
    manifest.finished_at = Some(now_utc());
    (manifest.status, manifest.error) = match &result {
        Ok(()) if interrupt::requested() => ("interrupted".into(), None),
        Ok(()) => ("finished".into(), None),
        Err(e) => ("failed".into(), Some(format!("{e:#}"))),
    };
    if let Some(l) = &limit {
        if let Some(peak) = l.peak_bytes() {
            manifest.host.memory_limit = Some(format!("{} (peak {peak} bytes)", l.describe()));
        }
    }
    run_dir.write_manifest(&manifest)?;
    drop(engine);
    drop(limit);
    result?;
    Ok(run_dir.path.clone())
}

fn run_steps(
    place: &Place,
    plan: &Plan,
    workload: &dyn Workload,
    engine: &Engine,
    sampler: &Sampler,
    run_dir: &RunDir,
) -> anyhow::Result<()> {
    let null_dir = run_dir.path.join(".null");
    let null = fathom_engines::null::Null::new(null_dir);
    // Calibrate on the null engine in the engine's own family, so the same client code runs.
    let null_db = match engine {
        Engine::Kv(_) => Db::Kv(&null),
        Engine::Sql(_) => Db::Sql(&null),
    };
    let total = workload.steps().len();
    for (i, step) in workload.steps().iter().enumerate() {
        if interrupt::requested() {
            break;
        }
        let mut step = step.clone();
        // The rate holds for timed steps (a request phase), not for steps that run a fixed
        // amount of work to its end (a load), as LinkbenchX rates its requests only.
        if step.clients > 0 && step.duration.is_some() {
            step.open_loop = plan.open_loop;
        }
        let harness_ns = if !place.calibrate || step.clients == 0 {
            None
        } else {
            let client = workload.client(null_db, i, 0)?;
            driver::harness_cost(
                client,
                step.op_kinds.len(),
                Duration::from_millis(200),
                step.ops_per_client,
            )?
        };
        let clients = (0..step.clients)
            .map(|t| workload.client(engine.db(), i, t))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let background = workload.background(engine.db(), i)?;
        let progress = StepProgress::start(i + 1, total, &step);
        let mut on_interval = |r: &IntervalRecord| progress.interval(r);
        let mut summary: StepSummary = driver::run_step(StepRun {
            plan: &step,
            index: i + 1,
            clients,
            background,
            target: engine.target(),
            sampler,
            interval: plan.interval,
            files: run_dir.step_files(i + 1, &step.name),
            on_interval: &mut on_interval,
        })?;
        summary.harness_ns_per_op = harness_ns;
        run_dir.write_summary(&summary)?;
        progress.finish(&summary);
    }
    Ok(())
}

/// Open-loop arrivals from a rate, a spacing name and a queue name; `what` names the three
/// keys in errors.
pub fn open_loop(
    rate: Option<f64>,
    arrivals: Option<&str>,
    queue: Option<&str>,
    what: (&str, &str, &str),
) -> anyhow::Result<Option<OpenLoop>> {
    let spacing = match arrivals.unwrap_or("poisson") {
        "uniform" => Spacing::Uniform,
        "poisson" => Spacing::Poisson,
        other => anyhow::bail!("{}: expected uniform or poisson, got `{other}`", what.1),
    };
    let shared = match queue.unwrap_or("per-client") {
        "per-client" => false,
        "shared" => true,
        other => anyhow::bail!("{}: expected per-client or shared, got `{other}`", what.2),
    };
    match rate {
        Some(r) if r > 0.0 => Ok(Some(OpenLoop {
            ops_per_sec: r,
            spacing,
            shared,
        })),
        Some(r) => anyhow::bail!(
            "{}: expected a positive number of operations per second, got {r}",
            what.0
        ),
        None => Ok(None),
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
        .join(engine.separator))
}
