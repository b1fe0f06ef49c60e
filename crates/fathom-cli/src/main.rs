//! The `fathom` command: parses the command line and hands each subcommand to its module.

mod calibrate;
mod compare;
mod history;
mod info;
mod interrupt;
mod merge;
mod profile;
mod progress;
mod run;
mod serve;
mod store;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// A benchmark harness for storage engines: real workloads on real engines, with what each
/// operation cost the host.
#[derive(Parser)]
#[command(name = "fathom", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a workload on an engine; one run per client count, each step saved as it finishes.
    Run(Box<run::RunArgs>),
    /// Search each timed step for the highest arrival rate that meets a latency or failure
    /// target: `fathom run` with `--find-max TARGET`, every probe a step of the run.
    Findmax(Box<FindmaxArgs>),
    /// Print the report of a run directory or of every run below a results directory.
    Report {
        /// A run directory, or a directory holding runs (an experiment's results); several
        /// directories are read as one experiment (its shards), and must hold one definition.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output format: the report model's, or a workload's original tool's output.
        #[arg(long, default_value = "text")]
        format: fathom_report::Format,
        #[command(flatten)]
        opts: fathom_report::ReportOptions,
    },
    /// Relative throughput of NEW against BASE per step, with the change in cpu/o, wKB/o and
    /// r/o, and with repeats a t interval and a verdict.
    Compare(compare::CompareArgs),
    /// Merge runs of one step sequence made on several client hosts into one run, exactly:
    /// operations add up and latency comes from the merged HdrHistogram logs.
    Merge(merge::MergeArgs),
    /// One figure of one step over every recorded run (or engine version), from the results
    /// database, with the changes E-divisive means finds in it.
    History(Box<history::HistoryArgs>),
    /// The results database every finished run is also recorded in (SQLite).
    Store {
        #[command(subcommand)]
        command: store::StoreCommand,
    },
    /// Run a command (db_bench, sysbench, a minimal loop) under the perf `fathom run
    /// --profile` uses, writing its folded stacks and printing where its CPU went.
    Profile(profile::ProfileArgs),
    /// Measure the data directory's device (random reads at queue depths 1, 4 and 32,
    /// sequential bandwidth, synced 4k writes) with fio at real-time priority, kept in
    /// RESULTS/device.json for runs to judge their IO against.
    Calibrate(calibrate::CalibrateArgs),
    /// Start a server engine from a setup and keep it up until Ctrl-C, printing its URL and
    /// pid for `--set url=... --set pid=...` and other tools.
    Serve(serve::ServeArgs),
    /// List the engines this build has, with their settings and options syntax.
    Engines,
    /// List the workloads, with their parameters and defaults.
    Workloads,
    /// List the device profiles `--device` takes, with their figures and sources.
    Devices,
    /// List the network profiles `--network` takes, with their figures and sources.
    Networks,
    /// Relay TCP connections to a server with a network profile's delay (what `--network`
    /// starts in a process of its own; bench scripts put peer tools behind it); not for
    /// everyday use.
    #[command(hide = true)]
    Relay(RelayArgs),
    /// Hold a new network namespace for a run's server until standard input closes (what
    /// `--network namespace` starts); not for use by hand.
    #[command(hide = true)]
    HoldNamespace {
        /// The run it serves (its data directory), named so what a killed run left is found.
        #[arg(long = "for")]
        _for: Option<std::path::PathBuf>,
    },
    /// Serve a device image with each request held a service time, until standard input
    /// closes (what `--device` starts for a profile with a service time); not for use by hand.
    #[command(hide = true)]
    HeldImage {
        /// The image file served.
        image: PathBuf,
        /// Where the served file appears.
        mount: PathBuf,
        /// Each request's hold, µs (each line on standard input sets it anew, in ns).
        #[arg(long)]
        service_us: f64,
        /// Requests served at once.
        #[arg(long)]
        depth: usize,
    },
    /// Run the run a supervising fathom hands over on standard input, in this process (how an
    /// embedded engine under a memory limit or another allocator runs); not for use by hand.
    #[command(hide = true)]
    ChildRun,
}

/// `fathom findmax`: a run's arguments and the target its timed steps are searched for.
#[derive(clap::Args)]
struct FindmaxArgs {
    /// What every probe must meet: `p99<=5ms`, `READ:p99.9<=20ms`, `failed<=1%`, several
    /// joined by commas.
    #[arg(long, value_name = "TARGET")]
    target: String,
    #[command(flatten)]
    run: run::RunArgs,
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Findmax(args) => {
            let FindmaxArgs { target, mut run } = *args;
            run.drive.find_max = Some(target);
            run::run(run)
        }
        Command::Profile(args) => profile::run(&args),
        Command::Report { dirs, format, opts } => report(&dirs, format, &opts),
        Command::Compare(args) => compare::run(&args),
        Command::Merge(args) => merge::run(&args),
        Command::Store { command } => store::run(&command),
        Command::History(args) => history::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::Engines => {
            print!("{}", info::engines());
            Ok(())
        }
        Command::Workloads => {
            print!("{}", info::workloads());
            Ok(())
        }
        Command::Devices => {
            print!("{}", info::devices());
            Ok(())
        }
        Command::Networks => {
            print!("{}", info::networks());
            Ok(())
        }
        Command::Relay(args) => relay(&args),
        Command::HoldNamespace { .. } => fathom_run::network::namespace::hold(),
        Command::HeldImage {
            image,
            mount,
            service_us,
            depth,
        } => fathom_measure::held_image::serve::serve(&image, &mount, service_us, depth),
        Command::ChildRun => child_run(),
    };
    if let Err(e) = result {
        eprintln!("fathom: {}", fathom_api::secret::redact(&format!("{e:#}")));
        // An interrupted command exits as a shell reports one (130); a CI gate that failed
        // (`--fail-on`) has a status of its own: the command worked.
        let gate = e
            .downcast_ref::<fathom_stats::verdict::gate::GateFailed>()
            .is_some();
        std::process::exit(if interrupt::happened() {
            interrupt::EXIT_STATUS
        } else if gate {
            fathom_stats::verdict::gate::EXIT_STATUS
        } else {
            1
        });
    }
}

/// `fathom relay`: what `--network` starts in front of a server.
#[derive(clap::Args)]
struct RelayArgs {
    /// The server's address.
    #[arg(long)]
    to: std::net::SocketAddr,
    /// A network profile's figures (a bundled name or a file), instead of the three below: how a
    /// peer tool (bench/compare-ycsb.sh) crosses the path a run's clients cross.
    #[arg(long, conflicts_with_all = ["rtt_us", "jitter_us", "mbit"])]
    profile: Option<String>,
    #[arg(long, required_unless_present = "profile")]
    rtt_us: Option<f64>,
    #[arg(long)]
    jitter_us: Option<f64>,
    #[arg(long)]
    mbit: Option<f64>,
    /// The run it serves (its data directory), named so what a killed run left is found.
    #[arg(long = "for")]
    _for: Option<std::path::PathBuf>,
}

/// Starts the relay, says where it listens on standard output, and relays until its standard
/// input closes (fathom ended the run, or died); a line `calibrate` there measures its own
/// round trip again (once the server is up), answered with the ready line again.
fn relay(a: &RelayArgs) -> anyhow::Result<()> {
    use std::io::{BufRead, Write};
    let shape = match &a.profile {
        Some(p) => {
            let p = fathom_run::network::profile::find(p, std::path::Path::new("."), "--profile")?;
            fathom_run::network::relay::Shape {
                rtt_us: p.rtt_us,
                jitter_us: p.jitter_us,
                mbit: p.mbit,
            }
        }
        None => fathom_run::network::relay::Shape {
            rtt_us: a.rtt_us.unwrap_or_default(),
            jitter_us: a.jitter_us.unwrap_or_default(),
            mbit: a.mbit,
        },
    };
    let mut relay = fathom_run::network::relay::start(a.to, shape)?;
    let mut out = std::io::stdout();
    writeln!(out, "{}", relay.ready.line())?;
    out.flush()?;
    for line in std::io::stdin().lock().lines() {
        if line?.trim() == "calibrate" {
            relay.calibrate()?;
            writeln!(out, "{}", relay.ready.line())?;
            out.flush()?;
        }
    }
    Ok(())
}

/// `fathom child-run`: the run a supervising fathom hands over, in this process; how it ended
/// goes back on the supervisor's pipe (an error too, which the supervisor says), and the exit
/// status says whether it finished.
fn child_run() -> anyhow::Result<()> {
    let stop = interrupt::install_handler(interrupt::RUN);
    let finished = fathom_run::child::run_child(stop, &mut progress::Progress::default())?;
    if !finished {
        std::process::exit(1);
    }
    Ok(())
}

/// Every run at or below `dir`, in the order they started: an experiment's setups then come
/// in its file's order, as the seeds list them, not in their directories' alphabetical order.
pub fn load_runs(dir: &std::path::Path) -> anyhow::Result<Vec<fathom_schema::store::LoadedRun>> {
    let mut runs = fathom_schema::store::find_runs(dir)?
        .iter()
        .map(|p| fathom_schema::store::LoadedRun::load(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    runs.sort_by(|a, b| a.manifest.started_at.cmp(&b.manifest.started_at));
    Ok(runs)
}

fn report(
    dirs: &[PathBuf],
    format: fathom_report::Format,
    opts: &fathom_report::ReportOptions,
) -> anyhow::Result<()> {
    let runs = match dirs {
        [dir] => load_runs(dir)?,
        _ => {
            let loaded = dirs
                .iter()
                .map(|d| {
                    Ok(fathom_run::experiment::union::Loaded {
                        dir: d.clone(),
                        runs: load_runs(d)?,
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            fathom_run::experiment::union::one_experiment(loaded)?
        }
    };
    print!("{}", fathom_report::render(&runs, format, opts)?);
    Ok(())
}
