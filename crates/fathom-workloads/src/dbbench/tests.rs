//! Unit tests of the db_bench sequence: its steps, their order and parameters, as
//! benchmark_compare.sh runs them.

use super::*;

/// benchmark_compare.sh's order (docs/workloads.md §4.1), written out here rather than read
/// from the constant the code uses.
const BENCHMARK_COMPARE: &str = "fillseq revrange readrandom fwdrange multireadrandom \
     overwritesome flush revrangewhilewriting fwdrangewhilewriting readwhilewriting \
     overwriteandwait";

fn benchmark_compare() -> Vec<&'static str> {
    BENCHMARK_COMPARE.split_whitespace().collect()
}

fn steps(args: &[&str], clients: usize) -> anyhow::Result<Vec<StepPlan>> {
    Ok(crate::testing::build_from(build, args, clients)?
        .steps()
        .to_vec())
}

#[test]
fn the_full_sequence_in_benchmark_compare_order() {
    let s = steps(&[], 4).unwrap();
    let names: Vec<_> = s.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, benchmark_compare());
    assert_eq!(s[0].clients, 1);
    assert_eq!(s[0].ops_per_client, Some(1_000_000));
    assert_eq!(s[1].clients, 1, "revrange warm-up is single-threaded");
    assert_eq!((s[4].name.as_str(), s[4].clients), ("multireadrandom", 4));
    assert_eq!(
        s[5].ops_per_client,
        Some(25_000),
        "overwritesome: num_keys / clients / 10"
    );
    assert_eq!(s[6].clients, 0);
    // benchmark.sh's flush_mt_l0: flush, wait, compact L0, wait.
    assert_eq!(
        s[6].after,
        [
            Maintenance::Flush,
            Maintenance::WaitForCompaction,
            Maintenance::CompactLevel0,
            Maintenance::WaitForCompaction
        ]
    );
    assert_eq!(s[7].background, Some(Pace::BytesPerSec(2.0 * 1048576.0)));
    assert_eq!(s[10].after, vec![Maintenance::WaitForCompaction]);
    // A db_bench process per step: every step after the first opens the database afresh.
    assert!(!s[0].reopen && s[1..].iter().all(|p| p.reopen));
    let one_open = steps(&["reopen=off"], 4).unwrap();
    assert!(one_open.iter().all(|p| !p.reopen));
    // fillseq alone loads through a vector memtable on RocksDB, as benchmark.sh's does;
    // not when one open database serves the whole sequence.
    assert_eq!(
        s[0].options_for(Syntax::RocksDb),
        Some("memtable_factory=vector;allow_concurrent_memtable_write=false")
    );
    assert_eq!(
        s[0].options_for(Syntax::WiredTiger),
        None,
        "RocksDB's alone"
    );
    assert!(s[1..].iter().all(|p| p.engine_options.is_empty()));
    assert!(one_open[0].engine_options.is_empty());
    let none = steps(&["fillseq_rocksdb_options="], 4).unwrap();
    assert!(none[0].engine_options.is_empty());
}

#[test]
fn under_universal_compaction_the_sequence_skips_the_waits() {
    let s = steps(&["sequence=universal"], 2).unwrap();
    let names: Vec<_> = s.iter().map(|p| p.name.as_str()).collect();
    // flush_mt_l0 skipped, overwrite without the wait.
    let universal: Vec<&str> = benchmark_compare()
        .into_iter()
        .filter(|s| *s != "flush")
        .map(|s| {
            if s == "overwriteandwait" {
                "overwrite"
            } else {
                s
            }
        })
        .collect();
    assert_eq!(names, universal);
    let last = s.last().unwrap();
    assert_eq!((last.name.as_str(), last.after.len()), ("overwrite", 0));
    assert!(last.duration.is_some());
    let e = steps(&["sequence=tiered"], 2).unwrap_err().to_string();
    assert!(
        e.contains("`sequence`") && e.contains("tiered") && e.contains("universal"),
        "{e}"
    );
}

#[test]
fn revrange_seeks_among_a_hundred_keys_as_benchmark_compare_runs_it() {
    let space = |args: &[&str]| {
        let p = crate::testing::params(args).unwrap();
        let d = sequence(&p, 2).unwrap();
        d.steps.works().map(|s| s.key_space).collect::<Vec<_>>()
    };
    assert_eq!(space(&["steps=revrange,readrandom"]), [100, 1_000_000]);
    assert_eq!(space(&["steps=revrange", "revrange_keys=0"]), [1_000_000]);
    assert_eq!(space(&["steps=revrange", "num_keys=50"]), [50]);
}

#[test]
fn subsets_and_bad_parameters() {
    // In the order given, as db_bench runs --benchmarks.
    let s = steps(&["steps=readrandom,fillseq"], 2).unwrap();
    assert_eq!(
        s.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["readrandom", "fillseq"]
    );
    // `all` stands for the whole sequence in its place.
    let s = steps(&["steps=readrandom,all"], 2).unwrap();
    assert_eq!(
        (s.len(), s[0].name.as_str(), s[1].name.as_str()),
        (12, "readrandom", "fillseq")
    );
    let e = steps(&["steps=readrandmo"], 2).unwrap_err().to_string();
    assert!(
        e.contains("`readrandmo` is not all, fillseq, revrange"),
        "{e}"
    );
    let e = steps(&["steps="], 2).unwrap_err().to_string();
    assert!(e.contains("no steps given"), "{e}");
    assert!(steps(&["duration=forever"], 2)
        .unwrap_err()
        .to_string()
        .contains("not a duration"));
    assert!(steps(&["key_size=4"], 2)
        .unwrap_err()
        .to_string()
        .contains("too small"));
}
