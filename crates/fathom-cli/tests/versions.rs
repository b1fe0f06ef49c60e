//! Two RocksDB releases as two setups of one experiment: the bundled build and Debian's 7.8.3
//! (`librocksdb7.8`, through its C API), each run three times, then `fathom compare` gives a
//! relative throughput and a verdict per step.

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
    let results_arg = results.to_str().unwrap();
    ok(&fathom(&[
        "run",
        file.to_str().unwrap(),
        "--results",
        results_arg,
    ]));
    let run = std::fs::read_to_string(results.join("debian.dbbench.c1.r2/run.json")).unwrap();
    assert!(run.contains("\"engine_version\": \"7.8.3\""), "{run}");
    assert!(run.contains(DEBIAN_ROCKSDB), "the run names its library");
    let out = ok(&fathom(&[
        "compare",
        results_arg,
        "--base",
        "bundled",
        "--format",
        "json",
    ]));
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
            ["faster", "slower", "within_noise"].contains(&verdict),
            "{step}: {verdict}"
        );
    }
}
