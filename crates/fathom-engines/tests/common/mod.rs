//! What both conformance suites share: the check that every engine of a family has its line.

use fathom_api::family::Family;
use fathom_engines::ENGINES;

/// Asserts that `source` (a suite's own text) has a `MACRO!(name` line for every engine of
/// `family` in the registry but those in `skip`: a line of code, not a comment. The macro is
/// named after its family's suite (`conformance!`, `sql_conformance!`).
pub fn every_engine_has_its_line(source: &str, family: Family, skip: &[&str]) {
    let macro_name = match family {
        Family::Kv => "conformance",
        Family::Sql => "sql_conformance",
        other => panic!("no conformance suite for the {other:?} family"),
    };
    let lines: Vec<&str> = source
        .lines()
        .map(str::trim_start)
        .filter(|l| !l.starts_with("//"))
        .collect();
    for e in ENGINES
        .iter()
        .filter(|e| e.family() == family && !skip.contains(&e.name))
    {
        let line = format!("{macro_name}!({}", e.name.replace('-', "_"));
        assert!(
            lines.iter().any(|l| l.starts_with(&line)),
            "engine {} has no {line} line",
            e.name
        );
    }
}
