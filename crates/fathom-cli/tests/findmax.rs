//! `fathom findmax` end to end: on the null engine with a simulated server of known capacity
//! it finds the rate where the target breaks within 5%; on InnoDB it reports a curve of probes;
//! a bad target is refused before anything runs.

mod common;
use common::*;
use std::path::Path;

/// A workload file of point reads for a time, no load (the null engine keeps nothing).
fn reads_for(dir: &Path, duration: &str) -> String {
    let file = dir.join("reads.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"reads\"\nabout = \"point reads\"\n[data]\nrecords = 1000\n\
             [[phase]]\nname = \"run\"\nduration = \"{duration}\"\n[phase.mix]\nread = 1\n"
        ),
    )
    .unwrap();
    file.display().to_string()
}

/// Every step summary of the one run under `results`, in order.
fn summaries(results: &Path) -> Vec<Value> {
    let runs = run_dirs(results);
    let steps = results.join(&runs[0]).join("steps");
    let mut files: Vec<_> = std::fs::read_dir(steps)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// The tests of this file one at a time: a probe beside another test's server misses for want
/// of a CPU.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// One simulated server serving an operation in 5 ms can do 200 a second: with evenly spaced
/// arrivals the p99 stays near 5 ms below that and grows without bound above it, so the
/// highest rate meeting p99 <= 25 ms is within 5% of 200. (A service time this long keeps the
/// VM's wake-up lateness, tens to hundreds of µs, small beside it.)
#[test]
fn on_a_server_of_known_capacity_it_finds_the_rate_within_5_percent() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch();
    let file = reads_for(dir.path(), "3s");
    let results = dir.path().join("results");
    let out = ok(&fathom(&[
        "findmax",
        "--target",
        "p99<=25ms",
        "--engine",
        "null",
        "--setup",
        "latency=5ms",
        "--workload",
        &file,
        "--clients",
        "4",
        "--arrivals",
        "uniform",
        "--no-calibrate",
        "--results",
        results.to_str().unwrap(),
    ]));
    let steps = summaries(&results);
    let capacity = steps
        .iter()
        .find(|s| s["step"] == "run@max")
        .expect("closed-loop probe");
    let c = f(&capacity["ops_per_sec"]);
    assert!((180.0..210.0).contains(&c), "capacity {c}");
    // The search's probes (those of the confirmation carry a phase).
    let searched = |s: &&Value| s["probe"].is_object() && s["probe"]["phase"].is_null();
    let met: Vec<f64> = steps
        .iter()
        .filter(searched)
        .filter(|s| s["probe"]["met"] == true)
        .map(|s| f(&s["probe"]["rate"]))
        .collect();
    let highest = met.iter().cloned().fold(0.0, f64::max);
    assert!(
        (190.0..=210.0).contains(&highest),
        "highest rate met {highest}: {out}"
    );
    // The search narrowed down: a rate above it missed, within 2%.
    let missed = steps
        .iter()
        .filter(searched)
        .filter(|s| s["probe"]["met"] == false && s["probe"]["rate"].is_number())
        .map(|s| f(&s["probe"]["rate"]))
        .filter(|r| *r > highest)
        .fold(f64::MAX, f64::min);
    assert!(missed / highest <= 1.021, "{highest} met, {missed} missed");
    // Then confirmed: a settling probe and three that all met with room, at that rate or a
    // step lower; the report names the confirmed rate.
    let confirmed: Vec<&Value> = steps
        .iter()
        .filter(|s| s["probe"]["phase"] == "confirm")
        .collect();
    assert!(confirmed.len() >= 3, "{out}");
    assert!(
        steps.iter().any(|s| s["probe"]["phase"] == "settle"),
        "{out}"
    );
    let rate = f(&confirmed.last().unwrap()["probe"]["rate"]);
    assert!(
        rate <= highest && rate >= 0.8 * highest,
        "{rate} against {highest}"
    );
    assert!(
        out.contains(&format!(
            "highest rate meeting p99<=25ms: {} ops/s, confirmed by 3 probes in a row",
            fathom_schema::table::num(rate)
        )),
        "{out}"
    );
}

#[test]
fn a_bad_target_is_refused_before_anything_runs() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch();
    let file = reads_for(dir.path(), "1s");
    let results = dir.path().join("never");
    let e = err(&fathom(&[
        "findmax",
        "--target",
        "p98<=5ms",
        "--engine",
        "null",
        "--workload",
        &file,
        "--results",
        results.to_str().unwrap(),
    ]));
    assert!(e.contains("--find-max") && e.contains("p98"), "{e}");
    assert!(!results.exists());
    let e = err(&fathom(&[
        "findmax",
        "--target",
        "UPDATE:p99<=5ms",
        "--engine",
        "null",
        "--workload",
        &file,
        "--no-calibrate",
        "--results",
        results.to_str().unwrap(),
    ]));
    assert!(e.contains("UPDATE") && e.contains("READ"), "{e}");
}

/// On a real server the search reports its probes as a curve: every probe a step, rates rising
/// to where p99 passes the target.
#[test]
fn on_innodb_it_reports_a_curve() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = server_scratch();
    let out = ok(&run(
        "--engine innodb --workload ycsb/workloadb --clients 2 --param records=2000 \
         --duration 1s --find-max p99<=2ms --no-calibrate",
        dir.path(),
    ));
    no_server_left(dir.path());
    let steps = summaries(dir.path());
    assert_eq!(steps[0]["step"], "load");
    let probes: Vec<&Value> = steps.iter().filter(|s| s["probe"].is_object()).collect();
    assert!(probes.len() >= 3, "{out}");
    assert!(out.contains("findmax run"), "{out}");
    assert!(out.contains("p99.9"), "{out}");
}
