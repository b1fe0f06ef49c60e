//! `fathom run`: either one engine (or a list) with a workload given on the command line, one
//! run per client count, or an experiment file's whole matrix; then the report of what ran.

use crate::execute::{self, Place, Plan};
use crate::experiment::Experiment;
use clap::Args;
use fathom_core::interrupt;
use fathom_core::store::LoadedRun;
use fathom_workloads::params::Params;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Clone)]
pub struct RunArgs {
    /// An experiment file (experiments/NAME.toml): runs its matrix of setups, workloads,
    /// client counts and repeats into one results directory, skipping what finished before.
    pub experiment: Option<PathBuf>,
    /// Engine to run (see `fathom engines`); a list (rocksdb,wiredtiger) runs each in turn
    /// with its own defaults and reports them in one table.
    #[arg(long, value_delimiter = ',')]
    pub engine: Vec<String>,
    /// Workload to run (see `fathom workloads`).
    #[arg(long)]
    pub workload: Option<String>,
    /// The engine's own options string, in its own syntax; `@FILE` reads it from a file.
    #[arg(long)]
    pub setup: Option<String>,
    /// A label for this setup in reports (default: the engine name).
    #[arg(long)]
    pub name: Option<String>,
    /// fathom's engine settings, KEY=VALUE, repeatable (see `fathom engines`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Workload parameters, KEY=VALUE, repeatable (see `fathom workloads`).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Client threads; a list (1,4,8) runs once per count, each on a fresh database [default: 2].
    #[arg(long, value_delimiter = ',')]
    pub clients: Vec<usize>,
    /// Length of each timed step (sets the workload's `duration` parameter; with an
    /// experiment file, overrides the file's).
    #[arg(long)]
    pub duration: Option<String>,
    /// Limit the engine's memory, page cache included (e.g. 256m), with a cgroup child group.
    #[arg(long)]
    pub memory_limit: Option<String>,
    /// Open loop: total intended operations per second for every timed step (loads and other
    /// fixed-work steps stay closed loop); latency then counts from each operation's intended
    /// start.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Spacing of open-loop arrivals: uniform or poisson [default: poisson].
    #[arg(long)]
    pub arrivals: Option<String>,
    /// Open-loop queueing: per-client (each client its own arrivals) or shared (one stream
    /// at the total rate, each idle client taking the next arrival, as LinkbenchX's
    /// requesters) [default: per-client].
    #[arg(long)]
    pub queue: Option<String>,
    /// Seconds between interval records [default: 1s].
    #[arg(long)]
    pub interval: Option<String>,
    /// Where run directories are written [default: results; for an experiment,
    /// results/NAME].
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Where the database lives (default: RESULTS/.data/RUN, removed after the run).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Keep the database after the run.
    #[arg(long)]
    pub keep_data: bool,
    /// Skip measuring the harness's own cost per operation on the null engine.
    #[arg(long)]
    pub no_calibrate: bool,
    /// Report format printed at the end: text, md, csv, json, dbbench, sysbench, html.
    #[arg(long, default_value = "text")]
    pub format: fathom_report::Format,
}

fn resolve(args: &RunArgs, engine_name: &str, workload: &str) -> anyhow::Result<Plan> {
    let engine = fathom_engines::find(engine_name)?;
    let workload = fathom_workloads::find(workload)?;
    let setup = args.setup.clone().unwrap_or_default();
    let options = match setup.strip_prefix('@') {
        Some(file) => execute::read_options_file(file.as_ref(), engine)
            .map_err(|e| anyhow::anyhow!("--setup: {e:#}"))?,
        None => setup,
    };
    let settings = fathom_core::units::parse_key_values(&args.settings, "--set")
        .map_err(anyhow::Error::msg)?;
    let mut params = Params::parse(&args.params)?;
    if let Some(d) = &args.duration {
        fathom_core::units::parse_duration(d).map_err(|e| anyhow::anyhow!("--duration: {e}"))?;
        params.set("duration", d.clone());
    }
    let memory_limit = args
        .memory_limit
        .as_deref()
        .map(|m| {
            fathom_core::units::parse_size(m).map_err(|e| anyhow::anyhow!("--memory-limit: {e}"))
        })
        .transpose()?;
    let open_loop = execute::open_loop(
        args.rate,
        args.arrivals.as_deref(),
        args.queue.as_deref(),
        ("--rate", "--arrivals", "--queue"),
    )?;
    let interval = fathom_core::units::parse_duration(args.interval.as_deref().unwrap_or("1s"))
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
    if let Some(file) = &args.experiment {
        return run_experiment(&args, file);
    }
    let Some(workload) = args.workload.as_deref() else {
        anyhow::bail!("fathom run needs an experiment file, or --engine and --workload");
    };
    if args.engine.is_empty() {
        anyhow::bail!("--engine: name at least one engine (see `fathom engines`)");
    }
    if args.engine.len() > 1 && (args.name.is_some() || args.setup.is_some()) {
        anyhow::bail!("--name and --setup describe one engine; with several engines ({}) run them one at a time", args.engine.join(","));
    }
    let clients = if args.clients.is_empty() {
        vec![2]
    } else {
        args.clients.clone()
    };
    if clients.contains(&0) {
        anyhow::bail!("--clients: every count must be at least 1 (got {clients:?})");
    }
    // Everything is checked, for every engine and client count, before anything runs.
    let plans = args
        .engine
        .iter()
        .map(|e| {
            let plan = resolve(&args, e, workload)?;
            plan.check(&clients)?;
            Ok(plan)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let place = Place {
        results: args.results.clone().unwrap_or_else(|| "results".into()),
        dir_name: None,
        data_dir: args.data_dir.clone(),
        keep_data: args.keep_data,
        calibrate: !args.no_calibrate,
        cell: None,
    };
    execute::install_interrupt_handler();
    let mut finished = Vec::new();
    'runs: for plan in &plans {
        for &c in &clients {
            if interrupt::requested() {
                break 'runs;
            }
            let dir = execute::run_one(&place, plan, c)?;
            finished.push(LoadedRun::load(&dir)?);
        }
    }
    print!(
        "{}",
        fathom_report::render(&finished, args.format, &Default::default())?
    );
    for r in &finished {
        eprintln!("results: {}", r.path.display());
    }
    if interrupt::requested() {
        anyhow::bail!("interrupted; every step that finished is saved");
    }
    Ok(())
}

fn run_experiment(args: &RunArgs, file: &std::path::Path) -> anyhow::Result<()> {
    let given: Vec<&str> = [
        ("--engine", !args.engine.is_empty()),
        ("--workload", args.workload.is_some()),
        ("--setup", args.setup.is_some()),
        ("--name", args.name.is_some()),
        ("--set", !args.settings.is_empty()),
        ("--param", !args.params.is_empty()),
        ("--clients", !args.clients.is_empty()),
        ("--memory-limit", args.memory_limit.is_some()),
        ("--rate", args.rate.is_some()),
        ("--arrivals", args.arrivals.is_some()),
        ("--interval", args.interval.is_some()),
        ("--data-dir", args.data_dir.is_some()),
        ("--keep-data", args.keep_data),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(flag, _)| *flag)
    .collect();
    if !given.is_empty() {
        anyhow::bail!(
            "{} with an experiment file: set {} in {} instead",
            given.join(", "),
            if given.len() == 1 { "it" } else { "them" },
            file.display()
        );
    }
    let exp = Experiment::load(file, args.duration.as_deref())?;
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&exp.name));
    execute::install_interrupt_handler();
    crate::experiment::run(&exp, &results, !args.no_calibrate)?;
    let runs = crate::load_runs(&results)?;
    print!(
        "{}",
        fathom_report::render(&runs, args.format, &Default::default())?
    );
    eprintln!("results: {}", results.display());
    if interrupt::requested() {
        anyhow::bail!("interrupted; every step that finished is saved, and a re-run resumes");
    }
    Ok(())
}
