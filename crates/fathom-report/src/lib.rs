//! fathom-report: turns results directories into the tables the seeds print. Reports read
//! only results on disk; they never run anything.

pub mod charts;
pub mod compare;
pub mod flame;
pub mod html;
pub mod inserts;
pub mod iostat;
pub mod json;
pub mod memory;
pub mod model;
pub mod notes;
pub mod profile_diff;
pub mod profiles;
pub mod relative;
pub mod steps;
pub mod svg;
pub mod sweep;
pub mod text;
pub mod workloads;

use fathom_core::store::LoadedRun;
pub use fathom_core::{group, table};
use fathom_workloads::report::Original;
use model::Model;

/// Output formats of `fathom report` and `fathom compare`: the model's, and each workload's
/// original tool's (`fathom_workloads::originals`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    Text,
    Markdown,
    Csv,
    Json,
    /// One self-contained page with SVG charts.
    Html,
    /// A workload's original tool's output (db_bench's report.tsv, sysbench's, LinkBench's).
    Original(&'static Original),
}

impl Format {
    /// The formats' names, as `--format` takes them.
    pub fn names() -> Vec<&'static str> {
        let mut names = vec!["text", "md", "csv", "json", "html"];
        names.extend(fathom_workloads::originals().map(|o| o.name));
        names
    }

    /// `--format`'s value: a model format's name (`md` or `markdown`), or an original's.
    pub fn parse(name: &str) -> Result<Format, String> {
        Ok(match name {
            "text" => Format::Text,
            "md" | "markdown" => Format::Markdown,
            "csv" => Format::Csv,
            "json" => Format::Json,
            "html" => Format::Html,
            other => Format::Original(
                fathom_workloads::originals()
                    .find(|o| o.answers_to(other))
                    .ok_or_else(|| {
                        format!(
                            "`{other}` is not a format; expected one of {}",
                            Format::names().join(", ")
                        )
                    })?,
            ),
        })
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(name: &str) -> Result<Format, String> {
        Format::parse(name)
    }
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
    /// Leave repeats of a step that other processes disturbed out of the verdicts.
    pub exclude_disturbed: bool,
}

impl ReportOptions {
    /// How the comparisons judge.
    pub fn judge(&self) -> fathom_core::verdict::Judge {
        fathom_core::verdict::Judge {
            threshold: self.threshold,
            exclude_disturbed: self.exclude_disturbed,
        }
    }
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            iostat: None,
            intervals: false,
            base: None,
            threshold: 0.03,
            exclude_disturbed: false,
        }
    }
}

/// One format of `fathom report` and `fathom compare`. Every format renders one `Model`; the
/// originals' formats (db_bench, sysbench, LinkBench) print the runs behind it as those tools
/// printed theirs.
pub trait Renderer {
    /// True when the format shows the page's parts (charts, the comparison against a base).
    fn page(&self) -> bool {
        false
    }

    /// True when the format renders the model's tables rather than the runs' own lines.
    fn renders_model(&self) -> bool {
        true
    }

    fn render(&self, model: &Model, runs: &[LoadedRun]) -> anyhow::Result<String>;
}

impl Format {
    /// The format's renderer.
    pub fn renderer(self) -> &'static dyn Renderer {
        match self {
            Format::Text => &text::Text,
            Format::Markdown => &text::Markdown,
            Format::Csv => &text::Csv,
            Format::Json => &json::Json,
            Format::Html => &html::Html,
            Format::Original(o) => o,
        }
    }
}

/// An original's format prints the runs as the tool printed its own.
impl Renderer for Original {
    fn renders_model(&self) -> bool {
        false
    }

    fn render(&self, _: &Model, runs: &[LoadedRun]) -> anyhow::Result<String> {
        (self.render)(runs)
    }
}

/// The report of `runs` in a format.
pub fn render(runs: &[LoadedRun], format: Format, opts: &ReportOptions) -> anyhow::Result<String> {
    let renderer = format.renderer();
    let model = Model::build(runs, opts, renderer.page())?;
    renderer.render(&model, runs)
}
