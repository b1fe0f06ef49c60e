//! Snapshots of reports of small fixed results directories, one per kind of run, so that every
//! section renders something in some snapshot: `tests/fixtures/results` (the db_bench
//! sequence's first steps on the null engine, two setups at two client counts, two repeats
//! each: the step table, sweep, relative throughput and comparison), `server` (sysbench on
//! PostgreSQL with its threads' sleeps timed by eBPF: threads' time, waits, off-CPU stacks,
//! bound, engine counters), `ibench` (the insert benchmark on SQLite: inserts and its own
//! tables), `profiled` (readrandom on RocksDB under perf: profiles and a flame graph), `linkbench` (LinkBench on SQLite: its tables) and
//! `findmax` (a search for the highest rate on the null engine: arrival rates), `ycsb` (YCSB's
//! workload A on RocksDB and LMDB, one run each: the first screen), `tail` (overwrite on
//! RocksDB with writes stopped: the slowest operations and RocksDB's events), `network` (point selects
//! on PostgreSQL over the same-az profile: the network table and bound), in the model's formats, the
//! HTML page and the original tools' formats. Each directory's `.toml` is the experiment that
//! made it. A change to any table's layout or figure is a diff to review (`cargo insta
//! review`, or `INSTA_UPDATE=always` and `git diff`), not something seen only by eye.

use fathom_report::{render, Format, ReportOptions};
use fathom_schema::store::{find_runs, LoadedRun};
use std::path::Path;

/// The dbbench fixture's runs in the order they started, as `fathom report` reads them.
fn runs() -> Vec<LoadedRun> {
    let runs = runs_of("results");
    assert_eq!(runs.len(), 8, "the fixture's runs");
    runs
}

/// The runs of fixture `name`, in the order they started.
fn runs_of(name: &str) -> Vec<LoadedRun> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let mut runs: Vec<LoadedRun> = find_runs(&dir)
        .unwrap()
        .iter()
        .map(|p| LoadedRun::load(p).unwrap())
        .collect();
    runs.sort_by(|a, b| a.manifest.started_at.cmp(&b.manifest.started_at));
    assert!(!runs.is_empty(), "fixture {name} has runs");
    runs
}

/// The report in `format`, the fixture's own path written as `[fixture]`.
fn report(format: &str, opts: &ReportOptions) -> String {
    report_of(&runs(), format, opts)
}

/// The report of `runs` in `format`, the fixtures' path written as `[fixture]`.
fn report_of(runs: &[LoadedRun], format: &str, opts: &ReportOptions) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    render(runs, Format::parse(format).unwrap(), opts)
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

/// The intervals, the legend and every column too, in text.
#[test]
fn text_with_intervals() {
    let opts = ReportOptions {
        intervals: true,
        legend: true,
        columns: fathom_report::options::Columns::All,
        ..ReportOptions::default()
    };
    insta::assert_snapshot!(report("text", &opts));
}

/// The dbbench fixture as a comparison against setup `a`, its HTML page and db_bench's format.
#[test]
fn dbbench_against_a_base_and_as_html_and_db_bench() {
    let mut opts = ReportOptions::default();
    opts.judging.base = Some("a".into());
    insta::assert_snapshot!("dbbench_base_a", report("text", &opts));
    insta::assert_snapshot!("dbbench_html", report("html", &opts));
    insta::assert_snapshot!(
        "dbbench_original",
        report("dbbench", &ReportOptions::default())
    );
}

/// The first screen of a report of two setups with one run each (`tests/fixtures/ycsb`: YCSB's
/// workload A on RocksDB and LMDB): each step's rate, p50 and p99 with units, READ and
/// UPDATE apart, the ratio against the first setup in a sentence that says why there is no
/// verdict, a not-steady mark; within 100 columns.
#[test]
fn the_first_screen_answers_which_is_faster() {
    let runs = runs_of("ycsb");
    let text = report_of(&runs, "text", &ReportOptions::default());
    let screen: String = (text.lines())
        .take_while(|l| !l.starts_with("steps ("))
        .map(|l| format!("{l}\n"))
        .collect();
    for l in screen.lines() {
        assert!(l.chars().count() <= 100, "wider than 100 columns: {l}");
    }
    for part in [
        "p50 µs",
        "p99 µs",
        "  READ",
        "  UPDATE",
        "as fast as",
        "no verdict",
        " ~ ",
    ] {
        assert!(
            screen.contains(part),
            "the first screen lacks `{part}`:\n{screen}"
        );
    }
    insta::assert_snapshot!("ycsb_first_screen", screen);
}

/// Each further fixture in text, HTML and its workload's original format.
#[test]
fn each_kind_of_run() {
    for (fixture, original) in [
        ("server", "sysbench"),
        ("ibench", "text"),
        ("linkbench", "linkbench"),
        ("findmax", "text"),
        ("profiled", "dbbench"),
        ("ycsb", "ycsb"),
        ("tail", "text"),
        ("network", "sysbench"),
    ] {
        let runs = runs_of(fixture);
        let opts = ReportOptions::default();
        for format in ["text", "html"] {
            let name = format!("{fixture}_{format}");
            insta::assert_snapshot!(name, report_of(&runs, format, &opts));
        }
        if original != "text" {
            let name = format!("{fixture}_original");
            insta::assert_snapshot!(name, report_of(&runs, original, &opts));
        }
    }
}
