//! `fathom run`: either one engine (or a list) with a workload given on the command line, one
//! run per client count, or an experiment file's whole matrix; then the report of what ran.

use crate::progress::Progress;
use clap::Args;
use fathom_api::units::parse_key_values;
use fathom_run::experiment::{self, Experiment};
use fathom_run::{resolve, DriveInput, Keys, Place, RunSpec, SetupInput, WorkloadInput};
use fathom_schema::store::LoadedRun;
use std::path::{Path, PathBuf};

#[derive(Args, Clone)]
pub struct RunArgs {
    /// An experiment file (experiments/NAME.toml): runs its matrix of setups, workloads,
    /// client counts and repeats into one results directory, skipping what finished before.
    pub experiment: Option<PathBuf>,
    /// Engine to run (see `fathom engines`); a list (rocksdb,wiredtiger) runs each in turn
    /// with its own defaults and reports them in one table.
    #[arg(long, value_delimiter = ',', value_name = "ENGINE[,ENGINE...]")]
    pub engine: Vec<String>,
    /// Workload to run (see `fathom workloads`).
    #[arg(long)]
    pub workload: Option<String>,
    /// The engine's own options string, in its own syntax; `@FILE` reads it from a file.
    #[arg(long, value_name = "OPTIONS|@FILE")]
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
    #[arg(long, value_delimiter = ',', value_name = "N[,N...]")]
    pub clients: Vec<usize>,
    #[command(flatten)]
    pub drive: DriveInput,
    /// Where run directories are written [default: results; for an experiment,
    /// results/NAME].
    #[arg(long, value_name = "DIR", help_heading = "Results and data")]
    pub results: Option<PathBuf>,
    /// Where the database lives (default: RESULTS/.data/RUN, removed after the run).
    #[arg(long, value_name = "DIR", help_heading = "Results and data")]
    pub data_dir: Option<PathBuf>,
    /// Keep the database after the run.
    #[arg(long, help_heading = "Results and data")]
    pub keep_data: bool,
    /// Open the database an earlier run left in --data-dir (embedded engines), as db_bench's
    /// --use_existing_db: one step per process, e.g. `--param steps=readrandom`.
    #[arg(long, requires = "data_dir", help_heading = "Results and data")]
    pub existing_data: bool,
    /// Skip measuring the harness's own cost per operation on the null engine.
    #[arg(long, help_heading = "Driving each run")]
    pub no_calibrate: bool,
    /// Report format printed at the end.
    #[arg(long, default_value = "text", help_heading = "Results and data")]
    pub format: fathom_report::Format,
    #[command(flatten)]
    pub rounds: experiment::RoundsInput,
    /// The results database every finished run is also recorded in: a SQLite file's path, a
    /// PostgreSQL URL (postgres://USER@HOST:PORT/DB, the schema made on first use) or `off`
    /// [default: fathom.db under the results root: RESULTS for a run, its parent for an
    /// experiment].
    #[arg(long, value_name = "PATH|URL|off", help_heading = "Results and data")]
    pub store: Option<String>,
    #[command(flatten)]
    pub gate: fathom_run::gate::GateInput,
    /// Run a share of an experiment's cells: `K/N` (shard K of N, K from 1), or `auto` from a
    /// Kubernetes Indexed Job's or a Slurm array's variables. Every setup of a (repeat,
    /// workload, client count) runs on one shard; shards are balanced by expected time.
    #[arg(long, value_name = "K/N|auto", value_parser = fathom_run::experiment::parse_shard, help_heading = "Experiments")]
    pub shard: Option<fathom_run::experiment::Shard>,
    /// Print an experiment's plan and run nothing: its runs and their steps, the time its
    /// timed steps take at the fewest and the most rounds, and the engine releases it needs.
    #[arg(long, help_heading = "Experiments")]
    pub dry_run: bool,
}

impl RunArgs {
    /// Every (engine, client count) the flags ask for, resolved and checked before anything
    /// runs.
    fn specs(&self, workload: &str) -> anyhow::Result<Vec<RunSpec>> {
        if self.engine.is_empty() {
            anyhow::bail!("--engine: name at least one engine (see `fathom engines`)");
        }
        if self.engine.len() > 1 && (self.name.is_some() || self.setup.is_some()) {
            anyhow::bail!(
                "--name and --setup describe one engine; with several engines ({}) run them one at a time",
                self.engine.join(",")
            );
        }
        let clients = if self.clients.is_empty() {
            vec![2]
        } else {
            self.clients.clone()
        };
        let settings = parse_key_values(&self.settings, "--set").map_err(anyhow::Error::msg)?;
        let params = parse_key_values(&self.params, "--param").map_err(anyhow::Error::msg)?;
        let workload = WorkloadInput {
            name: workload.to_string(),
            params,
        };
        let drive = self.drive.clone();
        let mut specs = Vec::new();
        for engine in &self.engine {
            let setup = SetupInput {
                name: self.name.clone().unwrap_or_default(),
                engine: engine.clone(),
                options: self.setup.clone().unwrap_or_default(),
                settings: settings.clone(),
                ..SetupInput::default()
            };
            for &c in &clients {
                specs.push(resolve(
                    &setup,
                    &workload,
                    &drive,
                    c,
                    &Keys::Flags,
                    Path::new("."),
                )?);
            }
        }
        Ok(specs)
    }

    /// True when a flag only an experiment file takes is given.
    fn experiments_only(&self) -> bool {
        self.rounds.given() || self.dry_run || self.shard.is_some()
    }

    /// The flags that say what an experiment file's tables say (engines, workloads, setups,
    /// clients, data); given with one, they are an error. Run options (`DriveInput`) are not
    /// among them: given, each replaces the file's key.
    fn set_by_experiment(&self) -> Vec<&'static str> {
        [
            ("--engine", !self.engine.is_empty()),
            ("--workload", self.workload.is_some()),
            ("--setup", self.setup.is_some()),
            ("--name", self.name.is_some()),
            ("--set", !self.settings.is_empty()),
            ("--param", !self.params.is_empty()),
            ("--clients", !self.clients.is_empty()),
            ("--data-dir", self.data_dir.is_some()),
            ("--keep-data", self.keep_data),
            ("--existing-data", self.existing_data),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(flag, _)| *flag)
        .collect()
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    if let Some(file) = &args.experiment {
        return run_experiment(&args, file);
    }
    if args.experiments_only() {
        anyhow::bail!(
            "--repeats, --base, --threshold, --dry-run and --shard are for an experiment file (fathom run FILE)"
        );
    }
    let Some(workload) = args.workload.as_deref() else {
        anyhow::bail!("fathom run needs an experiment file, or --engine and --workload");
    };
    let specs = args.specs(workload)?;
    fathom_run::live::start(&args.drive.live())?;
    let host_link = args.gate.join_host()?;
    let place = Place {
        host_link,
        results: args.results.clone().unwrap_or_else(|| "results".into()),
        data_dir: args.data_dir.clone(),
        keep_data: args.keep_data,
        existing_data: args.existing_data,
        calibrate: !args.no_calibrate,
        gate: args.gate.gate(),
        launcher: Some(launcher()?),
        stop: crate::interrupt::install_handler(crate::interrupt::RUN),
        ..Place::default()
    };
    let mut progress = Progress::default();
    let store = fathom_run::records::Store::parse(args.store.as_deref(), &place.results)
        .map_err(anyhow::Error::msg)?;
    let mut finished = Vec::new();
    let mut failed = Vec::new();
    for spec in &specs {
        if place.stop.requested() {
            break;
        }
        match fathom_run::run(spec, &place, &mut progress) {
            Ok(dir) => {
                fathom_run::records::record_or_say(&store, &dir);
                finished.push(LoadedRun::load(&dir)?);
            }
            // A single run's failure is the command's.
            Err(e) if specs.len() == 1 => return Err(e),
            Err(e) => {
                eprintln!("fathom: {} failed: {e:#}", spec.setup.name);
                failed.push(spec.setup.name.clone());
            }
        }
    }
    print!(
        "{}",
        fathom_report::render(&finished, args.format, &Default::default())?
    );
    for r in &finished {
        eprintln!("results: {}", r.path.display());
    }
    let dirs: Vec<&Path> = finished.iter().map(|r| r.path.as_path()).collect();
    say_report_command(&dirs);
    if place.stop.requested() {
        anyhow::bail!("interrupted; every step that finished is saved");
    }
    if !failed.is_empty() {
        anyhow::bail!(
            "{} of {} runs failed: {}",
            failed.len(),
            specs.len(),
            failed.join(", ")
        );
    }
    Ok(())
}

/// The one command that reports these runs again, and the page's.
fn say_report_command(dirs: &[&Path]) {
    if dirs.is_empty() {
        return;
    }
    let quoted: Vec<String> = (dirs.iter())
        .map(|d| {
            let d = d.display().to_string();
            match d.contains(char::is_whitespace) {
                true => format!("'{d}'"),
                false => d,
            }
        })
        .collect();
    let dirs = quoted.join(" ");
    eprintln!(
        "report: fathom report {dirs}    page: fathom report {dirs} --format html > report.html"
    );
}

/// This executable, which runs a run that needs a process of its own (`fathom child-run`).
fn launcher() -> anyhow::Result<PathBuf> {
    std::env::current_exe().map_err(|e| anyhow::anyhow!("finding fathom's own executable: {e}"))
}

fn run_experiment(args: &RunArgs, file: &Path) -> anyhow::Result<()> {
    let given = args.set_by_experiment();
    if !given.is_empty() {
        anyhow::bail!(
            "{} with an experiment file: set {} in {} instead",
            given.join(", "),
            if given.len() == 1 { "it" } else { "them" },
            file.display()
        );
    }
    let mut exp = Experiment::load_with(file, &args.drive, &args.rounds)?;
    if let Some(shard) = args.shard {
        if exp.rounds.adaptive() {
            anyhow::bail!(
                "--shard {shard}: adaptive repeats ({}..{}) decide from every run, and a shard sees its own; give a count of repeats",
                exp.rounds.min,
                exp.rounds.max
            );
        }
        exp.shard = Some(shard);
    }
    exp.gate = args.gate.gate();
    if args.dry_run {
        print!("{}", experiment::plan(&exp)?);
        return Ok(());
    }
    fathom_run::live::start(&exp.live())?;
    let host_link = args.gate.join_host()?;
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&exp.name));
    let root = results.parent().unwrap_or(Path::new("."));
    exp.store = fathom_run::records::Store::parse(args.store.as_deref(), root)
        .map_err(anyhow::Error::msg)?;
    let how = Place {
        host_link,
        calibrate: !args.no_calibrate,
        launcher: Some(launcher()?),
        stop: crate::interrupt::install_handler(crate::interrupt::RUN),
        ..Place::default()
    };
    let mut progress = Progress::default();
    let outcome = experiment::run(&exp, &results, &how, &mut progress)?;
    if outcome.cells == 0 {
        // A shard of more shards than the experiment has groups of cells.
        eprintln!(
            "fathom: {}: no cells of the experiment fall to this shard: nothing ran",
            exp.shard
                .map_or("this run".into(), |s| format!("shard {s}"))
        );
        return Ok(());
    }
    let runs = crate::load_runs(&results)?;
    let opts = fathom_report::ReportOptions {
        judging: fathom_report::Judging {
            base: exp.rounds.base.clone(),
            threshold: exp.rounds.threshold,
            exclude_disturbed: exp.rounds.exclude_disturbed,
            adjust: exp.rounds.adjust,
            ..Default::default()
        },
        ..Default::default()
    };
    print!("{}", fathom_report::render(&runs, args.format, &opts)?);
    eprintln!("results: {}", results.display());
    say_report_command(&[results.as_path()]);
    if how.stop.requested() {
        anyhow::bail!("interrupted; every step that finished is saved, and a re-run resumes");
    }
    let failed = &outcome.failed;
    if !failed.is_empty() {
        let cells: Vec<String> = failed.iter().map(|f| f.cell.clone()).collect();
        anyhow::bail!(
            "{} of {} runs failed ({}); their run.json say why, and a re-run runs them again",
            failed.len(),
            outcome.cells,
            cells.join(", ")
        );
    }
    let verdicts = fathom_report::gate::verdicts(&runs, &opts.judging)?;
    fathom_stats::verdict::gate::check(&verdicts, &exp.fail_on)?;
    Ok(())
}
