//! The report model: every section of a report computed once from the results on disk, its
//! figures kept as typed cells. Each format's `Renderer` renders this model and computes no
//! figure of its own; a new section is a builder and one line in `SECTIONS`.

use crate::group::{series, step_order, Series};
use crate::svg::{BarChart, LineChart};
use crate::table::Table;
use crate::{
    charts, inserts, memory, notes, profiles, relative, steps, sweep, workloads, ReportOptions,
};
use fathom_core::store::LoadedRun;

pub use crate::table::Titled;

/// A chart of the page.
pub enum Chart {
    Line(LineChart),
    Bar(BarChart),
    /// A profiled step's flame graph, with its own frame and anchor.
    Flame(crate::flame::Flame),
}

impl Chart {
    /// The chart's figure on the page.
    pub fn html(&self) -> String {
        match self {
            Chart::Line(c) => format!("<figure>{}</figure>", c.svg()),
            Chart::Bar(c) => format!("<figure>{}</figure>", c.svg()),
            Chart::Flame(f) => f.html(),
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
}

impl Section {
    pub fn new(heading: impl Into<String>) -> Section {
        Section {
            heading: heading.into(),
            tables: Vec::new(),
            charts: Vec::new(),
            paragraph: None,
            legend: None,
            shown: Shown::Everywhere,
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

/// A section builder: the sections it adds (none, one, or one per workload).
type Build = fn(&Input) -> anyhow::Result<Vec<Section>>;

/// The sections beside the step table, in the order reports show them.
const SECTIONS: &[(Shown, Build)] = &[
    (Shown::Everywhere, |i| {
        Ok(sweep::section(i)?.into_iter().collect())
    }),
    (Shown::Everywhere, |i| {
        Ok(inserts::section(i)?.into_iter().collect())
    }),
    (Shown::Everywhere, |i| Ok(workloads::sections(i))),
    (Shown::Everywhere, |i| Ok(memory::sections(i))),
    (Shown::Everywhere, |i| {
        Ok(profiles::section(i)?.into_iter().collect())
    }),
    (Shown::Everywhere, |i| {
        Ok(relative::section(i)?.into_iter().collect())
    }),
    (Shown::Page, |i| {
        Ok(charts::over_time(i)?.into_iter().collect())
    }),
    (Shown::Page, |i| {
        Ok(charts::percentiles(i)?.into_iter().collect())
    }),
];

/// A whole report (or comparison).
pub struct Model {
    pub title: String,
    /// A line per series saying what ran.
    pub runs: Vec<String>,
    /// The main table, printed first without a title: a row per step and setup, each figure the
    /// median over repeats (titled `steps` in JSON); `fathom compare`'s comparison.
    pub main: Titled,
    pub sections: Vec<Section>,
    /// Every interval of every run (with `--intervals`).
    pub intervals: Option<Table>,
    /// How to read the tables, then what the runs say about themselves.
    pub notes: String,
    /// What the JSON format prints in place of the runs and tables, when set: `fathom
    /// compare`'s rows, as released.
    pub json: Option<serde_json::Value>,
}

impl Model {
    /// The model of `runs`; with `page`, the charts and page-only sections too.
    pub fn build(runs: &[LoadedRun], opts: &ReportOptions, page: bool) -> anyhow::Result<Model> {
        let input = Input {
            runs,
            series: series(runs),
            steps: step_order(runs),
            opts,
            page,
        };
        let mut sections = Vec::new();
        for (shown, build) in SECTIONS {
            if page || *shown == Shown::Everywhere {
                sections.extend(
                    build(&input)?
                        .into_iter()
                        // A page-only builder's sections are the page's; another's may say
                        // themselves that they are (the comparison before it has verdicts).
                        .map(|s| Section {
                            shown: if *shown == Shown::Page {
                                Shown::Page
                            } else {
                                s.shown
                            },
                            ..s
                        }),
                );
            }
        }
        let mut notes = notes::text(&input);
        for legend in sections.iter().filter_map(|s| s.legend) {
            notes += legend;
        }
        Ok(Model {
            title: runs
                .iter()
                .find_map(|r| r.manifest.experiment.as_ref().map(|e| e.name.clone()))
                .unwrap_or_else(|| "fathom report".into()),
            runs: notes::headers(&input),
            main: Titled {
                title: "steps".into(),
                table: steps::table(&input),
            },
            sections,
            intervals: opts
                .intervals
                .then(|| steps::intervals(&input))
                .transpose()?,
            notes,
            json: None,
        })
    }

    /// Every table with a title, the main table first: what the JSON report lists.
    pub fn tables(&self) -> Vec<Titled> {
        std::iter::once(self.main.clone())
            .chain(
                self.sections
                    .iter()
                    .filter(|s| s.shown == Shown::Everywhere)
                    .flat_map(|s| s.tables.iter().cloned()),
            )
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;
    use fathom_core::result::{RunManifest, SetupRecord, StepSummary};

    fn run(setup: &str, clients: usize, ops_per_sec: f64) -> LoadedRun {
        let step = StepSummary {
            step: "readrandom".into(),
            ops: 1000,
            ops_per_sec,
            ..StepSummary::default()
        };
        LoadedRun {
            path: format!("{setup}.c{clients}").into(),
            manifest: RunManifest {
                setup: SetupRecord {
                    name: setup.into(),
                    ..SetupRecord::default()
                },
                workload: "dbbench".into(),
                clients,
                ..RunManifest::default()
            },
            steps: vec![step],
        }
    }

    /// Every format that renders the model shows the same tables: what the text report
    /// titles, the page heads and the JSON lists.
    #[test]
    fn the_formats_render_one_model() {
        let runs = [
            run("a", 1, 100.0),
            run("a", 2, 180.0),
            run("b", 1, 50.0),
            run("b", 2, 90.0),
        ];
        let opts = ReportOptions::default();
        let model = Model::build(&runs, &opts, false).unwrap();
        let titles: Vec<String> = model.tables().into_iter().map(|t| t.title).collect();
        assert_eq!(titles[0], "steps");
        assert!(
            titles.contains(&"readrandom: operations per second".to_string()),
            "{titles:?}"
        );
        let text = crate::render(&runs, Format::Text, &opts).unwrap();
        let page = crate::render(&runs, Format::Html, &opts).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&crate::render(&runs, Format::Json, &opts).unwrap()).unwrap();
        for title in &titles[1..] {
            assert!(text.contains(&format!("{title} (median over repeats):")));
            assert!(page.contains(&format!("<h3>{title}</h3>")), "{title}");
        }
        let listed: Vec<&str> = json["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].as_str().unwrap())
            .collect();
        assert_eq!(listed, titles);
        // The sweep's table holds the medians as numbers: a at 2 clients ran 180 ops/s.
        let sweep = &json["tables"][1];
        assert_eq!(sweep["rows"][0], serde_json::json!([100.0, 180.0, "a"]));
        assert_eq!(sweep["header"], serde_json::json!(["1", "2", "setup"]));
        assert_eq!(sweep["columns_are"], "clients");
        // The step table's figures too.
        let steps = &json["tables"][0];
        let col = |name: &str| {
            let h = steps["header"].as_array().unwrap();
            h.iter().position(|c| c == name).unwrap()
        };
        assert_eq!(steps["rows"][0][col("ops/s")], 100.0);
        assert_eq!(steps["rows"][0][col("p50")], 0.0);
        assert_eq!(steps["rows"][0][col("r/o")], serde_json::Value::Null);
        assert_eq!(
            steps["rows"][0][col("db.gb")],
            serde_json::json!([0.0, 0.0])
        );
        // The page alone carries the comparison against the base setup and the charts.
        assert!(page.contains("Relative throughput against a"));
        assert!(!text.contains("Relative throughput"));
        assert!(page.contains("readrandom: throughput by clients"));
    }
}
