//! The `fathom` command: parses the command line and hands each subcommand to its module.

mod info;
mod run;

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
    /// Print the report of a run directory or of every run below a results directory.
    Report {
        /// A run directory, or a directory holding runs.
        dir: PathBuf,
        /// text, md, csv, json, or dbbench (db_bench's report.tsv columns).
        #[arg(long, default_value = "text")]
        format: fathom_report::Format,
    },
    /// List the engines this build has, with their settings and options syntax.
    Engines,
    /// List the workloads, with their parameters and defaults.
    Workloads,
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Report { dir, format } => report(&dir, format),
        Command::Engines => {
            print!("{}", info::engines());
            Ok(())
        }
        Command::Workloads => {
            print!("{}", info::workloads());
            Ok(())
        }
    };
    if let Err(e) = result {
        eprintln!("fathom: {e:#}");
        std::process::exit(1);
    }
}

fn report(dir: &std::path::Path, format: fathom_report::Format) -> anyhow::Result<()> {
    let runs = fathom_core::store::find_runs(dir)?
        .iter()
        .map(|p| fathom_core::store::LoadedRun::load(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    print!("{}", fathom_report::render(&runs, format)?);
    Ok(())
}
