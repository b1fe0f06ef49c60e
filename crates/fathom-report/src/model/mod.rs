//! The report model: every section of a report computed once from the results on disk, its
//! figures kept as typed cells (or `fathom compare`'s comparison, `compare.rs`). Each format's
//! `Renderer` renders this model and computes no figure of its own.

mod compare;

use crate::options::{Columns, ReportOptions};
use crate::section::{Input, Section, Shown, Titled};
use crate::sections::notes::{self, Note};
use crate::sections::{self, steps};
use fathom_schema::group::{series, step_order};
use fathom_schema::store::LoadedRun;
use fathom_schema::table::Table;

/// A whole report (or comparison).
pub struct Model {
    pub title: String,
    /// A line per series saying what ran.
    pub runs: Vec<String>,
    /// The first screen: each step's rate, latency, ratio against the base and bound
    /// (`sections::summary`); none for a comparison.
    pub summary: Option<Section>,
    /// The comparisons in a sentence each, which the page sets under its title.
    pub headline: Vec<String>,
    /// The main table without the wide figures' columns and those no row has, which the
    /// terminal prints in its place (`--columns fit`, the default); `None` to print it whole.
    pub fitted: Option<Table>,
    /// The main table, printed first without a title: a row per step and setup, each figure the
    /// median over repeats (titled `steps` in JSON); `fathom compare`'s comparison.
    pub main: Titled,
    pub sections: Vec<Section>,
    /// Every interval of every run (with `--intervals`).
    pub intervals: Option<Table>,
    /// How to read the tables, then what the runs say about themselves.
    pub notes: String,
    /// The same notes one by one, for the page to set as a list (empty where `notes` is all).
    pub note_items: Vec<Note>,
    /// The names the page's charts colour alike in every chart: each series' label, then each
    /// setup's name.
    pub palette: Vec<String>,
    /// What the JSON format prints in place of the runs and tables, when set: `fathom
    /// compare`'s rows, as released.
    pub json: Option<serde_json::Value>,
    /// `fathom compare`'s comparisons, for its gate (`--fail-on`) and `--junit`.
    pub verdicts: Vec<fathom_stats::verdict::Row>,
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
        let sections = sections::build(&input)?;
        let mut note_items = notes::notes(&input);
        note_items.extend(sections.iter().filter_map(|s| s.legend).map(Note::legend));
        let notes = notes::shown(&note_items, opts.legend);
        let main = steps::table(&input);
        let (summary, headline) = match sections::summary::section(&input)? {
            Some(s) => (Some(s.section), s.headline),
            None => (None, Vec::new()),
        };
        Ok(Model {
            title: runs
                .iter()
                .find_map(|r| r.manifest.experiment.as_ref().map(|e| e.name.clone()))
                .unwrap_or_else(|| "fathom report".into()),
            runs: notes::headers(&input),
            summary,
            headline,
            fitted: (opts.columns == Columns::Fit)
                .then(|| main.without(&wide_columns()).without_missing()),
            main: Titled {
                title: "steps".into(),
                table: main,
            },
            sections,
            intervals: opts
                .intervals
                .then(|| steps::intervals(&input))
                .transpose()?,
            notes,
            note_items,
            palette: palette(&input),
            json: None,
            verdicts: Vec::new(),
        })
    }

    /// An empty model titled `title` whose main table is `main`, for the reports that are not
    /// of runs (`fathom compare`, `fathom history`) to fill in.
    pub fn of_table(title: String, main: Titled) -> Model {
        Model {
            title,
            runs: Vec::new(),
            summary: None,
            headline: Vec::new(),
            fitted: None,
            main,
            sections: Vec::new(),
            intervals: None,
            notes: String::new(),
            note_items: Vec::new(),
            palette: Vec::new(),
            json: None,
            verdicts: Vec::new(),
        }
    }

    /// Every table with a title, the main table first and the summary's last: what the JSON
    /// report lists.
    pub fn tables(&self) -> Vec<Titled> {
        std::iter::once(self.main.clone())
            .chain(
                self.sections
                    .iter()
                    .filter(|s| s.shown == Shown::Everywhere)
                    .chain(&self.summary)
                    .flat_map(|s| s.tables.iter().cloned()),
            )
            .collect()
    }
}

/// The columns of the figures the terminal's step table leaves out unless asked.
fn wide_columns() -> Vec<&'static str> {
    (fathom_schema::figures::FIGURES.iter())
        .filter(|f| f.wide)
        .map(|f| f.column)
        .collect()
}

/// Each series' label, then each setup's name, in the order the runs came.
fn palette(input: &Input) -> Vec<String> {
    let mut names: Vec<String> = input
        .series
        .iter()
        .map(|s| s.label(&input.series))
        .collect();
    for s in &input.series {
        if !names.contains(&s.setup) {
            names.push(s.setup.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;
    use fathom_schema::result::{RunManifest, SetupRecord, StepSummary};

    /// Every section builder renders something for some fixture of the snapshot tests
    /// (`tests/fixtures`): a section no fixture exercises is one no snapshot holds.
    #[test]
    fn every_section_renders_in_some_fixture() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut rendered = vec![false; sections::SECTIONS.len()];
        let fixtures = [
            ("results", Some("a")),
            ("server", None),
            ("ibench", None),
            ("linkbench", None),
            ("findmax", None),
            ("profiled", None),
            ("tail", None),
            ("network", None),
        ];
        for (fixture, base) in fixtures {
            let runs: Vec<LoadedRun> = fathom_schema::store::find_runs(&dir.join(fixture))
                .unwrap()
                .iter()
                .map(|p| LoadedRun::load(p).unwrap())
                .collect();
            let mut opts = ReportOptions::default();
            opts.judging.base = base.map(Into::into);
            let input = Input {
                runs: &runs,
                series: series(&runs),
                steps: step_order(&runs),
                opts: &opts,
                page: true,
            };
            for (i, (_, build)) in sections::SECTIONS.iter().enumerate() {
                rendered[i] |= !build(&input).unwrap().is_empty();
            }
        }
        let none: Vec<usize> = (0..rendered.len()).filter(|i| !rendered[*i]).collect();
        assert!(
            none.is_empty(),
            "SECTIONS' builders #{none:?} render in no fixture"
        );
    }

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
        let text = crate::render(&runs, Format::parse("text").unwrap(), &opts).unwrap();
        let page = crate::render(&runs, Format::parse("html").unwrap(), &opts).unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &crate::render(&runs, Format::parse("json").unwrap(), &opts).unwrap(),
        )
        .unwrap();
        for title in &titles[1..] {
            assert!(text.contains(&format!("{title} (median over repeats):")));
            // The summary's table is under the page's own heading, Summary.
            let heading = match title.as_str() {
                "summary" => "<section id=\"summary\"><h2>Summary</h2>".to_string(),
                _ => format!("<h3>{title}</h3>"),
            };
            assert!(page.contains(&heading), "{title}");
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
