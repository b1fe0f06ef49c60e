//! `fathom compare BASE NEW...`: relative throughput of each NEW against BASE, step by step,
//! with a verdict that accounts for noise when both sides have repeats.

use clap::Args;
use fathom_core::store::LoadedRun;
use fathom_core::verdict;
use fathom_report::model::Model;
use fathom_run::experiment::union;
use std::path::PathBuf;

#[derive(Args)]
pub struct CompareArgs {
    /// Results directories: the base first, then one or more to compare with it. One
    /// directory holding several setups compares them with its first setup (or --base).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The base setup's name, when a directory holds several setups; or the start of several
    /// names (a version: `8.0.0` for `8.0.0.leveled` and `8.0.0.universal`), each the base of
    /// the setups named as it is after that start.
    #[arg(long)]
    pub base: Option<String>,
    /// Smallest change called faster or slower (3% or 0.03).
    #[arg(long, default_value = "3%", value_parser = fathom_core::units::parse_threshold)]
    pub threshold: f64,
    /// Output format: a format of the report model (csv holds the comparison alone, json its
    /// rows); a workload's original output is refused.
    #[arg(long, default_value = "text")]
    pub format: fathom_report::Format,
    /// Also each setup's iostat figures during this step, and each over its base's (seed
    /// 004's table for overwriteandwait): text, md and html.
    #[arg(long, value_name = "STEP")]
    pub iostat: Option<String>,
    /// Leave out repeats of a step that other processes or steal disturbed (the report marks
    /// them `!`); without it they count, and the verdict says how many there were.
    #[arg(long)]
    pub exclude_disturbed: bool,
    /// Adjust the verdicts for their number: holm (the chance of any false verdict at most
    /// 2.5%) or bh (Benjamini-Hochberg: false ones at most 2.5% of those decided); none
    /// judges each on its own.
    #[arg(long, default_value = "none")]
    pub adjust: fathom_core::verdict::Adjust,
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
    let opts = fathom_report::ReportOptions {
        base: args.base.clone(),
        threshold: args.threshold,
        iostat: args.iostat.clone(),
        exclude_disturbed: args.exclude_disturbed,
        adjust: args.adjust,
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
    Ok(())
}
