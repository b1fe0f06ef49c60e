//! End-to-end tests of experiments and what reads their results: an experiment file's matrix
//! run, resumed and set aside when unfinished; its errors; the HTML page rendered in headless
//! Chromium; `fathom compare` verdicts on known figures; `fathom merge` against the recorder.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

/// Two setups of the null engine: seconds-long steps, 1 and 2 clients, 3 repeats.
static EXPERIMENT: LazyLock<String> = LazyLock::new(|| null_pair("pair", "1s", "200ms", 20000));

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn chromium_dom(page: &Path) -> String {
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium is installed by scripts/setup.sh --test");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn attr(dom: &str, name: &str) -> usize {
    let at = dom
        .find(&format!("{name}=\""))
        .unwrap_or_else(|| panic!("no {name} in the page's DOM"));
    let rest = &dom[at + name.len() + 2..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

#[test]
fn experiment_runs_its_matrix_resumes_and_reports_in_html() {
    let dir = scratch();
    let file = write(dir.path(), "pair.toml", &EXPERIMENT);
    let results = dir.path().join("results");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "run",
            file.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ];
        a.extend(extra);
        fathom(&a)
    };
    let out = args(&[]);
    let text = ok(&out);
    let cells = run_dirs(&results);
    assert_eq!(cells.len(), 12, "{cells:?}");
    assert!(cells.contains(&"two.dbbench.c2.r3".to_string()));
    // Stated order: repeats outermost, setups innermost.
    let log = String::from_utf8_lossy(&out.stderr);
    let first = log.find("[1/12] one.dbbench.c1.r1").expect("first cell");
    let second = log.find("[2/12] two.dbbench.c1.r1").expect("second cell");
    assert!(first < second);
    assert!(text.contains("median of 3 repeats"), "{text}");
    assert!(
        text.contains("operations per second (median over repeats)"),
        "{text}"
    );
    assert!(results.join("experiment.toml").is_file());

    // A re-run skips every finished cell.
    let before = std::fs::metadata(results.join("one.dbbench.c1.r1/run.json"))
        .unwrap()
        .modified()
        .unwrap();
    let out = args(&[]);
    ok(&out);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(log.matches("finished before, skipped").count(), 12, "{log}");
    let after = std::fs::metadata(results.join("one.dbbench.c1.r1/run.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);

    // An unfinished cell is set aside and run again; the others are not.
    let manifest = results.join("two.dbbench.c1.r2/run.json");
    let edited = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"status\": \"finished\"", "\"status\": \"interrupted\"");
    std::fs::write(&manifest, edited).unwrap();
    let out = args(&[]);
    ok(&out);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(log.matches("finished before, skipped").count(), 11, "{log}");
    assert!(log.contains("set aside"), "{log}");
    assert!(results
        .join(".incomplete/two.dbbench.c1.r2.1/run.json")
        .is_file());
    assert_eq!(run_dirs(&results).len(), 12);

    a_changed_definition_is_refused(dir.path(), &results);
    the_page_renders_every_chart(dir.path(), &results);
    compare_gives_verdicts_and_iostat(&results);
}

/// A changed definition of a finished cell is refused rather than mixed in.
fn a_changed_definition_is_refused(dir: &Path, results: &Path) {
    let changed = write(
        dir,
        "pair.toml",
        &EXPERIMENT.replace("num_keys = 20000", "num_keys = 30000"),
    );
    let e = err(&fathom_at("run {} --results {}", &[&changed, results]));
    assert!(e.contains("different definition"), "{e}");
    // The first experiment file saved stays; the changed one is saved beside it, named.
    let saved = |name: &str| std::fs::read_to_string(results.join(name)).unwrap();
    assert!(saved("experiment.toml").contains("num_keys = 20000"));
    assert!(saved("experiment.2.toml").contains("num_keys = 30000"));
    assert_holds(
        &e,
        &["holds a different experiment file", "num_keys = 30000"],
    );
}

/// The HTML page: self-contained, and every chart renders in a real browser.
fn the_page_renders_every_chart(dir: &Path, results: &Path) {
    let html = report_as(results, "html");
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    let page = dir.join("report.html");
    std::fs::write(&page, &html).unwrap();
    let dom = chromium_dom(&page);
    let total = attr(&dom, "data-charts-total");
    let rendered = attr(&dom, "data-charts-rendered");
    // Sweep (2 steps), relative throughput, throughput and p99 over time (readrandom),
    // latency percentiles (2 steps).
    assert!(total >= 7, "only {total} charts");
    assert_eq!(rendered, total, "charts that did not render");
    // Real tables: the sweep's client counts under a `clients` header over their columns,
    // numbers in right-aligned cells, no terminal text in <pre>.
    assert!(
        html.contains("<th colspan=\"2\" class=\"n\">clients</th><th></th></tr><tr><th class=\"n\">1</th><th class=\"n\">2</th><th>setup</th>"),
        "the sweep's header"
    );
    assert!(html.contains("<td class=\"n\">"));
    assert!(!html.contains("<pre>"));
}

/// Compare the two setups of one results directory: three repeats give verdicts; seed 004's
/// iostat tables.
fn compare_gives_verdicts_and_iostat(results: &Path) {
    let cmp = ok(&fathom_at("compare {} --format json", &[results]));
    let rows: Value = serde_json::from_str(&cmp).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4, "two steps × two client counts");
    for r in rows {
        assert_ne!(r["verdict"], "no_verdict", "{r}");
        assert_eq!(r["base"], "one");
        assert_eq!(r["base_ops_per_sec"].as_array().unwrap().len(), 3);
    }
    // Seed 004's iostat table for one step, a row per setup and client count, in the text
    // comparison and on the page.
    let text = ok(&fathom_at("compare {} --iostat readrandom", &[results]));
    let header = text.lines().find(|l| l.contains("rrqmps")).expect(&text);
    assert_holds(header, &["wareqsz", "ver"]);
    // And each setup's figures over its base's.
    assert!(
        text.contains("iostat during readrandom, relative to the base"),
        "{text}"
    );
    let page = ok(&fathom_at(
        "report {} --format html --iostat readrandom",
        &[results],
    ));
    assert!(page.contains("iostat during readrandom"));
    let e = err(&fathom_at("compare {} --iostat nosuch", &[results]));
    assert!(e.contains("no setup ran a step `nosuch`"), "{e}");
}

/// For each edit of `EXPERIMENT` (text to find, its replacement, what the error must hold), the
/// edited file, run from `dir` as `bad.toml`, is refused before anything runs with an error
/// naming the file and holding each wanted text.
fn each_refused(dir: &Path, edits: &[(&str, &str, &[&str])]) {
    let results = dir.join("results");
    for (from, to, wants) in edits {
        let file = write(dir, "bad.toml", &EXPERIMENT.replace(from, to));
        let e = err(&fathom_at("run {} --results {}", &[&file, &results]));
        assert_holds(&e, &["bad.toml"]);
        assert_holds(&e, wants);
        assert!(
            !results.exists(),
            "nothing runs before the whole file is checked"
        );
    }
}

#[test]
fn experiment_errors_name_the_file_the_key_and_what_was_expected() {
    let dir = scratch();
    let two = "name = \"two\"\nengine = \"null\"";
    each_refused(
        dir.path(),
        &[
            (
                "repeats = 3",
                "repeats = \"three\"",
                &["repeats", "expected"],
            ),
            (
                "repeats = 3",
                "repeats = 3\nthreads = 4",
                &["unknown field `threads`", "expected one of"],
            ),
            (
                two,
                "name = \"two\"\nengine = \"rockdb\"",
                &["setup[1] (two).engine", "unknown engine `rockdb`"],
            ),
            (
                two,
                "name = \"two\"\nengine = \"null\"\nsettings = { cache = \"1g\" }",
                &["setup[1] (two)", "no setting `cache`"],
            ),
            (
                "num_keys = 20000",
                "num_keys = \"lots\"",
                &["num_keys", "not a whole number"],
            ),
            // The keys of adaptive repeats.
            (
                "repeats = 3",
                "repeats = { min = 4, max = 2 }",
                &["repeats", "min <= max", "min 4 and max 2"],
            ),
            (
                "repeats = 3",
                "repeats = { min = 2, most = 8 }",
                &["repeats", "two counts", "most"],
            ),
            (
                "repeats = 3",
                "repeats = 3\nbase = \"three\"",
                &["base: no setup `three`", "one, two"],
            ),
            (
                "repeats = 3",
                "repeats = 3\nthreshold = \"150%\"",
                &["threshold", "from 0% to 100%"],
            ),
        ],
    );
    // And on the command line.
    let file = write(dir.path(), "ok.toml", &EXPERIMENT);
    let e = err(&fathom_at("run {} --engine rocksdb", &[&file]));
    assert!(e.contains("--engine with an experiment file"), "{e}");
    let e = err(&fathom_at("run {} --repeats 3..x", &[&file]));
    assert_holds(&e, &["--repeats", "3..12"]);
    let e = err(&fathom_at(
        "run --engine null --workload dbbench --repeats 3",
        &[],
    ));
    assert!(e.contains("for an experiment file"), "{e}");
}

/// `--dry-run` prints the plan (runs, steps and their lengths, the time at the fewest and the
/// most rounds) and runs nothing.
#[test]
fn a_dry_run_prints_the_plan_and_runs_nothing() {
    let dir = scratch();
    let results = dir.path().join("results");
    let file = write(dir.path(), "plan.toml", &EXPERIMENT);
    let plan = ok(&fathom_at(
        "run {} --dry-run --repeats 3..5 --results {}",
        &[&file, &results],
    ));
    assert!(!results.exists(), "a dry run wrote {}", results.display());
    // 2 setups x 1 workload x 2 client counts; readrandom 1s a run, fillseq ends on a count.
    assert!(
        plan.contains("2 setups, 1 workload, 2 client counts: 4 runs a round"),
        "{plan}"
    );
    assert!(plan.contains("rounds: 3 to 5"), "{plan}");
    assert!(
        plan.contains("one.dbbench.c1: null dbbench, 1 client: fillseq"),
        "{plan}"
    );
    assert!(plan.contains("readrandom 1s"), "{plan}");
    assert!(
        plan.contains("timed steps: 4s a round; 12s at 3 rounds, 20s at 5 rounds"),
        "{plan}"
    );
    assert!(
        plan.contains("engine releases: the ones built in"),
        "{plan}"
    );
}

/// A results directory holding one setup's runs with the given ops/s, one run per value.
fn fake_runs(root: &Path, setup: &str, ops: &[f64]) -> PathBuf {
    let dir = root.join(setup);
    for (i, v) in ops.iter().enumerate() {
        let run = dir.join(format!("{setup}.r{}", i + 1));
        std::fs::create_dir_all(run.join("steps")).unwrap();
        let manifest = serde_json::json!({
            "format_version": 1,
            "setup": { "name": setup, "engine": "null", "engine_version": "0",
                       "options": "", "settings": {}, "memory_limit_bytes": null, "effective": {} },
            "workload": "dbbench", "params": {}, "clients": 4,
            "host": { "hostname": "h", "kernel": "k", "cores": 2, "memory_bytes": 1,
                      "device": null, "data_dir": "", "fathom_version": "0",
                      "memory_limit": null, "note": null },
            "started_at": "", "finished_at": null, "status": "finished", "error": null
        });
        std::fs::write(run.join("run.json"), manifest.to_string()).unwrap();
        let step = serde_json::json!({
            "step": "overwriteandwait", "index": 1, "clients": 4, "ops": (*v * 10.0) as u64,
            "seconds": 10.0, "ops_per_sec": v, "mb_per_sec": 0.0, "usec_op": 0.0,
            "latency_us": { "p50": 1.0, "p75": 1.0, "p99": 2.0, "p99_9": 3.0, "p99_99": 4.0, "max": 5.0, "mean": 1.0 },
            "per_op": { "reads": 0.1, "read_kb": 1.0, "write_kb": 2.0 * 100.0 / v, "cs": 0.5,
                        "cpu_us": 10.0, "cpu_us_engine": 10.0, "cpu_us_harness": null },
            "db_gb": { "allocated": 1.0, "apparent": 1.0 }, "rss_gb": 0.1,
            "engine_stats": {}, "by_op": {},
            "host": { "device": null, "rps": null, "rmbps": null, "rawait_ms": null, "rareqsz_kb": null,
                      "wps": null, "wmbps": null, "wawait_ms": null, "wareqsz_kb": null,
                      "cs_per_sec": 0.0, "us_pct": 50.0, "sy_pct": 10.0, "idle_pct": 40.0,
                      "iowait_pct": 0.0, "steal_pct": 0.0, "engine_user_secs": 0.0, "engine_system_secs": 0.0 },
            "background": null, "maintenance_seconds": 0.0, "window_seconds": 10.0,
            "arrival_rate": null, "harness_ns_per_op": null, "interrupted": false, "started_at": ""
        });
        std::fs::write(run.join("steps/01-overwriteandwait.json"), step.to_string()).unwrap();
        std::fs::write(run.join("steps/01-overwriteandwait.intervals.jsonl"), "").unwrap();
    }
    dir
}

#[test]
fn compare_gives_verdicts_only_with_repeats() {
    let dir = scratch();
    let base = fake_runs(dir.path(), "v8.5", &[100.0, 101.0, 99.0]);
    let slower = fake_runs(dir.path(), "v8.7", &[95.0, 94.5, 95.5]);
    let same = fake_runs(dir.path(), "v8.8", &[100.5, 99.5, 101.5]);
    let once = fake_runs(dir.path(), "v8.9", &[90.0]);
    let out = ok(&fathom_at(
        "compare {} {} {} {} --format json",
        &[&base, &slower, &same, &once],
    ));
    let rows: Value = serde_json::from_str(&out).unwrap();
    let by = |name: &str| row_where(&rows, "new", name);
    // 95/100: every run slower than every base run, the whole interval below the 3% band.
    let s = by("v8.7");
    assert_eq!(s["verdict"], "slower");
    // The ratio of geometric means: 0.95 to four places here.
    assert!((f(&s["ratio"]) - 0.95).abs() < 1e-4, "{s}");
    let (lo, hi) = (f(&s["ci95"][0]), f(&s["ci95"][1]));
    assert!(lo <= 0.95 && hi < 1.0, "{lo} {hi}");
    // wKB/o was 2 × 100 / ops: new/base is the inverse of the throughput ratio.
    assert!((f(&s["write_kb_ratio"]) - 100.0 / 95.0).abs() < 0.01);
    // Within 1.5% of the base either way: the same, inside the band.
    assert_eq!(by("v8.8")["verdict"], "same");
    assert_eq!(by("v8.9")["verdict"], "no_verdict");
    // With a 10% threshold the 5% regression is the same: it lies within ±10%.
    let out = ok(&fathom_at(
        "compare {} {} --threshold 10%",
        &[&base, &slower],
    ));
    assert!(out.contains("same"), "{out}");
    let e = err(&fathom(&["compare", base.to_str().unwrap()]));
    assert!(e.contains("nothing to compare"), "{e}");

    // As a CI gate: the slower step fails `--fail-on slower` with status 3, named, and in the
    // JUnit file as a failed case; the same one passes both gates; a step without repeats
    // fails `same-not-reached`.
    let junit = dir.path().join("junit.xml");
    let out = fathom_at(
        "compare {} {} --fail-on slower --junit {}",
        &[&base, &slower, &junit],
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("1 comparison failed the gate")
            && e.contains("overwriteandwait (4 clients): v8.7 vs v8.5: slower, new/base 0.950"),
        "{e}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"1\" failures=\"1\"")
            && xml.contains("<failure type=\"slower\" message=\"overwriteandwait (4 clients)"),
        "{xml}"
    );
    ok(&fathom_at(
        "compare {} {} --fail-on slower,same-not-reached",
        &[&base, &same],
    ));
    // Identical runs pass both gates.
    let twin = fake_runs(dir.path(), "v8.5-again", &[100.0, 101.0, 99.0]);
    ok(&fathom_at(
        "compare {} {} --fail-on slower,same-not-reached",
        &[&base, &twin],
    ));
    let out = fathom_at("compare {} {} --fail-on same-not-reached", &[&base, &once]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let e = err(&fathom_at(
        "compare {} {} --fail-on faster",
        &[&base, &once],
    ));
    assert!(
        e.contains("--fail-on") && e.contains("same-not-reached"),
        "{e}"
    );
}

/// An experiment's `fail_on` gates `fathom run FILE`: a setup whose operations each spin 20 µs
/// under a lock is slower than the plain null engine, and the run exits 3 naming the step.
#[test]
fn an_experiments_fail_on_gates_the_run() {
    let dir = scratch();
    let file = write(
        dir.path(),
        "gate.toml",
        r#"
name = "gate"
clients = [1]
repeats = 3
duration = "500ms"
base = "plain"
fail_on = ["slower"]

[[setup]]
name = "plain"
engine = "null"

[[setup]]
name = "spinning"
engine = "null"
options = "lock=20us"

[[workload]]
name = "dbbench"
params = { num_keys = "1000", steps = "readrandom" }
"#,
    );
    let results = dir.path().join("results");
    let out = fathom(&[
        "run",
        file.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--no-calibrate",
    ]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("failed the gate")
            && e.contains("readrandom (1 client): spinning vs plain: slower"),
        "{e}"
    );
    // The report was printed and every run kept.
    assert_eq!(run_dirs(&results).len(), 6);
}

/// A verdict over runs from hosts that differ says how they differ.
#[test]
fn compare_warns_when_the_hosts_differ() {
    let dir = scratch();
    let base = fake_runs(dir.path(), "v8.5", &[100.0, 101.0, 99.0]);
    let new = fake_runs(dir.path(), "v8.7", &[95.0, 94.5, 95.5]);
    let args = ["compare", base.to_str().unwrap(), new.to_str().unwrap()];
    assert!(!ok(&fathom(&args)).contains("hosts that differ"));
    let manifest = new.join("v8.7.r2/run.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["host"]["cpu_model"] = "Other CPU".into();
    m["host"]["kernel"] = "k2".into();
    std::fs::write(&manifest, m.to_string()).unwrap();
    let out = ok(&fathom(&args));
    assert!(
        out.contains("warning: v8.7 vs v8.5: the runs come from hosts that differ (CPU `-` vs `Other CPU`, kernel `k` vs `k2`)"),
        "{out}"
    ); // JSON's rows carry it too.
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let rows: Value = serde_json::from_str(&ok(&fathom(&json_args))).unwrap();
    let d = rows[0]["host_difference"].as_str().unwrap_or_default();
    assert!(d.contains("kernel `k` vs `k2`"), "{rows}");
}

#[test]
fn merge_adds_operations_and_keeps_latency_exact() {
    let (dir, results, _) = run_ok("--engine null --workload dbbench --param num_keys=30000 --param steps=fillseq,readrandom --duration 1s --clients 1");
    let runs = run_dirs(&results);
    assert_eq!(runs.len(), 1);
    let one = results.join(&runs[0]);
    // The same run merged with itself: twice the operations, the very same percentiles, which
    // the recorder computed without the logs.
    let merged = dir.path().join("merged");
    merge_with_itself(&one, &merged);
    let a = report_json(&one);
    let m = report_json(&merged);
    for name in ["fillseq", "readrandom"] {
        let (s, t) = (step(&a["runs"][0], name), step(&m["runs"][0], name));
        assert_eq!(f(&t["ops"]), 2.0 * f(&s["ops"]), "{name}");
        assert!((f(&t["ops_per_sec"]) - 2.0 * f(&s["ops_per_sec"])).abs() < 1e-6);
        assert_eq!(
            t["latency_us"], s["latency_us"],
            "{name}: latency must be exact"
        );
        assert_eq!(f(&t["clients"]), 2.0);
    }
    assert_eq!(f(&m["runs"][0]["clients"]), 2.0);
    let e = err(&fathom(&["merge", one.to_str().unwrap(), "--out", "x"]));
    assert!(e.contains("at least two runs"), "{e}");
    // The same run twice, or a copy of it, doubles nothing: refused, naming both.
    let twice = dir.path().join("twice");
    let merged_with = |other: &Path| err(&merge(&one, other, &twice));
    let e = merged_with(&one);
    assert!(e.contains("are the same run"), "{e}");
    assert!(!twice.exists());
    let copy = dir.path().join("copy");
    copy_dir(&one, &copy);
    let e = merged_with(&copy);
    assert!(e.contains("copy") && e.contains("are the same run"), "{e}");
}

/// An embedded engine's run killed by the kernel for memory (its run in a child process inside
/// the limited group) is recorded as failed with the cause, the experiment's next run still
/// runs, and nothing of the killed run is left running or on disk but its record.
#[test]
fn a_run_killed_for_memory_is_recorded_and_the_experiment_goes_on() {
    if !needs_root("a_run_killed_for_memory_is_recorded_and_the_experiment_goes_on") {
        return;
    }
    let dir = scratch();
    let file = write(
        dir.path(),
        "starved.toml",
        r#"
name = "starved"
clients = [1, 2]
duration = "1s"

[[setup]]
name = "starved"
engine = "rocksdb"
memory_limit = "4m"

[[setup]]
name = "fed"
engine = "rocksdb"
memory_limit = "256m"

[[workload]]
name = "dbbench"
params = { num_keys = 20000, steps = "fillseq,readrandom" }
"#,
    );
    let results = dir.path().join("results");
    // One client count's pair of runs: the failure count is of the runs this shard has.
    let out = fathom_at(
        "run {} --results {} --no-calibrate --shard 1/2",
        &[&file, &results],
    );
    let e = err(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("out-of-memory killer"), "{e}");
    assert!(e.contains("going on with the next run"), "{e}");
    assert!(e.contains("1 of 2 runs failed (starved.dbbench"), "{e}");
    let report = report_json(&results);
    let starved = row_where(&report["runs"], "setup", "starved");
    let fed = row_where(&report["runs"], "setup", "fed");
    assert_eq!(starved["status"], "failed");
    assert_eq!(fed["status"], "finished");
    assert!(f(&step(&fed, "readrandom")["ops"]) > 0.0);
    let text = report_as(&results, "text");
    assert_holds(
        &text,
        &[
            "failed: killed by the kernel's out-of-memory killer",
            "limited to 4194304 bytes",
        ],
    );
    // The killed run's data directory is gone, and so is every group of this experiment.
    let data: Vec<_> = std::fs::read_dir(results.join(".data"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(data.is_empty(), "{data:?}");
    assert!(processes_mentioning(file.to_str().unwrap()).is_empty());
}

/// An experiment of two identical null-engine setups whose second run of each pair is 25%
/// slower per operation (the null engine's `order_effect`): an order effect of known size. With
/// the default design (setups rotated, rounds paired) no setup is called faster or slower, and
/// the report names the order effect; with `setup_order = "fixed"` the second setup is called
/// slower, and the report warns that the order was fixed.
#[test]
fn an_order_effect_is_no_verdict_with_rotated_setups_and_a_false_one_with_a_fixed_order() {
    let dir = scratch();
    let counter = dir.path().join("order");
    let experiment = |order: &str| {
        let setup = |name: &str| {
            format!(
                "[[setup]]\nname = \"{name}\"\nengine = \"null\"\noptions = \
                 \"latency=200us;order_effect=25%;order_file={}\"\n",
                counter.display()
            )
        };
        format!(
            "name = \"order\"\nclients = [2]\nrepeats = 4\nduration = \"1s\"\nsetup_order = \
             \"{order}\"\n{}{}\n[[workload]]\nname = \"dbbench\"\nparams = {{ num_keys = 1000, \
             steps = \"readrandom\" }}\n",
            setup("first"),
            setup("second")
        )
    };
    let verdict = |order: &str| {
        let file = write(dir.path(), &format!("{order}.toml"), &experiment(order));
        let results = dir.path().join(order);
        let out = run(&format!("{} --no-calibrate", file.display()), &results);
        let text = ok(&out);
        let json = ok(&fathom_at("compare {} --format json", &[&results]));
        let rows: Value = serde_json::from_str(&json).unwrap();
        let row = row_where(&rows, "step", "readrandom");
        (row, text)
    };
    let (row, text) = verdict("rotate");
    assert_eq!(row["design"], "paired", "{row}");
    let v = row["verdict"].as_str().unwrap();
    assert!(v != "faster" && v != "slower", "rotated: {row}");
    let effect = row["order_effect"][0]
        .as_f64()
        .expect("an order effect read");
    assert!((effect - 0.8).abs() < 0.05, "second/first {effect}: {row}");
    assert!(
        text.contains("a run that went second in its round ran"),
        "{text}"
    );
    let (row, text) = verdict("fixed");
    assert_eq!(row["verdict"], "slower", "fixed: {row}");
    assert!(text.contains("setup_order = \"fixed\""), "{text}");
}
