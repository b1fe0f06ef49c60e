//! `fathom merge`: one run from the runs several client hosts made of the same steps against
//! one database, with exact latency from their merged HdrHistogram logs (docs/multi-host.md).

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct MergeArgs {
    /// Run directories (or results directories holding them), one or more per client host.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// The merged run directory to create.
    #[arg(long)]
    pub out: PathBuf,
    /// Report format printed for the merged run.
    #[arg(long, default_value = "text")]
    pub format: fathom_report::Format,
}

pub fn run(args: &MergeArgs) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    for d in &args.runs {
        runs.extend(crate::load_runs(d)?);
    }
    if runs.len() < 2 {
        anyhow::bail!(
            "fathom merge needs at least two runs; found {} in {}",
            runs.len(),
            args.runs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let dir = fathom_measure::merge::merge(&runs, &args.out)?;
    let merged = fathom_schema::store::LoadedRun::load(&dir)?;
    print!(
        "{}",
        fathom_report::render(&[merged], args.format, &Default::default())?
    );
    eprintln!("merged {} runs into {}", runs.len(), dir.display());
    Ok(())
}
