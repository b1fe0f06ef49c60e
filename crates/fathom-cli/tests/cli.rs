//! End-to-end tests of the `fathom` binary on real RocksDB (and on the null engine for the
//! driver itself): short dbbench steps in a temporary directory, then the reports read back.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn dbbench_on_rocksdb_reports_every_column_and_the_counters_move() {
    let dir = scratch();
    let results = dir.path().join("results");
    let out = run(
        "--engine rocksdb --workload dbbench --setup write_buffer_size=1m;target_file_size_base=1m;max_bytes_for_level_base=4m --param num_keys=50000 --param steps=fillseq,readrandom,fwdrange,multireadrandom,overwritesome,flush,readwhilewriting,overwriteandwait --duration 1s --clients 2",
        &results,
    );
    ok(&out);
    // Every column the step table declares, the seeds' and fathom's own (the terminal's
    // table leaves the wide ones out unless asked).
    let text = ok(&fathom_at("report {} --columns all", &[&results]));
    for column in fathom_report::sections::steps::columns() {
        assert!(
            text.lines().any(|l| l.contains(column)),
            "text report lacks `{column}`:\n{text}"
        );
    }
    let report = report_json(&results);
    let run = &report["runs"][0];
    assert_eq!(run["engine"], "rocksdb");
    assert!(
        run["engine_version"]
            .as_str()
            .unwrap()
            .starts_with(char::is_numeric),
        "{}",
        run["engine_version"]
    );
    assert_eq!(run["status"], "finished");

    every_step_has_its_figures(run);
    every_step_wrote_its_files(run, &results);
    every_format_has_the_steps(&results);
}

/// Each step's figures: operations, ordered percentiles, CPU, sizes, the engine's statistics,
/// the background writer apart.
fn every_step_has_its_figures(run: &Value) {
    let fill = step(run, "fillseq");
    assert_eq!(fill["ops"], 50_000);
    assert!(
        f(&fill["per_op"]["write_kb"]) > 0.0,
        "fillseq wrote nothing to the device: {fill}"
    );
    assert!(f(&fill["engine_stats"]["flush_gb"]) > 0.0);
    for name in [
        "readrandom",
        "fwdrange",
        "multireadrandom",
        "overwritesome",
        "readwhilewriting",
        "overwriteandwait",
    ] {
        let s = step(run, name);
        assert!(f(&s["ops"]) > 0.0, "{name}: no ops");
        assert!(f(&s["ops_per_sec"]) > 0.0);
        let l = &s["latency_us"];
        let p = ["p50", "p75", "p99", "p99_9", "p99_99", "max"].map(|k| f(&l[k]));
        assert!(
            p.windows(2).all(|w| w[0] <= w[1]),
            "{name}: percentiles out of order: {l}"
        );
        assert!(f(&l["mean"]) > 0.0);
        assert!(f(&s["per_op"]["cpu_us"]) > 0.0, "{name}: no CPU per op");
        assert!(f(&s["per_op"]["cpu_us_engine"]) > 0.0);
        assert!(
            s["per_op"]["cpu_us_harness"].is_null(),
            "embedded: harness share is calibrated, not measured"
        );
        assert!(f(&s["harness_ns_per_op"]) > 0.0);
        assert!(f(&s["db_gb"]["apparent"]) > 0.0);
        assert!(f(&s["rss_gb"]) > 0.0);
    }
    let rww = step(run, "readwhilewriting");
    let bg = &rww["background"];
    assert!(f(&bg["ops"]) > 0.0, "background writer wrote nothing");
    assert!(
        rww["by_op"].get("put").is_none(),
        "background puts leak into the step's figures"
    );
    let owait = step(run, "overwriteandwait");
    assert!(
        f(&owait["engine_stats"]["w_amp"]) >= 1.0,
        "flush alone writes at least the ingest: {owait}"
    );
    // flush_mt_l0 is all maintenance: its flush and compaction waits took time, inside the
    // window its host figures cover.
    let flush = step(run, "flush");
    assert!(f(&flush["maintenance_seconds"]) > 0.0, "{flush}");
    assert!(f(&flush["window_seconds"]) >= f(&flush["maintenance_seconds"]));
}

/// Every step wrote its summary, time series and histogram log; the database was removed.
fn every_step_wrote_its_files(run: &Value, results: &Path) {
    let run_dir = Path::new(run["path"].as_str().unwrap());
    let steps: Vec<_> = std::fs::read_dir(run_dir.join("steps"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        steps
            .iter()
            .filter(|n| n.to_string_lossy().ends_with(".json"))
            .count(),
        8
    );
    let log = std::fs::read_to_string(run_dir.join("steps/02-readrandom.hlog")).unwrap();
    assert!(
        log.contains("Tag=get,"),
        "histogram log has tagged intervals:\n{log}"
    );
    let intervals =
        std::fs::read_to_string(run_dir.join("steps/02-readrandom.intervals.jsonl")).unwrap();
    assert!(intervals.lines().count() >= 1);
    // The database was removed, the results kept.
    assert!(std::fs::read_dir(results.join(".data"))
        .unwrap()
        .next()
        .is_none());
}

/// Every report format has the step rows.
fn every_format_has_the_steps(results: &Path) {
    let md = report_as(results, "md");
    assert!(md.contains("| readrandom |"), "{md}");
    let csv = report_as(results, "csv");
    assert!(csv.starts_with("step,!,ops/s,±,p50,p99"), "{csv}");
    let tsv = report_as(results, "dbbench");
    let header: Vec<&str> = tsv.lines().next().unwrap().split('\t').collect();
    for c in [
        "ops_sec", "mb_sec", "lsm_sz", "c_wgb", "w_amp", "c_wsecs", "c_csecs", "usec_op", "p50",
        "p99", "p99.9", "p99.99", "pmax", "stall%", "u_cpu", "s_cpu", "rss",
    ] {
        assert!(header.contains(&c), "report.tsv lacks {c}");
    }
    assert_holds(&tsv, &["fillseq.wal_disabled.v400", "readrandom.t2"]);
}

/// benchmark.sh runs each db_bench step as a process of its own: fathom closes and reopens the
/// database between steps, so the WAL-off fillseq's memtable is flushed to a table file when
/// it closes; with reopen=off it is still in memory when the next step runs.
#[test]
fn dbbench_reopens_the_database_between_steps_as_a_process_per_step() {
    let size_during_readrandom = |reopen: &str| {
        let (_dir, results, _) = run_ok(&format!(
            "--engine rocksdb --workload dbbench --param num_keys=20000 \
             --param steps=fillseq,readrandom --duration 1s --param reopen={reopen}"
        ));
        let report = report_json(&results);
        let fillseq = step(&report["runs"][0], "fillseq");
        // Its own options (benchmark.sh's vector memtable) when each step opens the database.
        let own = fillseq["engine_options"].as_str().unwrap_or("");
        assert_eq!(
            own.contains("memtable_factory=vector"),
            reopen == "on",
            "{own}"
        );
        f(&step(&report["runs"][0], "readrandom")["db_gb"]["apparent"]) * 1024.0
    };
    // 20,000 keys of 20 + 400 bytes, half-compressible: about 4 MiB in a table file.
    let (reopened, kept_open) = (size_during_readrandom("on"), size_during_readrandom("off"));
    assert!(reopened > 2.0, "{reopened:.2} MiB after reopening");
    assert!(
        kept_open < 1.0,
        "{kept_open:.2} MiB with the database kept open"
    );
}

/// `--existing-data` runs one step per process on the database an earlier run left, as
/// db_bench's `--use_existing_db=1`: the second run's readrandom reads fillseq's keys.
#[test]
fn a_step_runs_on_the_database_an_earlier_run_left() {
    let dir = scratch();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let results = dir.path().join("results");
    let keys = "--engine rocksdb --workload dbbench --param num_keys=20000 --no-calibrate";
    ok(&run(
        &format!("{keys} --param steps=fillseq --data-dir {db}"),
        &results.join("load"),
    ));
    // Without the flag a non-empty directory is refused, as every run starts afresh.
    let refused = err(&run(
        &format!("{keys} --param steps=readrandom --duration 1s --data-dir {db}"),
        &results.join("refused"),
    ));
    assert!(refused.contains("is not empty"), "{refused}");
    ok(&run(
        &format!("{keys} --param steps=readrandom --duration 1s --data-dir {db} --existing-data"),
        &results.join("read"),
    ));
    let report = report_json(&results.join("read"));
    let run = &report["runs"][0];
    let mib = f(&step(run, "readrandom")["db_gb"]["apparent"]) * 1024.0;
    assert!(
        mib > 2.0,
        "{mib:.2} MiB: readrandom did not open fillseq's database"
    );
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(
            fathom_schema::store::find_runs(&results.join("read")).unwrap()[0].join("run.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["existing_data"], true);
}

#[test]
fn ctrl_c_keeps_finished_steps_and_marks_the_run() {
    let dir = scratch();
    let results = dir.path().join("results");
    let child = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args([
            "run",
            "--engine",
            "null",
            "--workload",
            "dbbench",
            "--param",
            "steps=fillseq,readrandom,fwdrange",
            "--param",
            "num_keys=1000",
        ])
        .args([
            "--duration",
            "60s",
            "--no-calibrate",
            "--results",
            results.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "an interrupted run exits 130, as docs/verdicts.md's table says: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = report_json(&results);
    let run = &report["runs"][0];
    assert_eq!(run["status"], "interrupted");
    assert_eq!(step(run, "fillseq")["interrupted"], false);
    let rr = step(run, "readrandom");
    assert_eq!(rr["interrupted"], true);
    assert!(f(&rr["ops"]) > 0.0 && f(&rr["seconds"]) < 10.0, "{rr}");
    assert!(run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["step"] != "fwdrange"));
}

/// A cached readrandom does (almost) no device reads; one whose database is several times its
/// cgroup memory limit does.
#[test]
fn memory_limit_makes_reads_hit_the_device() {
    if !needs_root("memory_limit_makes_reads_hit_the_device") {
        return;
    }
    let dir = scratch();
    let results = dir.path().join("results");
    let rocksdb = |name: &str, extra: &str| {
        let args = format!(
            "--engine rocksdb --workload dbbench --name {name} --setup write_buffer_size=4m;max_write_buffer_number=2 \
             --set cache_size=4m --param num_keys=800000 --param steps=fillseq,readrandom --duration 3s {extra}"
        );
        ok(&run(&args, &results));
    };
    rocksdb("cached", "");
    rocksdb("limited", "--memory-limit 48m");
    let report = report_json(&results);
    let by_name = |n: &str| row_where(&report["runs"], "setup", n);
    let cached = by_name("cached");
    let limited = by_name("limited");
    let db = f(&step(&limited, "readrandom")["db_gb"]["allocated"]);
    assert!(
        db > 3.0 * 48.0 / 1024.0,
        "database ({db} GiB) is several times the limit"
    );
    let ro_cached = f(&step(&cached, "readrandom")["per_op"]["reads"]);
    let ro_limited = f(&step(&limited, "readrandom")["per_op"]["reads"]);
    assert!(ro_cached < 0.05, "cached r/o {ro_cached}");
    assert!(ro_limited > 0.2, "memory-limited r/o {ro_limited}");
    assert!(limited["host"]["memory_limit"]
        .as_str()
        .unwrap()
        .contains("cgroup"));
}

#[test]
fn open_loop_and_null_engine_measure_the_harness() {
    let (_dir, results, _) = run_ok("--engine null --workload dbbench --param steps=readrandom --param num_keys=1000 --duration 2s --rate 2000 --arrivals uniform");
    let report = report_json(&results);
    let rr = step(&report["runs"][0], "readrandom");
    let rate = f(&rr["ops_per_sec"]);
    assert!(
        (1800.0..2200.0).contains(&rate),
        "open loop at 2000/s ran at {rate}/s"
    );
    assert_eq!(f(&rr["arrival_rate"]), 2000.0);
    // The null engine's cost is the harness's own: well under a microsecond of CPU per op.
    assert!(f(&rr["harness_ns_per_op"]) < 1000.0, "{rr}");
}

/// Count-based steps record exactly their operations, and the interval records add up to the
/// step's total (no snapshot lost at a boundary, none counted twice).
#[test]
fn operations_are_conserved_across_intervals() {
    let (_dir, results, _) = run_ok("--engine null --workload dbbench --param steps=fillseq,overwritesome,readrandom --param num_keys=3000000 --duration 1500ms --interval 200ms --clients 2");
    let report = report_json(&results);
    let run = &report["runs"][0];
    assert_eq!(step(run, "fillseq")["ops"], 3_000_000);
    assert_eq!(
        step(run, "overwritesome")["ops"],
        300_000,
        "2 clients x num_keys / 2 / 10"
    );
    let run_dir = Path::new(run["path"].as_str().unwrap());
    for (i, name) in [(1, "fillseq"), (2, "overwritesome"), (3, "readrandom")] {
        let text =
            std::fs::read_to_string(run_dir.join(format!("steps/0{i}-{name}.intervals.jsonl")))
                .unwrap();
        let records: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let sum: u64 = records.iter().map(|r| r["ops"].as_u64().unwrap()).sum();
        assert_eq!(
            sum,
            step(run, name)["ops"].as_u64().unwrap(),
            "{name}: intervals do not add up"
        );
        let numbers: Vec<u64> = records
            .iter()
            .map(|r| r["interval"].as_u64().unwrap())
            .collect();
        assert_eq!(
            numbers,
            (1..=records.len() as u64).collect::<Vec<_>>(),
            "{name}: intervals in order"
        );
    }
    let rr_intervals =
        std::fs::read_to_string(run_dir.join("steps/03-readrandom.intervals.jsonl")).unwrap();
    assert!(
        rr_intervals.lines().count() >= 6,
        "1.5 s in 200 ms intervals"
    );
}

/// A run's lines say what they are: each step's last line is the whole step's (`done:`), and
/// at the end one command reports every run of the command again, which works as printed.
#[test]
fn a_run_ends_with_the_command_that_reports_it_again() {
    let dir = scratch();
    let results = dir.path().join("results");
    let out = run(
        "--engine lmdb,sqlite --workload dbbench --param num_keys=2000 \
         --param steps=fillseq,readrandom --duration 300ms --no-calibrate",
        &results,
    );
    let text = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("] readrandom") && l.contains(" done: ")),
        "{stderr}"
    );
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("report: fathom report "))
        .unwrap_or_else(|| panic!("no report command: {stderr}"));
    let (dirs, page) = line.split_once("    page: ").unwrap();
    assert!(page.ends_with("--format html > report.html"), "{page}");
    let dirs: Vec<&str> = dirs.split_whitespace().collect();
    assert_eq!(dirs.len(), 2, "{line}");
    let mut args = vec!["report"];
    args.extend(&dirs);
    let again = ok(&fathom(&args));
    // Both runs' rows, as the run's own report showed them.
    let rows = |t: &str| t.lines().filter(|l| l.starts_with("readrandom")).count();
    assert!(rows(&again) >= 2, "{again}");
    assert_eq!(rows(&again), rows(&text), "{again}\n{text}");
}

/// Every engine runs the same workload from one command, and one report holds them all.
#[test]
fn every_engine_runs_dbbench_into_one_report() {
    let (_dir, results, text) = run_ok("--engine rocksdb,wiredtiger,lmdb,sqlite --workload dbbench --param num_keys=5000 --param steps=fillseq,readrandom,fwdrange,overwritesome --duration 500ms --no-calibrate");
    for engine in ["rocksdb", "wiredtiger", "lmdb", "sqlite"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("readrandom") && l.trim_end().ends_with(engine)),
            "{engine} row:\n{text}"
        );
    }
    let report = report_json(&results);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for run in runs {
        let name = run["engine"].as_str().unwrap();
        assert!(
            !run["engine_version"].as_str().unwrap().is_empty(),
            "{name}: version"
        );
        assert_eq!(step(run, "fillseq")["ops"], 5000, "{name}: fillseq");
        assert_eq!(
            step(run, "overwritesome")["ops"],
            500,
            "{name}: overwritesome"
        );
        for s in ["readrandom", "fwdrange"] {
            assert!(f(&step(run, s)["ops"]) > 0.0, "{name}: {s}");
            // Every key exists after fillseq, so reads and scans move bytes.
            assert!(
                f(&step(run, s)["mb_per_sec"]) > 0.0,
                "{name}: {s} read nothing"
            );
        }
        assert!(
            !step(run, "fillseq")["engine_stats"]
                .as_object()
                .unwrap()
                .is_empty(),
            "{name}: statistics"
        );
        // Whose memory: the process's C heap (fathom holds the embedded engine) and its
        // anonymous memory, beside the engine's own account of its cache where it keeps one.
        let memory = &step(run, "readrandom")["memory"];
        assert!(f(&memory["heap_used"]) > 0.0, "{name}: heap {memory}");
        assert!(f(&memory["anon"]) > 0.0, "{name}: anon {memory}");
        if name == "rocksdb" || name == "wiredtiger" {
            let stats = &step(run, "readrandom")["engine_stats"];
            assert!(f(&stats["cache_gb"]) > 0.0, "{name}: cache {stats}");
            assert!(
                f(&stats["cache_max_gb"]) > 0.0,
                "{name}: cache size {stats}"
            );
        }
    }
    assert!(text.contains("memory (median over repeats)"), "{text}");
    assert!(text.contains("wiredtiger: engine counters"), "{text}");
}

/// `--allocator` runs the embedded engine in a process of its own with the allocator preloaded
/// (the run records it, and glibc's heap figures, which would read nothing, are absent); a
/// server or an unknown name is refused before anything runs.
#[test]
fn an_allocator_is_preloaded_into_a_process_of_its_own() {
    let (_dir, results, text) = run_ok(
        "--engine rocksdb --allocator jemalloc --workload dbbench --param num_keys=20000 \
         --param steps=fillseq,readrandom --duration 1s --no-calibrate",
    );
    assert!(text.contains("allocator jemalloc"), "{text}");
    let report = report_json(&results);
    let first = &report["runs"][0];
    let dir = results.join(run_dirs(&results)[0].as_str());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let allocator = manifest["setup"]["effective"]["fathom.allocator"]
        .as_str()
        .unwrap();
    assert!(allocator.starts_with("jemalloc (/"), "{allocator}");
    let memory = &step(first, "readrandom")["memory"];
    assert!(memory["heap_used"].is_null(), "{memory}");
    assert!(f(&memory["anon"]) > 0.0, "{memory}");
    for (args, expected) in [
        (
            "--engine innodb --allocator tcmalloc --workload sysbench",
            "is a server",
        ),
        (
            "--engine rocksdb --allocator hoard --workload dbbench",
            "possible values: glibc, tcmalloc, jemalloc",
        ),
        (
            "--engine rocksdb --set version=5.9.2 --allocator tcmalloc --workload dbbench",
            "deep-bound",
        ),
    ] {
        let e = err(&run(args, &results));
        assert_holds(&e, &["--allocator", expected]);
    }
}

/// A run option given with an experiment file replaces the file's key of the same name, and a
/// setup's own key replaces both for that setup (docs/running.md, "Run options"): `--allocator jemalloc`
/// over a file that says `allocator = "tcmalloc"` runs the setup without its own allocator on
/// jemalloc, and the setup that names glibc on glibc; `--rate` with a file is taken, no longer
/// refused.
#[test]
fn a_flag_replaces_the_files_key_and_a_setups_own_key_replaces_both() {
    let dir = scratch();
    let file = dir.path().join("alloc.toml");
    std::fs::write(
        &file,
        "name = \"alloc\"\nclients = [1]\nallocator = \"tcmalloc\"\nduration = \"1s\"\n\
         [[setup]]\nname = \"plain\"\nengine = \"rocksdb\"\n\
         [[setup]]\nname = \"own\"\nengine = \"rocksdb\"\nallocator = \"glibc\"\n\
         [[workload]]\nname = \"dbbench\"\nparams = { num_keys = 5000, steps = \"fillseq,readrandom\" }\n",
    )
    .unwrap();
    let results = dir.path().join("results");
    let file = file.to_str().unwrap();
    ok(&run(
        &format!("{file} --allocator jemalloc --rate 400 --no-calibrate"),
        &results,
    ));
    let mut seen = Vec::new();
    for run_dir in run_dirs(&results) {
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(results.join(&run_dir).join("run.json")).unwrap(),
        )
        .unwrap();
        let setup = manifest["setup"]["name"].as_str().unwrap().to_string();
        let allocator = manifest["setup"]["effective"]["fathom.allocator"]
            .as_str()
            .unwrap_or("glibc")
            .to_string();
        seen.push(format!("{setup}: {}", allocator.split(' ').next().unwrap()));
    }
    seen.sort();
    assert_eq!(seen, ["own: glibc", "plain: jemalloc"]);
    let report = report_json(&results);
    let rate = &step(&report["runs"][0], "readrandom")["arrival_rate"];
    assert_eq!(rate.as_f64(), Some(400.0), "--rate reached the timed step");
}

/// `fathom workloads` and `fathom engines` list every knob in one form: the flag with the
/// values it takes (an enum's names, a list's `,...`), its default (or that it is empty), its
/// help.
#[test]
fn the_listings_say_what_each_knob_takes() {
    let workloads = ok(&fathom(&["workloads"]));
    assert_holds(
        &workloads,
        &[
            "--param statements=<original|text|prepared>  (default original) how SQL",
            "--param fix=<update_link|write_blend|type_split|motif_length,...>  (default empty)",
            "--param steps=<all|fillseq|revrange|",
            "|overwrite,...>  (default all) steps to run",
            // The bundled workload files, each with what it does.
            "Workload files (--workload NAME, or --workload PATH.toml",
            "  ycsb/workloada: YCSB core workload A: update heavy",
            "  ycsb/workloadf: YCSB core workload F: read-modify-write",
        ],
    );
    let engines = ok(&fathom(&["engines"]));
    assert_holds(
        &engines,
        &[
            "--set journal=<bool>  (default empty) journal",
            "--set read_concern=<local|majority|available|linearizable|snapshot>  (default empty)",
        ],
    );
}
