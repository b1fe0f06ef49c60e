//! `fathom run`: resolves engine, setup and workload, then for each client count opens a fresh
//! database (inside a memory-limited cgroup when asked), calibrates the harness's own cost on
//! the null engine, runs the steps in order and saves each one as it finishes.

use anyhow::Context;
use clap::Args;
use fathom_core::cgroup::MemoryLimit;
use fathom_core::driver::{self, OpenLoop, StepRun};
use fathom_core::interrupt;
use fathom_core::kv::KvEngine;
use fathom_core::pace::Spacing;
use fathom_core::result::{
    now_utc, HostFacts, IntervalRecord, RunManifest, SetupRecord, StepSummary, FORMAT_VERSION,
};
use fathom_core::sample::Sampler;
use fathom_core::store::{LoadedRun, RunDir};
use fathom_engines::{EngineConfig, EngineEntry};
use fathom_workloads::params::Params;
use fathom_workloads::{KvWorkload, WorkloadEntry};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Args, Clone)]
pub struct RunArgs {
    /// Engine to run (see `fathom engines`); a list (rocksdb,wiredtiger) runs each in turn
    /// with its own defaults and reports them in one table.
    #[arg(long, value_delimiter = ',', required = true)]
    pub engine: Vec<String>,
    /// Workload to run (see `fathom workloads`).
    #[arg(long)]
    pub workload: String,
    /// The engine's own options string, in its own syntax; `@FILE` reads it from a file.
    #[arg(long, default_value = "")]
    pub setup: String,
    /// A label for this setup in reports (default: the engine name).
    #[arg(long)]
    pub name: Option<String>,
    /// fathom's engine settings, KEY=VALUE, repeatable (see `fathom engines`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Workload parameters, KEY=VALUE, repeatable (see `fathom workloads`).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Client threads; a list (1,4,8) runs once per count, each on a fresh database.
    #[arg(long, value_delimiter = ',', default_value = "2")]
    pub clients: Vec<usize>,
    /// Length of each timed step (sets the workload's `duration` parameter).
    #[arg(long)]
    pub duration: Option<String>,
    /// Limit the engine's memory, page cache included (e.g. 256m), with a cgroup child group.
    #[arg(long)]
    pub memory_limit: Option<String>,
    /// Open loop: total intended operations per second for every step with clients; latency
    /// then counts from each operation's intended start.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Spacing of open-loop arrivals: uniform or poisson.
    #[arg(long, default_value = "poisson")]
    pub arrivals: String,
    /// Seconds between interval records.
    #[arg(long, default_value = "1s")]
    pub interval: String,
    /// Where run directories are written.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Where the database lives (default: RESULTS/.data/RUN, removed after the run).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Keep the database after the run.
    #[arg(long)]
    pub keep_data: bool,
    /// Skip measuring the harness's own cost per operation on the null engine.
    #[arg(long)]
    pub no_calibrate: bool,
    /// Report format printed at the end: text, md, csv, json, dbbench.
    #[arg(long, default_value = "text")]
    pub format: fathom_report::Format,
}

/// Everything resolved and checked before any database is touched.
struct Plan {
    engine: &'static EngineEntry,
    workload: &'static WorkloadEntry,
    options: String,
    settings: BTreeMap<String, String>,
    params: Params,
    name: String,
    memory_limit: Option<u64>,
    open_loop: Option<OpenLoop>,
    interval: Duration,
}

fn resolve(args: &RunArgs, engine_name: &str) -> anyhow::Result<Plan> {
    let engine = fathom_engines::find(engine_name)?;
    let workload = fathom_workloads::find(&args.workload)?;
    let options = match args.setup.strip_prefix('@') {
        Some(file) => std::fs::read_to_string(file)
            .with_context(|| format!("--setup: cannot read options file `{file}`"))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join(engine.separator),
        None => args.setup.clone(),
    };
    let settings = fathom_core::units::parse_key_values(&args.settings, "--set")
        .map_err(anyhow::Error::msg)?;
    fathom_engines::settings::validate(engine.name, engine.settings, &settings)?;
    let mut params = Params::parse(&args.params)?;
    if let Some(d) = &args.duration {
        fathom_core::units::parse_duration(d).map_err(|e| anyhow::anyhow!("--duration: {e}"))?;
        params.set("duration", d.clone());
    }
    params.check(workload.name, workload.params)?;
    if args.clients.is_empty() || args.clients.contains(&0) {
        anyhow::bail!(
            "--clients: every count must be at least 1 (got {:?})",
            args.clients
        );
    }
    let memory_limit = args
        .memory_limit
        .as_deref()
        .map(|m| {
            fathom_core::units::parse_size(m).map_err(|e| anyhow::anyhow!("--memory-limit: {e}"))
        })
        .transpose()?;
    let spacing = match args.arrivals.as_str() {
        "uniform" => Spacing::Uniform,
        "poisson" => Spacing::Poisson,
        other => anyhow::bail!("--arrivals: `{other}` is not uniform or poisson"),
    };
    let open_loop = match args.rate {
        Some(r) if r > 0.0 => Some(OpenLoop {
            ops_per_sec: r,
            spacing,
        }),
        Some(r) => anyhow::bail!("--rate: {r} is not a positive number of operations per second"),
        None => None,
    };
    let interval = fathom_core::units::parse_duration(&args.interval)
        .map_err(|e| anyhow::anyhow!("--interval: {e}"))?;
    if interval < Duration::from_millis(100) {
        anyhow::bail!("--interval: at least 100ms");
    }
    Ok(Plan {
        engine,
        workload,
        options,
        settings,
        params,
        name: args.name.clone().unwrap_or_else(|| engine_name.to_string()),
        memory_limit,
        open_loop,
        interval,
    })
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    if args.engine.len() > 1 && (args.name.is_some() || !args.setup.is_empty()) {
        anyhow::bail!("--name and --setup describe one engine; with several engines ({}) run them one at a time", args.engine.join(","));
    }
    // Everything is checked, for every engine and client count, before anything runs.
    let plans = args
        .engine
        .iter()
        .map(|e| resolve(&args, e))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for plan in &plans {
        for &c in &args.clients {
            (plan.workload.build)(&plan.params, c)?;
        }
    }
    install_interrupt_handler();
    let mut finished = Vec::new();
    'runs: for plan in &plans {
        for &clients in &args.clients {
            if interrupt::requested() {
                break 'runs;
            }
            let dir = run_one(&args, plan, clients)?;
            finished.push(LoadedRun::load(&dir)?);
        }
    }
    print!("{}", fathom_report::render(&finished, args.format)?);
    for r in &finished {
        eprintln!("results: {}", r.path.display());
    }
    if interrupt::requested() {
        anyhow::bail!("interrupted; every step that finished is saved");
    }
    Ok(())
}

fn install_interrupt_handler() {
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

fn run_one(args: &RunArgs, plan: &Plan, clients: usize) -> anyhow::Result<PathBuf> {
    let workload = (plan.workload.build)(&plan.params, clients)?;
    let label = format!("{}-{}-c{clients}", plan.name, plan.workload.name);
    let data = DataDir {
        path: args.data_dir.clone().unwrap_or_else(|| {
            args.results
                .join(".data")
                .join(format!("{label}.{}", std::process::id()))
        }),
        keep: args.keep_data || args.data_dir.is_some(),
    };
    if data.path.exists() && std::fs::read_dir(&data.path)?.next().is_some() {
        anyhow::bail!(
            "--data-dir {} is not empty; fathom starts every run on a fresh database",
            data.path.display()
        );
    }
    std::fs::create_dir_all(&data.path)
        .with_context(|| format!("creating {}", data.path.display()))?;

    // The limit is in place before the database opens, so its pages are charged to the group.
    let limit = plan
        .memory_limit
        .map(|bytes| MemoryLimit::create(bytes, &[std::process::id()]))
        .transpose()
        .context("--memory-limit")?;
    let config = EngineConfig {
        data_dir: data.path.clone(),
        options: plan.options.clone(),
        settings: plan.settings.clone(),
    };
    let engine = fathom_engines::open(plan.engine, &config)?;
    // The run directory exists only once the engine has accepted its setup.
    let run_dir = RunDir::create(&args.results, &label)?;
    let sampler = Sampler::new(engine.data_dirs(), engine.pids());
    let mut manifest = RunManifest {
        format_version: FORMAT_VERSION,
        setup: SetupRecord {
            name: plan.name.clone(),
            engine: plan.engine.name.to_string(),
            engine_version: engine.version(),
            options: plan.options.clone(),
            settings: plan.settings.clone(),
            memory_limit_bytes: plan.memory_limit,
            effective: engine.effective_options(),
        },
        workload: plan.workload.name.to_string(),
        params: workload.params(),
        clients,
        host: host_facts(&data.path, &sampler, limit.as_ref()),
        started_at: now_utc(),
        finished_at: None,
        status: "running".into(),
        error: None,
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
    let result = run_steps(
        args,
        plan,
        workload.as_ref(),
        engine.as_ref(),
        &sampler,
        &run_dir,
    );
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
    args: &RunArgs,
    plan: &Plan,
    workload: &dyn KvWorkload,
    engine: &dyn KvEngine,
    sampler: &Sampler,
    run_dir: &RunDir,
) -> anyhow::Result<()> {
    let null_dir = run_dir.path.join(".null");
    let null = fathom_engines::null::Null::new(null_dir);
    let total = workload.steps().len();
    let live = std::io::stderr().is_terminal();
    for (i, step) in workload.steps().iter().enumerate() {
        if interrupt::requested() {
            break;
        }
        let mut step = step.clone();
        if step.clients > 0 {
            step.open_loop = plan.open_loop;
        }
        let harness_ns = if args.no_calibrate || step.clients == 0 {
            None
        } else {
            let client = workload.client(&null, i, 0)?;
            driver::harness_cost(
                client,
                step.op_kinds.len(),
                Duration::from_millis(200),
                step.ops_per_client,
            )?
        };
        let clients = (0..step.clients)
            .map(|t| workload.client(engine, i, t))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let background = workload.background(engine, i)?;
        let mut progress = |r: &IntervalRecord| {
            if live {
                eprint!(
                    "\r  [{}/{total}] {:<22} {:>6.1}s {:>10.0} ops/s  p99 {:>9.1} µs   ",
                    i + 1,
                    r.step,
                    r.t_end,
                    r.ops_per_sec,
                    r.latency_us.p99
                );
            }
        };
        let mut summary: StepSummary = driver::run_step(StepRun {
            plan: &step,
            index: i + 1,
            clients,
            background,
            target: engine,
            sampler,
            interval: plan.interval,
            files: run_dir.step_files(i + 1, &step.name),
            on_interval: &mut progress,
        })?;
        summary.harness_ns_per_op = harness_ns;
        run_dir.write_summary(&summary)?;
        if live {
            eprint!("\r{:80}\r", "");
        }
        eprintln!(
            "  [{}/{total}] {:<22} {:>10.0} ops/s  p99 {:>9.1} µs  {:>6.1}s{}",
            i + 1,
            summary.step,
            summary.ops_per_sec,
            summary.latency_us.p99,
            summary.seconds + summary.maintenance_seconds,
            if summary.interrupted {
                "  (interrupted)"
            } else {
                ""
            }
        );
    }
    Ok(())
}
