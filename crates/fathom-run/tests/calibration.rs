//! The calibration contract, tested for every workload: before each step, fathom measures its
//! own CPU per operation by driving the step's first client on the null engine, which stores
//! nothing — every read finds nothing, every scan is empty, every transaction commits — with
//! no helper or background thread beside it. Every step of every workload (and of every bundled
//! workload file), on each family it runs on, must run there without an error; a workload that
//! needs its helpers or its data to make progress says so by yielding no client, not by failing,
//! and one that waits stops waiting when the calibration's budget ends.

use fathom_api::stop::Stop;
use fathom_engines::null::Null;
use fathom_workloads::params::Params;
use fathom_workloads::WORKLOADS;
use std::collections::BTreeMap;

/// Parameters that keep each workload small (the defaults build what a real run loads).
fn small(workload: &str) -> Vec<Vec<(&'static str, String)>> {
    let one = |pairs: &[(&'static str, &str)]| {
        vec![pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()]
    };
    match workload {
        "dbbench" => one(&[("num_keys", "2000")]),
        "sysbench" => one(&[("table_size", "1000")]),
        "ibench" => one(&[("rows", "2000")]),
        "linkbench" => one(&[("maxid1", "2000")]),
        "tpcc" => one(&[("warehouses", "1")]),
        "declared" => fathom_workloads::declared::file::BUNDLED
            .iter()
            .map(|(name, _)| vec![("file", name.to_string())])
            .collect(),
        other => panic!("{other}: say here which parameters keep it small"),
    }
}

#[test]
fn every_step_of_every_workload_runs_its_calibration_on_the_null_engine() {
    let dir = tempfile::tempdir().unwrap();
    let null = Null::new(dir.path().join("null"));
    let stop = Stop::new();
    let mut tried = 0;
    for entry in WORKLOADS {
        for params in small(entry.name) {
            let given: BTreeMap<String, String> = params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
            let what = format!("{} {given:?}", entry.name);
            let workload = (entry.build)(&Params::new(given), 2)
                .unwrap_or_else(|e| panic!("{what}: build: {e:#}"));
            for &family in entry.families {
                if workload.refuses(family).is_some() {
                    continue;
                }
                let db = null.db(family).unwrap();
                for (i, plan) in workload.steps().iter().enumerate() {
                    if plan.clients == 0 {
                        continue;
                    }
                    let t0 = std::time::Instant::now();
                    let at = format!("{what} on {family:?}, step {i} ({})", plan.name);
                    fathom_run::calibrate(workload.as_ref(), (db, None), i, plan, &stop)
                        .unwrap_or_else(|e| panic!("{at}: calibration: {e:#}"));
                    tried += 1;
                    // The budget is 200 ms; construction and one operation beyond it take
                    // far less than this (a settle wait of 60 s once took all of it).
                    assert!(
                        t0.elapsed().as_secs() < 10,
                        "{at}: calibration took {:?}",
                        t0.elapsed()
                    );
                }
            }
        }
    }
    assert!(tried > 50, "only {tried} steps calibrated");
}
