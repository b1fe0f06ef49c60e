//! fathom-report: turns results directories into the tables the seeds print. Reports read
//! only results on disk; they never run anything.

pub mod compare;
pub mod dbbench_tsv;
pub mod group;
pub mod html;
pub mod inserts;
pub mod json;
pub mod linkbench;
pub mod steps;
pub mod svg;
pub mod sysbench_log;
pub mod table;

use fathom_core::store::LoadedRun;

/// Output formats of `fathom report` (names and aliases as the command line takes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    #[value(name = "md", alias = "markdown")]
    Markdown,
    Csv,
    Json,
    /// db_bench's `report.tsv` columns.
    #[value(name = "dbbench", alias = "tsv")]
    DbBench,
    /// One self-contained page with SVG charts.
    Html,
    /// sysbench's interval lines and statistics blocks.
    Sysbench,
    /// LinkBench's load line, per-operation latency lines and completion lines.
    #[value(name = "linkbench")]
    LinkBench,
}

/// What a report includes besides the step table.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Add the per-interval time series (text, md, csv, json).
    pub intervals: bool,
    /// The setup others are compared against (default: the first).
    pub base: Option<String>,
    /// The smallest relative change a verdict calls faster or slower.
    pub threshold: f64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            intervals: false,
            base: None,
            threshold: 0.03,
        }
    }
}

/// Renders runs in a format.
pub fn render(runs: &[LoadedRun], format: Format, opts: &ReportOptions) -> anyhow::Result<String> {
    let series = || steps::intervals(runs);
    Ok(match format {
        Format::Text if opts.intervals => {
            steps::text(runs, false) + "\nintervals:\n" + &series()?.text()
        }
        Format::Text => steps::text(runs, false),
        Format::Markdown if opts.intervals => {
            steps::text(runs, true) + "\nintervals:\n\n" + &series()?.markdown()
        }
        Format::Markdown => steps::text(runs, true),
        Format::Csv if opts.intervals => series()?.csv(),
        Format::Csv => steps::table(runs).csv(),
        Format::Json => serde_json::to_string_pretty(&json::report(runs, opts.intervals)?)? + "\n",
        Format::DbBench => dbbench_tsv::render(runs),
        Format::Html => html::page(runs, opts),
        Format::Sysbench => sysbench_log::render(runs)?,
        Format::LinkBench => linkbench::render(runs),
    })
}
