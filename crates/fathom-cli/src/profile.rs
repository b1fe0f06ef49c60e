//! `fathom profile --out FILE -- COMMAND...`: a peer tool (db_bench, sysbench, a minimal loop)
//! run under the perf fathom's `--profile` uses, with the same frequency, unwinding and
//! sampling, so its profile reads beside a fathom step's: the folded stacks written to FILE,
//! the shares and top functions printed.

use anyhow::Context;
use clap::Args;
use fathom_measure::driver::Watch;
use fathom_report::sections::profiles::{tables, Profiled};
use fathom_run::profile::{check_perf, Profiler, DEFAULT_HZ};
use fathom_schema::profile::Stacks;
use std::path::PathBuf;
use std::process::Command;

#[derive(Args)]
pub struct ProfileArgs {
    /// Where the folded stacks go (`PROCESS;THREAD;frames... NS`, docs/profiles.md).
    #[arg(long)]
    pub out: PathBuf,
    /// Samples per second per CPU [default: 99, as `fathom run --profile`].
    #[arg(long, value_name = "HZ")]
    pub hz: Option<u32>,
    /// Function-name prefixes counted as the engine's in the shares (`rocksdb::,rocksdb_`);
    /// without them every function of the command is the engine's.
    #[arg(long, value_delimiter = ',', value_name = "PREFIX")]
    pub engine_code: Vec<String>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

pub fn run(args: &ProfileArgs) -> anyhow::Result<()> {
    check_perf()?;
    let mut child = Command::new(&args.command[0])
        .args(&args.command[1..])
        .spawn()
        .with_context(|| format!("starting {}", args.command[0]))?;
    let profiler = Profiler::of(
        args.hz.unwrap_or(DEFAULT_HZ),
        vec![child.id()],
        args.engine_code.clone(),
        None,
    );
    let profiler = match profiler {
        Ok(p) => p,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    let base = args.out.parent().unwrap_or(std::path::Path::new("."));
    let mut session = match profiler.start_into(base, args.out.clone()) {
        Ok(s) => s,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    session.measuring();
    let status = child.wait()?;
    session.ended();
    let record = session.finish()?;
    let stacks = Stacks::read(&args.out)?;
    let label = std::path::Path::new(&args.command[0])
        .file_name()
        .map_or_else(
            || args.command[0].clone(),
            |n| n.to_string_lossy().into_owned(),
        );
    let profiled = [Profiled::single(&label, "command", &record, stacks)];
    for t in tables(&profiled) {
        println!("{}:\n{}", t.title, t.table.text());
    }
    for p in &record.problems {
        eprintln!("fathom: {p}");
    }
    eprintln!("folded stacks: {}", args.out.display());
    if !status.success() {
        anyhow::bail!("{} exited with {status}", args.command[0]);
    }
    Ok(())
}
