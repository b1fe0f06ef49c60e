//! Engine releases as setups. Two RocksDB releases as two setups of one experiment: the bundled
//! build and Debian's 7.8.3 (`librocksdb7.8`, through its C API), each run three times, then
//! `fathom compare` gives a relative throughput and a verdict per step. A PostgreSQL release
//! that is not Debian's (fetched from Maven by scripts/test.sh) started, run and stopped.

mod common;

use common::*;

const DEBIAN_ROCKSDB: &str = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8";

#[test]
fn two_rocksdb_releases_compare_with_verdicts() {
    let dir = scratch();
    let file = dir.path().join("versions.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "versions"
clients = [1]
repeats = 3
duration = "1s"
order = ["repeat", "setup", "workload", "clients"]

[[setup]]
name = "bundled"
engine = "rocksdb"
settings = {{ cache_type = "lru" }}

[[setup]]
name = "debian"
engine = "rocksdb"
settings = {{ cache_type = "lru", library = "{DEBIAN_ROCKSDB}" }}

[[workload]]
name = "dbbench"
params = {{ num_keys = 20000, steps = "fillseq,readrandom" }}
"#
        ),
    )
    .unwrap();
    let results = dir.path().join("results");
    ok(&fathom_at("run {} --results {}", &[&file, &results]));
    let run = std::fs::read_to_string(results.join("debian.dbbench.c1.r2/run.json")).unwrap();
    assert!(run.contains("\"engine_version\": \"7.8.3\""), "{run}");
    assert!(run.contains(DEBIAN_ROCKSDB), "the run names its library");
    let out = ok(&fathom_at(
        "compare {} --base bundled --format json",
        &[&results],
    ));
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    for step in ["fillseq", "readrandom"] {
        let row = rows
            .iter()
            .find(|r| r["step"] == step && r["new"] == "debian")
            .unwrap_or_else(|| panic!("no {step} row in {out}"));
        assert!(f(&row["ratio"]) > 0.0, "{row}");
        let verdict = row["verdict"].as_str().unwrap();
        assert!(
            ["faster", "slower", "same", "undecided"].contains(&verdict),
            "{step}: {verdict}"
        );
    }
}

/// The PostgreSQL release scripts/test.sh fetches (`FATHOM_TEST_POSTGRES_VERSION` to pick another).
fn fetched_postgres() -> String {
    std::env::var("FATHOM_TEST_POSTGRES_VERSION").unwrap_or_else(|_| "17.6.0".into())
}

#[test]
fn a_fetched_postgres_release_starts_runs_and_stops() {
    let version = fetched_postgres();
    let dir = server_scratch();
    ok(&run(
        &format!(
            "--engine postgres --set version={version} --workload sysbench --clients 2 \
             --duration 1s --param table_size=2000 --param tests=oltp_point_select,oltp_update_index"
        ),
        dir.path(),
    ));
    let left = processes_mentioning(dir.path().to_str().unwrap());
    assert!(left.is_empty(), "still running: {left:?}");
    let runs = report_json(dir.path())["runs"].as_array().unwrap().clone();
    let r = &runs[0];
    let major_minor = version.trim_end_matches(".0");
    assert_eq!(r["engine_version"], major_minor, "the server's own version");
    let record = std::path::Path::new(r["path"].as_str().unwrap()).join("run.json");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
    let effective = record["setup"]["effective"].to_string();
    assert!(
        effective.contains(&format!("postgres/{version}/bin")) && effective.contains("zonky"),
        "the run names the install and where it came from: {effective}"
    );
    for test in ["oltp_point_select", "oltp_update_index"] {
        assert!(f(&step(r, test)["ops"]) > 0.0, "{test}: no events");
    }
    // A release that is not fetched is an error naming the command that fetches it.
    let e = err(&run(
        "--engine postgres --set version=9.0.99 --workload sysbench --duration 1s",
        dir.path(),
    ));
    assert!(e.contains("scripts/fetch-engine.sh postgres 9.0.99"), "{e}");
}
