//! `fathom compare BASE NEW...`: relative throughput of each NEW against BASE, step by step,
//! with a verdict that accounts for noise when both sides have repeats.

use clap::Args;
use fathom_report::model::Model;
use fathom_run::experiment::union;
use fathom_schema::store::LoadedRun;
use fathom_stats::verdict;
use fathom_stats::verdict::gate::{self, FailOn};
use std::path::PathBuf;

#[derive(Args)]
pub struct CompareArgs {
    /// Results directories: the base first, then one or more to compare with it. One
    /// directory holding several setups compares them with its first setup (or --base).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output format: a format of the report model (csv holds the comparison alone, json its
    /// rows); a workload's original output is refused.
    #[arg(long, default_value = "text")]
    pub format: fathom_report::Format,
    #[command(flatten)]
    pub judging: fathom_report::Judging,
    /// Exit with status 3, naming each comparison, when one is `slower` than its base, or (with
    /// `same-not-reached`) not shown the same as or faster than it: a CI job's gate.
    #[arg(long, value_delimiter = ',', value_name = "VERDICT[,VERDICT]",
          value_parser = FailOn::parse)]
    pub fail_on: Vec<FailOn>,
    /// Also write every comparison to FILE as JUnit XML, a test case per step and client count,
    /// failed where --fail-on fails it.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// A results database holding the base's past runs (a SQLite file's path or a PostgreSQL
    /// URL): sides that ran apart in time are judged against the base's history there, one
    /// point per session, when it holds at least 5 sessions.
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
}

/// Each directory's runs, labelled by the directory; a directory that holds more shards of the
/// experiment the one before it holds joins it (`A+B`).
fn operands(dirs: &[PathBuf]) -> anyhow::Result<Vec<(String, Vec<LoadedRun>)>> {
    let mut out: Vec<(String, Vec<LoadedRun>)> = Vec::new();
    for d in dirs {
        let runs = crate::load_runs(d)?;
        match out.last_mut() {
            Some((label, last)) if union::same_experiment(last, &runs) => {
                *label = format!("{label}+{}", d.display());
                last.extend(runs);
            }
            _ => out.push((d.display().to_string(), runs)),
        }
    }
    Ok(out)
}

pub fn run(args: &CompareArgs) -> anyhow::Result<()> {
    let operands = operands(&args.dirs)?;
    let borrowed: Vec<(String, &[_])> = operands
        .iter()
        .map(|(o, r)| (o.clone(), r.as_slice()))
        .collect();
    let sides = verdict::sides(&borrowed);
    if sides.len() < 2 {
        anyhow::bail!(
            "nothing to compare: {} hold{} one setup (`{}`); give a base and a new results directory",
            args.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
            if args.dirs.len() == 1 { "s" } else { "" },
            sides[0].label
        );
    }
    let renderer = args.format.renderer();
    if !renderer.renders_model() {
        let model: Vec<&str> = fathom_report::Format::all()
            .iter()
            .filter(|f| f.renderer().renders_model())
            .map(|f| f.name)
            .collect();
        anyhow::bail!(
            "--format: compare prints {}, not {}",
            model.join(", "),
            args.format.name
        );
    }
    let mut judging = args.judging.clone();
    if let Some(store) = &args.store {
        let store = fathom_run::records::Store::parse(Some(store), std::path::Path::new("results"))
            .map_err(anyhow::Error::msg)?;
        judging.history = fathom_stats::verdict::history::History(Some(std::sync::Arc::new(store)));
    }
    let opts = fathom_report::ReportOptions {
        judging,
        ..fathom_report::ReportOptions::default()
    };
    let model = Model::compare(&sides, &opts, |base, new| {
        eprintln!(
            "fathom: `{}` has no step at a client count `{}` also ran",
            new.label, base.label
        )
    })?;
    let runs: Vec<_> = operands.into_iter().flat_map(|(_, r)| r).collect();
    print!("{}", renderer.render(&model, &runs)?);
    if let Some(file) = &args.junit {
        std::fs::write(
            file,
            gate::junit(&model.verdicts, &args.fail_on, "fathom compare"),
        )
        .map_err(|e| anyhow::anyhow!("--junit {}: {e}", file.display()))?;
    }
    gate::check(&model.verdicts, &args.fail_on)?;
    Ok(())
}
