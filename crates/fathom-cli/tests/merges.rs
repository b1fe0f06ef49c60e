//! `fathom merge` over every step the workloads run by default, on real engines: a run merged
//! with itself (two hosts with an embedded engine each, as far as the merge can tell) has
//! twice each step's operations and the very same latencies, db_bench's MultiGet (timed once,
//! 10 operations) among them, and as shards twice the database's size.

mod common;

use common::*;

/// Runs `args`, merges the run with itself, and checks every step of it.
fn every_step_adds_up(args: &str) -> Value {
    let (dir, results, _) = run_ok(args);
    let one = results.join(&run_dirs(&results)[0]);
    let merged = dir.path().join("merged");
    merge_with_itself(&one, &merged);
    let (a, m) = (report_json(&one), report_json(&merged));
    let steps = a["runs"][0]["steps"].as_array().unwrap();
    assert!(steps.len() >= 3, "{args}: {steps:?}");
    for s in steps {
        let name = s["step"].as_str().unwrap();
        let t = step(&m["runs"][0], name);
        assert_eq!(f(&t["ops"]), 2.0 * f(&s["ops"]), "{args}: {name}");
        assert_eq!(t["latency_us"], s["latency_us"], "{args}: {name}");
        let gb = |x: &Value| f(&x["db_gb"]["allocated"]);
        assert!(
            (gb(t) - 2.0 * gb(s)).abs() < 1e-9,
            "{args}: {name} shards' sizes add up"
        );
        for (kind, o) in s["by_op"].as_object().unwrap() {
            let merged = &t["by_op"][kind];
            assert_eq!(f(&merged["ops"]), 2.0 * f(&o["ops"]), "{name} {kind}");
            if let Some(timed) = o["timed"].as_f64() {
                assert_eq!(f(&merged["timed"]), 2.0 * timed, "{name} {kind}");
            }
        }
    }
    let manifest = std::fs::read_to_string(merged.join("run.json")).unwrap();
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["merged"]["topology"], "shards", "{manifest}");
    a
}

#[test]
fn every_step_of_the_default_sequences_merges() {
    let a = every_step_adds_up(
        "--engine rocksdb --workload dbbench --param num_keys=20000 --duration 300ms",
    );
    // db_bench's MultiGet: ten operations a call, one timing.
    let multi = &step(&a["runs"][0], "multireadrandom")["by_op"];
    let (_, o) = multi.as_object().unwrap().iter().next().unwrap();
    assert_eq!(f(&o["ops"]), 10.0 * f(&o["timed"]), "{multi}");
    every_step_adds_up(
        "--engine sqlite-sql --workload ibench --duration 1s --param rows=2000 \
         --param write_rows=500 --param settle=0s",
    );
    every_step_adds_up(
        "--engine sqlite-sql --workload linkbench --param maxid1=2001 --param duration=1s",
    );
}
