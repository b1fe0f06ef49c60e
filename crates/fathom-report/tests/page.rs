//! The HTML page as a browser lays it out (headless Chromium, which `scripts/setup.sh --test`
//! installs): for a report of two setups with one run each (`tests/fixtures/ycsb`), the
//! summary ends above the fold of a 1280×800 window, every chart renders, the charts over time
//! come before the step table, and a setup has one colour in every chart.

use fathom_report::{render, Format, ReportOptions};
use fathom_schema::store::{find_runs, LoadedRun};
use std::path::Path;
use std::process::Command;

fn page() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ycsb");
    let runs: Vec<LoadedRun> = (find_runs(&dir).unwrap().iter())
        .map(|p| LoadedRun::load(p).unwrap())
        .collect();
    render(
        &runs,
        Format::parse("html").unwrap(),
        &ReportOptions::default(),
    )
    .unwrap()
}

/// The page's DOM after Chromium loaded it in a 1280×800 window.
fn laid_out(html: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    std::fs::write(&file, html).unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1280,800",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("chromium is installed by scripts/setup.sh --test");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn attr(dom: &str, name: &str) -> i64 {
    let at =
        (dom.find(&format!("{name}=\""))).unwrap_or_else(|| panic!("no {name} in the page's DOM"));
    let rest = &dom[at + name.len() + 2..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

#[test]
fn the_summary_is_above_the_fold_and_the_charts_follow_it() {
    let html = page();
    let dom = laid_out(&html);
    let bottom = attr(&dom, "data-summary-bottom");
    assert!(
        bottom > 0 && bottom <= 800,
        "the summary ends at {bottom} px, below the fold"
    );
    let (total, rendered) = (
        attr(&dom, "data-charts-total"),
        attr(&dom, "data-charts-rendered"),
    );
    assert!(total >= 4, "only {total} charts");
    assert_eq!(rendered, total, "charts that did not render");
    let over_time = html.find("<h2>Over time</h2>").expect("charts over time");
    assert!(
        over_time < html.find("<h2>Steps</h2>").unwrap(),
        "the charts follow the summary"
    );
    assert!(html.find("class=\"headline\"").unwrap() < html.find("id=\"summary\"").unwrap());
    // RocksDB, the first setup, is the first colour wherever it is drawn (its legend's box).
    let rocksdb_boxes: Vec<&str> = (html.split("<rect").skip(1))
        .filter(|r| r.contains(">rocksdb</text>"))
        .map(|r| &r[r.find("fill=\"").unwrap() + 6..][..7])
        .collect();
    assert!(rocksdb_boxes.len() >= 4, "{rocksdb_boxes:?}");
    assert!(
        rocksdb_boxes.iter().all(|c| *c == rocksdb_boxes[0]),
        "{rocksdb_boxes:?}"
    );
}
