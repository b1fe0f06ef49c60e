//! Why the slowest operations were slow, end to end on RocksDB: a constructed write stop
//! (level 0 held to three files, one background job) names the stop for the slow puts by the
//! time they spent inside it, from RocksDB's own LOG; a cached read step beside no write names
//! no cause; every step keeps its slowest operations per kind on the wall clock, inside its
//! window; scans over deleted records name the tombstones they skipped (RocksDB's perf
//! context); with `--waits=bpf` (root), reads past a 1 MiB cache on a throttled device slept
//! in the device for most of their time, and reads of more clients than cores waited for a CPU;
//! with `--waits=bpf-stacks`, synced puts' futex waits are placed in RocksDB's write group;
//! WiredTiger's session statistics tell slow reads of pages from the disk from slow puts
//! waiting for cache room; WiredTiger's and PostgreSQL's checkpoints come from their own logs;
//! a row lock another session holds is named for the slowest updates, from PostgreSQL's log of
//! lock waits and from InnoDB's views (MariaDB logs none). A server's log of statements is
//! tested in `statement_log.rs`.

mod common;

use common::*;
use serde_json::Value;

/// The options that make RocksDB stop writes for want of compaction.
const STOPPING: &str = "write_buffer_size=1m;level0_slowdown_writes_trigger=2;\
                        level0_stop_writes_trigger=3;max_background_jobs=1";

/// The slowest gets of readrandom in `results` (`--waits=bpf`) spent at least half their time
/// in waits of `kind`, which the section's `waited in` names first.
fn mostly_waited_in(results: &std::path::Path, kind: &str) {
    let report = report_json(results);
    let tail = &step(&report["runs"][0], "readrandom")["tail"];
    assert_eq!(tail["sleeps_timed"], true, "{tail}");
    let slowest = tail["slowest"].as_array().unwrap();
    let waited: f64 = (slowest.iter())
        .flat_map(|op| op["asleep"].as_array().cloned().unwrap_or_default())
        .filter(|a| a["kind"] == kind)
        .map(|a| f(&a["us"]))
        .sum();
    let total: f64 = slowest.iter().map(|op| f(&op["latency_us"])).sum();
    assert!(
        waited >= 0.5 * total,
        "{waited} of {total} µs in {kind}: {tail}"
    );
    let row = table_row(&report, "readrandom: the slowest operations, ms", "get");
    let first = row["waited in"].as_str().unwrap();
    assert!(first.starts_with(&format!("{kind} ")), "{row:?}");
}

/// The step's checkpoints (its `tail.events`), each overlapping the measured window.
fn checkpoints_in_window(tail: &Value) -> usize {
    assert_eq!(tail["engine_tells"], true, "{tail}");
    let (from, to) = (f(&tail["window_us"][0]), f(&tail["window_us"][1]));
    let checkpoints: Vec<&Value> = (tail["events"].as_array().unwrap().iter())
        .filter(|e| e["what"] == "checkpoint")
        .collect();
    // Each overlaps the window; one still going when it closed may have ended by the time the
    // log was read (a CI run: 0.6 s after), which is on the same clock.
    for c in &checkpoints {
        assert!(
            f(&c["end_us"]) >= from && f(&c["start_us"]) <= to && f(&c["end_us"]) <= to + 60e6,
            "{c} outside the window {from}..{to}"
        );
    }
    checkpoints.len()
}

#[test]
fn a_write_stop_is_named_for_the_slowest_puts() {
    let (_dir, results, _) = run_ok(&format!(
        "--engine rocksdb --workload dbbench --param steps=fillseq,overwrite \
         --param num_keys=200000 --clients 2 --duration 4s --setup {STOPPING}"
    ));
    let report = report_json(&results);
    let run = &report["runs"][0];
    let tail = &step(run, "overwrite")["tail"];
    assert_eq!(tail["engine_tells"], true);
    let slowest = tail["slowest"].as_array().unwrap();
    assert_eq!(slowest.len(), 16, "16 puts kept: {tail}");
    let (from, to) = (f(&tail["window_us"][0]), f(&tail["window_us"][1]));
    for op in slowest {
        assert_eq!(op["kind"], "put");
        let start = f(&op["start_us"]);
        assert!(
            start >= from - 1e6 && start <= to,
            "{op} outside {from}..{to}"
        );
    }
    let stops = tail["events"].as_array().unwrap();
    assert!(
        stops.iter().any(|e| e["what"] == "write stop"),
        "RocksDB's LOG gave no write stop: {tail}"
    );
    let row = table_row(&report, "overwrite: the slowest operations, ms", "put");
    assert_eq!(row["cause"], "write stop", "{row:?}");
    // Named by its mechanism: the writes spent most of their time inside the stop (high from
    // 80%, as it reads on a quiet host; a busy one may slow a write outside it).
    assert_ne!(row["confidence"], "-", "{row:?}");
    assert!(f(&row["time%"]) >= 50.0, "{row:?}");
}

#[test]
fn a_read_step_with_nothing_beside_it_names_no_cause() {
    let (_dir, results, _) = run_ok(
        "--engine rocksdb --workload dbbench --param steps=fillseq,flush,readrandom \
         --param num_keys=100000 --clients 1 --duration 3s",
    );
    let report = report_json(&results);
    let tail = &step(&report["runs"][0], "readrandom")["tail"];
    let slowest = tail["slowest"].as_array().unwrap();
    assert_eq!(slowest.len(), 16, "{tail}");
    assert!(slowest.iter().all(|o| o["kind"] == "get"), "{tail}");
    let latencies: Vec<f64> = slowest.iter().map(|o| f(&o["latency_us"])).collect();
    assert!(
        latencies.windows(2).all(|w| w[0] >= w[1]),
        "slowest first: {latencies:?}"
    );
    let row = table_row(&report, "readrandom: the slowest operations, ms", "get");
    assert_ne!(row["confidence"], Value::from("high"), "{row:?}");
}

/// Scans over a range of deleted records (`cases/tombstones`): the slowest skipped many times
/// the tombstones of the scans beside them, by RocksDB's perf context, and the tombstones are
/// the top cause named. On LMDB, whose deletes leave nothing behind, no work is counted.
#[test]
fn scans_over_deleted_records_name_the_tombstones() {
    let (_dir, results, _) =
        run_ok("--engine rocksdb,lmdb --workload cases/tombstones --clients 1");
    let report = report_json(&results);
    let rocksdb = (report["runs"].as_array().unwrap().iter())
        .find(|r| r["engine"] == "rocksdb")
        .unwrap();
    let tail = &step(rocksdb, "scan")["tail"];
    assert_eq!(tail["work"][0], "tombstones skipped", "{tail}");
    let slowest = tail["slowest"].as_array().unwrap();
    let mut skipped: Vec<f64> = slowest.iter().map(|o| f(&o["work"][0]["n"])).collect();
    let mut beside: Vec<f64> = slowest.iter().map(|o| f(&o["work"][0]["median"])).collect();
    skipped.sort_by(f64::total_cmp);
    beside.sort_by(f64::total_cmp);
    let (slow, typical) = (skipped[skipped.len() / 2], beside[beside.len() / 2]);
    // A scan starting in the first tenth of the 30,000 deleted records skips over 27,000; the
    // scans beside it start anywhere, half of them past the range.
    assert!(slow >= 10_000.0, "{slow} tombstones: {tail}");
    assert!(slow >= 4.0 * typical, "{slow} against {typical}: {tail}");
    // The first cause is the tombstones or the keys stepped over (which count the keys older
    // than a tombstone and move with them): named on a quiet host; on a busy one the slowest
    // scans may bunch into too few moments to name it, which the simulation covers.
    let row = table_row(&report, "scan: the slowest operations, ms", "SCAN");
    let cause = row["cause"].as_str().unwrap();
    assert!(
        cause == "more tombstones skipped" || cause == "more keys stepped over",
        "{row:?}"
    );
    let lmdb = (report["runs"].as_array().unwrap().iter())
        .find(|r| r["engine"] == "lmdb")
        .unwrap();
    let tail = &step(lmdb, "scan")["tail"];
    assert!(tail.get("work").is_none(), "{tail}");
}

/// `fathom compare` of the same scans without the deletes (base) and with them (new), two
/// repeats each, pooled: what the slowest scans did that grew is the tombstones they skipped.
#[test]
fn compare_says_the_slowest_scans_grew_with_tombstones() {
    let dir = scratch();
    let (base, new) = (dir.path().join("base"), dir.path().join("new"));
    let scans = "--engine rocksdb --workload cases/tombstones --clients 1";
    // Two runs of a setup in one results directory are two repeats of it.
    for _ in 0..2 {
        ok(&run(&format!("{scans} --param steps=load,scan"), &base));
        ok(&run(scans, &new));
    }
    let out = ok(&fathom(&[
        "compare",
        base.to_str().unwrap(),
        new.to_str().unwrap(),
    ]));
    // The section's first row for the scans: the figure that grew most likely, with its medians
    // (`compare --format json` prints the verdicts' rows alone). Whether it is named depends on
    // how many moments the slowest scans fell in (five a side at least; a busy host bunches
    // them), which the simulation covers; the figure and its growth do not.
    let row = (out.lines())
        .find(|l| l.starts_with("scan ") && l.contains(" SCAN "))
        .unwrap_or_else(|| panic!("no row for the scans: {out}"));
    let grew = ["tombstones skipped", "keys stepped over"];
    let at = grew
        .iter()
        .find_map(|g| row.find(g).map(|i| i + g.len()))
        .unwrap_or_else(|| panic!("not the tombstones: {row}"));
    let numbers: Vec<f64> = (row[at..].split_whitespace())
        .take(2)
        .map(|x| x.parse().unwrap())
        .collect();
    // A scan of 10 live records steps over 10 keys; over the deleted range, thousands.
    assert!(numbers[0] <= 20.0 && numbers[1] >= 1000.0, "{row}");
    assert!(
        out.contains("(every repeat of each side that kept them, pooled)"),
        "{out}"
    );
}

#[test]
fn slow_reads_on_a_throttled_device_slept_in_the_device() {
    if !needs_root("slow_reads_on_a_throttled_device_slept_in_the_device") {
        return;
    }
    let (_dir, results, _) = run_ok(
        "--engine rocksdb --workload dbbench --param steps=fillseq,readrandom \
         --param num_keys=300000 --set cache_size=1m --set o_direct=reads \
         --device seed-disk-array --waits=bpf --clients 2 --duration 4s",
    );
    // The kept reads' threads slept in io for most of their time (a read slowed by a busy
    // host's CPU instead may be among them).
    mostly_waited_in(&results, "io");
}

/// Six clients of cached reads on this machine's two cores: the slowest reads are those whose
/// thread was preempted and waited its turn for a CPU (`--waits=bpf` times the wait from the
/// preemption to the next switch onto a CPU).
#[test]
fn slow_reads_among_more_clients_than_cores_waited_for_a_cpu() {
    if !needs_root("slow_reads_among_more_clients_than_cores_waited_for_a_cpu") {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let (_dir, results, _) = run_ok(&format!(
        "--engine rocksdb --workload dbbench --param steps=fillseq,readrandom \
         --param num_keys=100000 --waits=bpf --clients {} --duration 3s",
        3 * cores
    ));
    mostly_waited_in(&results, "waiting for a cpu");
}

/// Four clients' synced puts: all but the group's leader wait on a futex for it to sync the
/// log, and with `--waits=bpf-stacks` their long sleeps' user stacks, walked by the files'
/// call frame information past the C library's wait, place that futex in RocksDB's write
/// thread (its `WriteThread` or `DBImpl::WriteImpl`), in the tail and in the folded stacks.
#[test]
fn synced_puts_wait_for_the_write_group_where_rocksdb_says() {
    if !needs_root("synced_puts_wait_for_the_write_group_where_rocksdb_says") {
        return;
    }
    let (_dir, results, _) = run_ok(
        "--engine rocksdb --workload dbbench --param steps=fillseq,overwrite \
         --param num_keys=100000 --set sync=true --waits=bpf-stacks --clients 4 --duration 4s",
    );
    let report = report_json(&results);
    let tail = &step(&report["runs"][0], "overwrite")["tail"];
    let placed: Vec<String> = (tail["slowest"].as_array().unwrap().iter())
        .flat_map(|op| op["asleep"].as_array().cloned().unwrap_or_default())
        .filter(|a| a["kind"] == "futex")
        .filter_map(|a| a["at"].as_str().map(String::from))
        .collect();
    assert!(
        placed
            .iter()
            .any(|p| p.starts_with("rocksdb::") && p.contains("Write")),
        "{placed:?}: {tail}"
    );
    let row = table_row(&report, "overwrite: the slowest operations, ms", "put");
    assert!(
        row["waited in"].as_str().unwrap().contains(" at rocksdb::"),
        "{row:?}"
    );
    // The walked sleeps' time also has their whole stacks in the step's folded stacks.
    let run = results.join(&run_dirs(&results)[0]);
    let text = std::fs::read_to_string(run.join("steps/02-overwrite.json")).unwrap();
    let waits = &serde_json::from_str::<Value>(&text).unwrap()["waits"];
    let folded = std::fs::read_to_string(run.join(waits["stacks"].as_str().unwrap())).unwrap();
    assert!(
        folded.lines().any(
            |l| l.starts_with("clients;futex;fathom;") && l.contains(";rocksdb::WriteThread::")
        ),
        "{folded}"
    );
}

/// The kept operations of `step` in `report`: their summed latency, and their summed count of
/// work counter `name`, µs.
fn kept_work(report: &Value, step_name: &str, name: &str) -> (f64, f64) {
    let tail = &step(&report["runs"][0], step_name)["tail"];
    let c = (tail["work"].as_array().unwrap().iter())
        .position(|w| w == name)
        .unwrap_or_else(|| panic!("no {name}: {tail}"));
    let slowest = tail["slowest"].as_array().unwrap();
    let latency = slowest.iter().map(|o| f(&o["latency_us"])).sum();
    let counted = slowest.iter().map(|o| f(&o["work"][c]["n"])).sum();
    (latency, counted)
}

/// WiredTiger's session statistics (`session_stats=true`) say whether a slow operation was
/// storage's or WiredTiger's own: reads past an 8 MB cache with direct IO were slowest when
/// reading pages took long, and puts of the load into it when they waited for room in the
/// cache (evicting pages to the disk themselves).
#[test]
fn wiredtiger_says_whether_slow_operations_read_pages_or_waited_for_cache_room() {
    let (_dir, results, _) = run_ok(
        "--engine wiredtiger --workload dbbench --param steps=fillseq,readrandom \
         --param num_keys=200000 --set cache_size=8m --setup direct_io=[data] \
         --set session_stats=true --clients 1 --duration 4s",
    );
    let report = report_json(&results);
    let (latency, reading) = kept_work(&report, "readrandom", "µs reading pages");
    let (_, waiting) = kept_work(&report, "readrandom", "µs waiting for cache room");
    assert!(
        reading + waiting >= 0.5 * latency,
        "the slowest reads spent {reading} µs reading pages and {waiting} waiting for room, \
         of {latency}"
    );
    let row = table_row(&report, "readrandom: the slowest operations, ms", "get");
    assert_eq!(row["cause"], "more µs reading pages", "{row:?}");
    let (latency, waiting) = kept_work(&report, "fillseq", "µs waiting for cache room");
    assert!(
        waiting >= 0.3 * latency,
        "the slowest puts waited {waiting} µs for room, of {latency}"
    );
    let row = table_row(&report, "fillseq: the slowest operations, ms", "put");
    let cause = row["cause"].as_str().unwrap();
    assert!(
        cause == "more µs waiting for cache room" || cause == "more bytes written from the cache",
        "{row:?}"
    );
}

/// WiredTiger's checkpoints, every second here, reach the step's record from its statistics
/// log, on the Unix clock and inside the window.
#[test]
fn wiredtiger_checkpoints_come_from_its_statistics_log() {
    let (_dir, results, _) = run_ok(
        "--engine wiredtiger --workload dbbench --param steps=fillseq,overwrite \
         --param num_keys=100000 --clients 1 --duration 5s --setup checkpoint=(wait=1)",
    );
    let report = report_json(&results);
    let tail = &step(&report["runs"][0], "overwrite")["tail"];
    // Each from a line of the log a second late at most, its time from the local clock.
    let n = checkpoints_in_window(tail);
    assert!(n >= 2, "a checkpoint a second for 5 s: {tail}");
}

/// PostgreSQL's checkpoints, forced often by a small `max_wal_size`, reach the step's record
/// from the server's log, on the Unix clock inside the window.
#[test]
fn postgres_checkpoints_come_from_its_log() {
    let dir = server_scratch();
    let setup = dir.path().join("pg.conf");
    std::fs::write(&setup, "max_wal_size = 32MB\n").unwrap();
    let results = dir.path().join("results");
    let setup = format!("@{}", setup.display());
    ok(&fathom(&[
        "run",
        "--engine",
        "postgres",
        "--workload",
        "ycsb/workloada",
        "--param",
        "records=50000",
        "--clients",
        "4",
        "--duration",
        "10s",
        "--setup",
        &setup,
        "--results",
        results.to_str().unwrap(),
    ]));
    let report = report_json(&results);
    let tail = &step(&report["runs"][0], "run")["tail"];
    let n = checkpoints_in_window(tail);
    assert!(n >= 1, "no checkpoint in 10 s of writes: {tail}");
}

/// A session of the test's own on the server of a run whose data directory is `data`: runs
/// `sql` and gives its output.
type Session = dyn Fn(&std::path::Path, &str) -> std::process::Output;

/// What a session of the test's own does while a run's two clients update rows of one table
/// (`oltp_update_non_index`, `rows` of them, for `secs`) on `engine`: once `updating` counts the clients'
/// updates running, it sends `act` three or more (`times`) times, `gap_ms` apart. The run's
/// report.
struct Beside<'a> {
    engine: &'a str,
    rows: u32,
    secs: u32,
    /// The server's own lines, `\n`-separated.
    setup: &'a str,
    /// fathom's own arguments besides.
    args: &'a [&'a str],
    session: &'a Session,
    updating: &'a str,
    act: &'a str,
    times: u32,
    gap_ms: u64,
}

impl Beside<'_> {
    fn run(&self) -> Value {
        let dir = server_scratch();
        let (data, results) = (dir.path().join("data"), dir.path().join("results"));
        let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_fathom"));
        run.args(["run", "--engine", self.engine])
            .args(
                "--workload sysbench --param tests=oltp_update_non_index --clients 2 \
                 --no-calibrate"
                    .split_whitespace(),
            )
            .arg(format!("--param=table_size={}", self.rows))
            .arg(format!("--duration={}s", self.secs))
            .args(self.args)
            .arg("--data-dir")
            .arg(&data)
            .arg("--results")
            .arg(&results)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        if !self.setup.is_empty() {
            run.args(["--setup", self.setup]);
        }
        let run = run.spawn().unwrap();
        let last = std::cell::RefCell::new(String::new());
        assert!(
            wait_for(300, || {
                let out = (self.session)(&data, self.updating);
                *last.borrow_mut() = format!("{out:?}");
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse::<u32>()
                    .unwrap_or(0)
                    > 0
            }),
            "the updates never began: {}",
            last.borrow()
        );
        for _ in 0..self.times {
            std::thread::sleep(std::time::Duration::from_millis(self.gap_ms));
            let out = (self.session)(&data, self.act);
            assert!(out.status.success(), "{out:?}");
        }
        let out = run.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        report_json(&results)
    }
}

/// The row of the updates' section of the slowest operations that names `cause`, named (with
/// medium or high confidence), its engine's detail saying `said`.
fn named(report: &Value, cause: &str, said: &[&str]) -> serde_json::Map<String, Value> {
    let title = "oltp_update_non_index: the slowest operations, ms";
    let row = table_row(report, title, "event");
    assert_eq!(row["cause"], cause, "{row:?}");
    assert_ne!(row["confidence"], "-", "{row:?}");
    let detail = row["what the engine said"].as_str().unwrap();
    assert!(said.iter().all(|s| detail.contains(s)), "{row:?}");
    row
}

/// A lock another session holds: while a run's two clients update one row, a session of the
/// test's own holds that row three times for a second (`hold`). The slowest updates waited on
/// it, and the engine's account of its lock waits names the lock for them by the time they
/// spent inside the waits, and says who held it (`held`).
fn a_held_row_is_named(
    engine: &str,
    setup: &str,
    session: &Session,
    (updating, hold): (&str, &str),
    held: &str,
) {
    let report = Beside {
        engine,
        rows: 1,
        secs: 8,
        setup,
        args: &[],
        session,
        updating,
        act: hold,
        times: 3,
        gap_ms: 1200,
    }
    .run();
    let row = named(&report, "lock wait", &["waited for", held]);
    // Named by its mechanism: the updates spent most of their time inside the waits (high from
    // 80%, as it reads on a quiet host; a busy one may slow an update outside them).
    assert!(f(&row["time%"]) >= 50.0, "{row:?}");
}

/// psql on the server of a run whose data directory is `data` (its port and socket directory
/// from its pid file, lines 4 and 5).
fn psql(data: &std::path::Path, sql: &str) -> std::process::Output {
    let text = std::fs::read_to_string(data.join("pgdata/postmaster.pid")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() < 5 {
        return std::process::Command::new("false").output().unwrap();
    }
    std::process::Command::new("psql")
        .args([
            "-h", lines[4], "-p", lines[3], "-U", "postgres", "-d", "sbtest",
        ])
        .args(["-qAtc", sql])
        .output()
        .unwrap()
}

/// The clients' updates running on PostgreSQL.
const PG_UPDATING: &str =
    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'UPDATE sbtest1%'";

/// PostgreSQL: its log of lock waits (`log_lock_waits`, here from 100 ms) names the lock.
#[test]
fn a_lock_held_by_another_session_is_named_for_the_slowest_updates() {
    a_held_row_is_named(
        "postgres",
        "deadlock_timeout = 100ms",
        &psql,
        (
            PG_UPDATING,
            "BEGIN; SELECT id FROM sbtest1 WHERE id = 1 FOR UPDATE; SELECT pg_sleep(1); COMMIT",
        ),
        "held by process",
    );
}

/// PostgreSQL's lock waits shorter than its `deadlock_timeout` (1 s, not lowered), which its
/// log does not tell: held for half a second, the lock is named from fathom's look at
/// `pg_stat_activity` (its wording, "waited for a lock on a", is not the log's).
#[test]
fn a_postgres_lock_shorter_than_deadlock_timeout_is_named_from_its_views() {
    a_held_row_is_named(
        "postgres",
        "",
        &psql,
        (
            PG_UPDATING,
            "BEGIN; SELECT id FROM sbtest1 WHERE id = 1 FOR UPDATE; SELECT pg_sleep(0.5); COMMIT",
        ),
        "waited for a lock on a",
    );
}

/// A checkpoint on a device of a cloud volume's limits (`gp3`: 3,000 IOPS, 125 MiB/s): while
/// two clients update rows of 300,000 at random, the test's session forces a checkpoint four
/// times, 4 s apart (the server's own never come: `checkpoint_timeout = 1h`). Each writes
/// thousands of scattered pages at the volume's IOPS, and the clients' commits wait behind
/// them for their WAL: the slowest updates fell in the checkpoints, which covered a few percent
/// of the window, and PostgreSQL's log names them.
#[test]
fn a_checkpoint_on_a_slow_volume_is_named_for_the_slowest_updates() {
    if !needs_root("a_checkpoint_on_a_slow_volume_is_named_for_the_slowest_updates") {
        return;
    }
    let report = Beside {
        engine: "postgres",
        rows: 300_000,
        secs: 20,
        setup: "checkpoint_timeout = 1h\nmax_wal_size = 4GB",
        args: &["--device", "gp3"],
        session: &psql,
        updating: PG_UPDATING,
        act: "CHECKPOINT",
        times: 4,
        gap_ms: 4000,
    }
    .run();
    let row = named(&report, "checkpoint", &["immediate", "buffers"]);
    assert!(f(&row["window%"]) <= 30.0, "{row:?}");
}

/// InnoDB on MariaDB, which logs no lock wait: fathom's look at its views every 100 ms
/// (`watch_ms`) names the lock.
#[test]
fn an_innodb_lock_held_by_another_session_is_named_from_its_views() {
    // The server's socket, from the my.cnf fathom wrote.
    let mariadb = |data: &std::path::Path, sql: &str| {
        let cnf = std::fs::read_to_string(data.join("my.cnf")).unwrap_or_default();
        let Some(socket) = cnf.lines().find_map(|l| l.strip_prefix("socket=")) else {
            return std::process::Command::new("false").output().unwrap();
        };
        std::process::Command::new("mariadb")
            .args(["-S", socket, "-uroot", "-N", "-B", "sbtest", "-e", sql])
            .output()
            .unwrap()
    };
    a_held_row_is_named(
        "innodb",
        "",
        &mariadb,
        (
            "SELECT count(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'UPDATE sbtest1%'",
            "BEGIN; SELECT id FROM sbtest1 WHERE id = 1 FOR UPDATE; SELECT SLEEP(1); COMMIT",
        ),
        "held by thread",
    );
}
