//! Snapshots of the report of a small fixed results directory (`tests/fixtures/results`: the
//! db_bench sequence's first steps on the null engine, two setups at two client counts, two
//! repeats each) in text, Markdown, CSV and JSON: a change to any table's layout or figure is
//! a diff to review (`cargo insta review`, or `INSTA_UPDATE=always` and `git diff`), not
//! something seen only by eye.

use fathom_core::store::{find_runs, LoadedRun};
use fathom_report::{render, Format, ReportOptions};
use std::path::Path;

/// The fixture's runs in the order they started, as `fathom report` reads them.
fn runs() -> Vec<LoadedRun> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let mut runs: Vec<LoadedRun> = find_runs(&dir)
        .unwrap()
        .iter()
        .map(|p| LoadedRun::load(p).unwrap())
        .collect();
    runs.sort_by(|a, b| a.manifest.started_at.cmp(&b.manifest.started_at));
    assert_eq!(runs.len(), 8, "the fixture's runs");
    runs
}

/// The report in `format`, the fixture's own path written as `[fixture]`.
fn report(format: &str, opts: &ReportOptions) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    render(&runs(), Format::parse(format).unwrap(), opts)
        .unwrap()
        .replace(&dir.display().to_string(), "[fixture]")
}

/// The model's formats with the default options.
#[test]
fn formats() {
    for format in ["text", "md", "csv", "json"] {
        insta::assert_snapshot!(format, report(format, &ReportOptions::default()));
    }
}

/// The intervals too, in text.
#[test]
fn text_with_intervals() {
    let opts = ReportOptions {
        intervals: true,
        ..ReportOptions::default()
    };
    insta::assert_snapshot!(report("text", &opts));
}
