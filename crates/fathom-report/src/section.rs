//! What a report is made of: a section (its tables, the page's charts, a paragraph and a
//! legend), where it shows, and what a section builder reads. Sections, the model and the
//! renderers all use these types; this module uses none of theirs.

use crate::draw::flame::Flame;
use crate::draw::svg::{BarChart, LineChart, Palette};
use crate::draw::timeline::Timeline;
use crate::options::ReportOptions;
use fathom_schema::group::Series;
use fathom_schema::store::LoadedRun;

pub use fathom_schema::table::Titled;

/// A chart of the page.
pub enum Chart {
    Line(LineChart),
    Bar(BarChart),
    /// A profiled step's flame graph, with its own frame and anchor.
    Flame(Flame),
    /// A step's latency over time with the engine's events and its slowest operations.
    Timeline(Timeline),
}

impl Chart {
    /// The chart's figure on the page, each setup in its colour from `palette`.
    pub fn html(&self, palette: Palette) -> String {
        match self {
            Chart::Line(c) => format!("<figure>{}</figure>", c.svg_in(palette)),
            Chart::Bar(c) => format!("<figure>{}</figure>", c.svg_in(palette)),
            Chart::Flame(f) => f.html(),
            Chart::Timeline(t) => format!("<figure>{}</figure>", t.svg_in(palette)),
        }
    }
}

/// Where a section is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Every format that renders the model.
    Everywhere,
    /// The HTML page only (charts, the comparison against a base setup).
    Page,
}

/// One part of a report: its tables, the page's charts and a paragraph under them.
pub struct Section {
    /// The page's heading over the section.
    pub heading: String,
    pub tables: Vec<Titled>,
    /// Drawn on the page only; empty unless the model is built for the page.
    pub charts: Vec<Chart>,
    /// A paragraph the page prints under the section.
    pub paragraph: Option<String>,
    /// How to read the section's columns; the report's notes end with it.
    pub legend: Option<&'static str>,
    pub shown: Shown,
    /// How its tables' rows summarise the runs, said after each table's title in text
    /// ("median over repeats"); `None` where they are not medians.
    pub over: Option<&'static str>,
    /// The tables as the terminal prints them with `--columns fit` (the default), where they
    /// differ from `tables` (narrower, to fit 120 characters; what they leave out said in
    /// `paragraph`); every other format prints `tables`.
    pub terminal: Option<Vec<Titled>>,
}

impl Section {
    pub fn new(heading: impl Into<String>) -> Section {
        Section {
            heading: heading.into(),
            tables: Vec::new(),
            charts: Vec::new(),
            paragraph: None,
            legend: None,
            over: Some("median over repeats"),
            shown: Shown::Everywhere,
            terminal: None,
        }
    }

    /// The section, or nothing when it holds neither a table nor a chart.
    pub fn if_any(self) -> Option<Section> {
        (!self.tables.is_empty() || !self.charts.is_empty()).then_some(self)
    }
}

/// What a section builder reads: the runs, grouped into series, and the report's options.
pub struct Input<'a> {
    pub runs: &'a [LoadedRun],
    pub series: Vec<Series<'a>>,
    /// Step names in first-seen order.
    pub steps: Vec<String>,
    pub opts: &'a ReportOptions,
    /// The model is for the page: build charts and page-only sections.
    pub page: bool,
}

impl Input<'_> {
    /// Setup names in first-seen order.
    pub fn setups(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for s in &self.series {
            if !out.contains(&s.setup.as_str()) {
                out.push(&s.setup);
            }
        }
        out
    }

    /// The client counts that ran, smallest first.
    pub fn clients(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self.series.iter().map(|s| s.clients).collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}
