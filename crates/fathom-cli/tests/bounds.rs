//! What bounded each step, end to end on constructed cases whose bound is known: RocksDB's
//! cached random reads are bound by the engine's CPU; the same reads with O_DIRECT and a
//! 1 MiB block cache, on a device held to 2,000 reads a second, by the device; RocksDB writes
//! with a sync each, on a device held to 1,000 writes a second, by commits; four clients of the
//! null engine whose operations hold one mutex by locks; a paced step meets its offered load.
//! Each with `--waits`, read from the report's JSON table; the lock case also with
//! `--waits=bpf-stacks`, whose verdict names the stack the clients waited in.
//!
//! Why the device is held back (a device profile, `--device`: a cgroup's block IO throttle, as
//! root): this VM's virtio disk,
//! cached by its host, answers a 4 KiB read in about 30 µs, while submitting it costs the
//! reading thread about as much CPU (the virtio notify traps to the host: `iowrite16` is half
//! of such a step's profile), so unthrottled O_DIRECT reads read "device and engine cpu" here
//! — true of this VM, and not the case the test is for.

mod common;

use common::*;
use serde_json::Value;

/// One case at a time: two at once on a 2-core host disturb each other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `args` with `--waits` and returns the bound row of `step`.
fn bound_of(args: &str, step: &str) -> serde_json::Map<String, Value> {
    bound_with(args, "--waits", step).0
}

/// Runs `args` with `waits` (`--waits`, `--waits=bpf-stacks`) and returns the bound row of
/// `step` and the results (in their scratch directory).
fn bound_with(
    args: &str,
    waits: &str,
    step: &str,
) -> (serde_json::Map<String, Value>, tempfile::TempDir) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch();
    let results = dir.path().join("results");
    ok(&run(&format!("{args} {waits}"), &results));
    let row = table_row(&report_json(&results), "bound", step);
    println!("{step}: {row:?}");
    (row, dir)
}

/// Runs `args` with `--waits` under a device profile holding the scratch directory's disk to
/// `read_iops` reads and `write_iops` writes a second (`--device`, as root), and returns the
/// bound row of `step`.
fn bound_on_a_slow_device(
    args: &str,
    step: &str,
    (read_iops, write_iops): (u32, u32),
) -> serde_json::Map<String, Value> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch();
    let results = dir.path().join("results");
    let profile = dir.path().join("slow.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"slow\"\nread_iops = {read_iops}\nwrite_iops = {write_iops}\n\
             read_mibps = 1000\nwrite_mibps = 1000\n"
        ),
    )
    .unwrap();
    let device = format!("--device {}", profile.display());
    ok(&run(&format!("{args} {device} --waits"), &results));
    let row = table_row(&report_json(&results), "bound", step);
    println!("{step}: {row:?}");
    row
}

/// The step was bound by `bound`, for a reason starting `why`. Where other processes took
/// enough of the host's CPU that the clients waited for it (a sibling test, a VM's neighbours),
/// that is the verdict, and a true one: then the report must name the interference, and
/// `bound` must still be among the shares of the clients' time. Whether the verdict was `bound`
/// (what else the caller checks of it), or the interference.
fn assert_bound(row: &serde_json::Map<String, Value>, bound: &str, why: &str) -> bool {
    let q = row["why"].as_str().unwrap();
    if row["bound"] == "waiting for a cpu" && q.starts_with("interference:") {
        let shares = row["shares"].as_str().unwrap();
        assert!(
            shares.contains(&format!("{bound} ")),
            "interfered with, and `{bound}` is not among the shares: {row:?}"
        );
        assert_confident(row);
        return false;
    }
    assert_eq!(row["bound"], bound, "{row:?}");
    assert!(
        q.starts_with(why),
        "why `{q}` does not start with `{why}`: {row:?}"
    );
    assert_confident(row);
    true
}

/// High confidence where the host was quiet; where it was not (a VM host's steal, a sibling
/// process), the confidence may read lower, but then the report must say what disturbed it.
fn assert_confident(row: &serde_json::Map<String, Value>) {
    let c = row["confidence"].as_str().unwrap();
    assert!(
        c.starts_with("high") || c.contains("disturbed: "),
        "confidence `{c}` neither high nor naming a disturbance: {row:?}"
    );
}

#[test]
fn cached_reads_are_bound_by_the_engines_cpu() {
    let row = bound_of(
        "--engine rocksdb --workload dbbench --param num_keys=100000 \
         --param steps=fillseq,readrandom --duration 3s --clients 1",
        "readrandom",
    );
    assert_eq!(row["judged"], "clients");
    // One client on a 2-core host leaves a core idle: not saturated.
    assert_bound(&row, "engine cpu", "latency-bound: host CPU");
}

#[test]
fn direct_reads_past_a_small_cache_are_bound_by_the_device() {
    if !needs_root("direct_reads_past_a_small_cache_are_bound_by_the_device") {
        return;
    }
    let row = bound_on_a_slow_device(
        "--engine rocksdb --set o_direct=reads --set cache_size=1m --workload dbbench \
         --param num_keys=200000 --param steps=fillseq,flush,readrandom --duration 3s \
         --clients 1",
        "readrandom",
        (2000, 100_000),
    );
    if assert_bound(&row, "device", "") {
        let why = row["why"].as_str().unwrap();
        assert!(why.contains("reads/s at queue depth"), "{row:?}");
    }
}

#[test]
fn writes_with_a_sync_each_are_bound_by_commits() {
    if !needs_root("writes_with_a_sync_each_are_bound_by_commits") {
        return;
    }
    let row = bound_on_a_slow_device(
        "--engine rocksdb --set sync=true --workload dbbench --param num_keys=20000 \
         --param steps=fillseq,overwrite --duration 3s --clients 1",
        "overwrite",
        (100_000, 1000),
    );
    if assert_bound(&row, "commits", "") {
        assert!(row["why"].as_str().unwrap().contains("/s"), "{row:?}");
    }
}

#[test]
fn clients_contending_on_one_mutex_are_bound_by_locks() {
    let row = bound_of(
        "--engine null --setup lock=50us --workload dbbench --clients 4 \
         --param num_keys=1000 --param steps=readrandom --duration 3s --no-calibrate",
        "readrandom",
    );
    assert_bound(&row, "locks", "latency-bound: clients wait on each other");
}

/// Timed exactly by the eBPF program, with stacks (as root): the same verdict, the clients'
/// waiting stack named, its folded stacks beside the step.
#[test]
fn a_lock_bound_names_the_waiting_stack_with_bpf() {
    if !needs_root("a_lock_bound_names_the_waiting_stack_with_bpf") {
        return;
    }
    let (row, dir) = bound_with(
        "--engine null --setup lock=50us --workload dbbench --clients 4 \
         --param num_keys=1000 --param steps=readrandom --duration 3s --no-calibrate",
        "--waits=bpf-stacks",
        "readrandom",
    );
    if assert_bound(&row, "locks", "latency-bound: clients wait on each other") {
        let at = row["where"].as_str().unwrap();
        assert!(
            at.contains("waiting in fathom: ") && at.contains("[kernel: futex"),
            "{at}"
        );
    }
    let results = dir.path().join("results");
    let run = results.join(&run_dirs(&results)[0]);
    let text = std::fs::read_to_string(run.join("steps/01-readrandom.json")).unwrap();
    let step: Value = serde_json::from_str(&text).unwrap();
    let waits = &step["waits"];
    assert_eq!(waits["method"], "bpf-stacks", "{waits}");
    assert_eq!(waits["clients"]["exact"], true, "{waits}");
    let folded = std::fs::read_to_string(run.join(waits["stacks"].as_str().unwrap())).unwrap();
    assert!(
        folded
            .lines()
            .any(|l| l.starts_with("clients;futex;fathom;")),
        "{folded}"
    );
}

#[test]
fn a_paced_step_met_its_offered_load() {
    let row = bound_of(
        "--engine null --workload dbbench --param num_keys=1000 --param steps=readrandom \
         --duration 3s --rate 500 --arrivals uniform --no-calibrate",
        "readrandom",
    );
    assert_bound(&row, "paced", "the offered load was met");
}
