//! A server's log of every statement (`statement_log=true`) as the slowest operations' work,
//! end to end: counts over ranges of random length (`cases/long-ranges`) name the buffers they
//! hit on PostgreSQL (auto_explain) and the rows they examined on MariaDB (its slow log).

mod common;

use common::*;
use serde_json::Value;

/// A server's log of statements (`statement_log=true`) gives the slowest operations their work:
/// counts over ranges of exponentially drawn lengths (`cases/long-ranges`) were slowest when
/// their ranges were longest, and the slowest did `name` many times over what the counts of
/// the same statement just before them did, which the section names first.
fn slow_ranges_did_more(engine: &str, name: &str) {
    let dir = server_scratch();
    let results = dir.path().join("results");
    ok(&fathom(&[
        "run",
        "--engine",
        engine,
        "--workload",
        "cases/long-ranges",
        "--set",
        "statement_log=true",
        "--clients",
        "2",
        "--duration",
        "4s",
        "--results",
        results.to_str().unwrap(),
    ]));
    let report = report_json(&results);
    let tail = &step(&report["runs"][0], "count")["tail"];
    let c = (tail["work"].as_array().unwrap().iter())
        .position(|w| w == name)
        .unwrap_or_else(|| panic!("no {name}: {tail}"));
    let slowest = tail["slowest"].as_array().unwrap();
    let joined: Vec<&Value> = slowest
        .iter()
        .filter(|o| o["work"][c].is_object())
        .collect();
    assert!(joined.len() * 4 >= slowest.len() * 3, "few joined: {tail}");
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let did = median(joined.iter().map(|o| f(&o["work"][c]["n"])).collect());
    let beside = median(joined.iter().map(|o| f(&o["work"][c]["median"])).collect());
    assert!(
        did >= 3.0 * beside.max(1.0),
        "{did} {name} against {beside}: {tail}"
    );
    let row = table_row(&report, "count: the slowest operations, ms", "count");
    assert_eq!(row["cause"], format!("more {name}"), "{row:?}");
}

/// PostgreSQL: auto_explain's buffers, per statement.
#[test]
fn postgres_statement_log_names_the_buffers_the_slowest_counts_hit() {
    slow_ranges_did_more("postgres", "buffers hit");
}

/// MariaDB with InnoDB: its slow log's rows examined, per statement.
#[test]
fn mariadb_slow_log_names_the_rows_the_slowest_counts_examined() {
    slow_ranges_did_more("innodb", "rows examined");
}
