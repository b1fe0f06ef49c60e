use super::*;
use crate::testing::{assert_refused, build_from, drive, scratch};
use fathom_api::family::Engine;

fn on_lmdb(pairs: &[&str], clients: usize) -> Vec<Vec<usize>> {
    let w = build_from(build, pairs, clients).unwrap();
    let (_dir, engine) = scratch("lmdb", &[]);
    let Engine::Kv(kv) = &engine else {
        panic!("lmdb is a kv engine")
    };
    drive(w.as_ref(), Db::Kv(kv.as_ref()), 100)
}

#[test]
fn workload_a_loads_every_record_then_reads_and_updates_half_and_half() {
    let counts = on_lmdb(&["file=ycsb/workloada", "records=500", "seed=7"], 2);
    assert_eq!(counts[0], vec![500], "the load inserts every record once");
    let (reads, updates) = (counts[1][0], counts[1][1]);
    assert_eq!(
        reads + updates,
        1000,
        "the file's operationcount, over both clients"
    );
    assert!((430..570).contains(&reads), "{reads} reads of 1000");
}

#[test]
fn workload_e_scans_and_inserts_past_the_loaded_records() {
    let counts = on_lmdb(
        &[
            "file=ycsb/workloade",
            "records=300",
            "operations=400",
            "seed=3",
        ],
        1,
    );
    assert_eq!(counts[0], vec![300]);
    // The step lists its kinds in YCSB's order: inserts before scans.
    let (inserts, scans) = (counts[1][0], counts[1][1]);
    assert_eq!(scans + inserts, 400);
    assert!(
        inserts > 5 && scans > 300,
        "{scans} scans, {inserts} inserts"
    );
}

#[test]
fn a_step_can_run_alone_and_counts_can_be_overridden() {
    let w = build_from(
        build,
        &["file=ycsb/workloadc", "steps=run", "duration=5s"],
        1,
    )
    .unwrap();
    let plans = w.steps();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].name, "run");
    assert_eq!(plans[0].duration, Some(Duration::from_secs(5)));
}

#[test]
fn bad_parameters_are_refused() {
    assert_refused(
        build,
        &[
            (&[], "the workload file (--workload FILE) is missing"),
            (
                &["file=ycsb/workloada", "steps=warm"],
                "has no step `warm`; it has load, run",
            ),
            (
                &["file=/nonexistent/w.toml"],
                "workload file /nonexistent/w.toml",
            ),
        ],
    );
}
