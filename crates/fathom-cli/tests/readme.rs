//! The README's first benchmark, run as written: the command between its quick-start marks
//! (with `scripts/fathom` as the built binary and the results in a scratch directory) must
//! succeed and print the summary the README shows — its header, READ and UPDATE apart, the
//! ratio in a sentence — so the README cannot drift from what fathom prints.

mod common;
use common::*;
use std::path::Path;

/// The README's text.
fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(path).unwrap()
}

/// The commands of the quick-start block, each as its arguments after `scripts/fathom`.
fn quick_start(readme: &str) -> Vec<Vec<String>> {
    let (begin, end) = ("<!-- quickstart: begin -->", "<!-- quickstart: end -->");
    let from = readme
        .find(begin)
        .expect("README.md has the quick-start begin mark");
    let to = readme
        .find(end)
        .expect("README.md has the quick-start end mark");
    let commands: Vec<Vec<String>> = (readme[from..to].lines())
        .filter_map(|l| l.trim().strip_prefix("scripts/fathom "))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    assert!(
        !commands.is_empty(),
        "the quick-start block has no `scripts/fathom` command"
    );
    commands
}

/// The words of the summary's header in `text` (the line after `summary (...):`).
fn summary_header(text: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("summary ("));
    lines
        .next()
        .unwrap_or_else(|| panic!("no summary in:\n{text}"));
    let header = lines.next().unwrap_or_default();
    header.split_whitespace().map(String::from).collect()
}

#[test]
fn the_readme_first_benchmark_prints_what_the_readme_shows() {
    let readme = readme();
    let dir = scratch();
    let results = dir.path().join("results");
    for args in quick_start(&readme) {
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.extend(["--results", results.to_str().unwrap()]);
        let printed = ok(&fathom(&args));
        assert_holds(
            &printed,
            &[
                "summary (median over repeats):",
                "  READ ",
                "  UPDATE ",
                "× as fast as",
                "p99 µs",
            ],
        );
        assert_eq!(
            summary_header(&printed),
            summary_header(&readme),
            "the README's summary header differs from what fathom prints"
        );
    }
}
