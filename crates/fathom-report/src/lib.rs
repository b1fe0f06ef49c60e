//! fathom-report: turns results directories into the tables the seeds print. Reports read
//! only results on disk; they never run anything.

pub mod charts;
pub mod compare;
pub mod dbbench_tsv;
#[cfg(test)]
mod fixture;
pub mod group;
pub mod html;
pub mod inserts;
pub mod iostat;
pub mod json;
pub mod linkbench;
pub mod model;
pub mod notes;
pub mod relative;
pub mod steps;
pub mod svg;
pub mod sweep;
pub mod sysbench_log;
pub mod table;
pub mod text;

use fathom_core::store::LoadedRun;
use model::Model;

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
    /// A step whose iostat figures the comparison shows per setup (seed 004's table).
    pub iostat: Option<String>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            iostat: None,
            intervals: false,
            base: None,
            threshold: 0.03,
        }
    }
}

/// Renders runs in a format: the model's formats render one `Model`; the originals' formats
/// (db_bench, sysbench, LinkBench) print the runs as those tools printed theirs.
pub fn render(runs: &[LoadedRun], format: Format, opts: &ReportOptions) -> anyhow::Result<String> {
    let model = || Model::build(runs, opts, format == Format::Html);
    Ok(match format {
        Format::Text => text::render(&model()?, false),
        Format::Markdown => text::render(&model()?, true),
        Format::Csv => text::csv(&model()?),
        Format::Json => json::render(runs, &model()?, opts)?,
        Format::Html => html::render(&model()?),
        Format::DbBench => dbbench_tsv::render(runs),
        Format::Sysbench => sysbench_log::render(runs)?,
        Format::LinkBench => linkbench::render(runs),
    })
}
