//! Helpers the end-to-end test files share: running the `fathom` binary, checking how it
//! exited, scratch directories on the real disk, and reading reports back.
#![allow(dead_code)]

pub use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub fn fathom(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(args)
        .output()
        .expect("fathom runs")
}

/// `fathom LINE`, the arguments written as one whitespace-separated line in which each `{}`
/// stands for the next of `paths` (passed as they are, spaces and all).
pub fn fathom_at(line: &str, paths: &[&Path]) -> Output {
    let mut paths = paths.iter();
    let args: Vec<&std::ffi::OsStr> = line
        .split_whitespace()
        .map(|word| match word {
            "{}" => paths.next().expect("a path for each {}").as_os_str(),
            _ => word.as_ref(),
        })
        .collect();
    assert!(paths.next().is_none(), "more paths than {{}} in `{line}`");
    Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(args)
        .output()
        .expect("fathom runs")
}

/// Asserts that `text` holds each of `wanted`, naming the ones it lacks.
pub fn assert_holds(text: &str, wanted: &[&str]) {
    let lacking: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|w| !text.contains(w))
        .collect();
    assert!(lacking.is_empty(), "lacks {lacking:?}:\n{text}");
}

/// `fathom ARGS` (one whitespace-separated line) with the environment variable `key` set to
/// `value`.
pub fn fathom_with(args: &str, key: &str, value: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(args.split_whitespace())
        .env(key, value)
        .output()
        .expect("fathom runs")
}

/// An experiment file named `name` of two null-engine setups, `one` and `two`, running
/// dbbench's fillseq and readrandom over `num_keys` keys at 1 and 2 clients, 3 repeats.
pub fn null_pair(name: &str, duration: &str, interval: &str, num_keys: u64) -> String {
    format!(
        r#"
name = "{name}"
description = "two setups of the null engine"
clients = [1, 2]
repeats = 3
duration = "{duration}"
interval = "{interval}"

[[setup]]
name = "one"
engine = "null"

[[setup]]
name = "two"
engine = "null"

[[workload]]
name = "dbbench"
params = {{ num_keys = {num_keys}, steps = "fillseq,readrandom" }}
"#
    )
}

/// The run directories in `results`, by name.
pub fn run_dirs(results: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(results)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("run.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A copy of the directory `from` (a run, a results directory) at `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Names host `name` in a run's manifest, so `merge` takes a copy of a run for another host's
/// run (a plain copy is refused as the same run given twice).
pub fn as_another_host(run: &Path, name: &str) {
    let manifest = run.join("run.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["host"]["hostname"] = Value::from(name);
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// `fathom merge RUN COPY --out OUT`: one run merged with a copy of itself made another host's
/// (its `run.json` names another host), as two hosts' runs of the same figures. (The same run
/// twice is refused.)
pub fn merge_with_itself(run: &Path, out: &Path) -> String {
    let copy = out.with_extension("other-host");
    copy_dir(run, &copy);
    as_another_host(&copy, "other-host");
    ok(&merge(run, &copy, out))
}

/// `fathom merge A B --out OUT`.
pub fn merge(a: &Path, b: &Path, out: &Path) -> Output {
    fathom_at("merge {} {} --out {}", &[a, b, out])
}

/// `fathom run ARGS --results RESULTS`, the arguments written as one whitespace-separated line.
pub fn run(args: &str, results: &Path) -> Output {
    let mut argv = vec!["run"];
    argv.extend(args.split_whitespace());
    argv.extend(["--results", results.to_str().unwrap()]);
    fathom(&argv)
}

/// Whether a test that needs root (and cgroups) may run. Not root, it fails naming itself, unless
/// `FATHOM_SKIP_ROOT_TESTS` is set: then it says by name that it was skipped. No test passes
/// for want of root.
pub fn needs_root(test: &str) -> bool {
    let root = uid() == 0 && Path::new("/sys/fs/cgroup").exists();
    if root {
        return true;
    }
    if std::env::var_os("FATHOM_SKIP_ROOT_TESTS").is_some() {
        println!("SKIPPED {test}: needs root and cgroups (FATHOM_SKIP_ROOT_TESTS is set)");
        return false;
    }
    panic!(
        "{test} needs root and cgroups: run the tests as root, or set FATHOM_SKIP_ROOT_TESTS=1 \
         to skip it by name"
    );
}

pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "fathom failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn err(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected failure, got: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A scratch directory on the same disk as the tests' working directory (not a tmpfs), so
/// device counters move.
pub fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tempfile::tempdir_in(base).expect("scratch dir")
}

/// `fathom run ARGS` into a fresh scratch directory's `results`, which must succeed: the
/// scratch directory (keep it alive), the results directory and what it printed.
pub fn run_ok(args: &str) -> (tempfile::TempDir, PathBuf, String) {
    let dir = scratch();
    let results = dir.path().join("results");
    let stdout = ok(&run(args, &results));
    (dir, results, stdout)
}

/// `fathom report RESULTS --format FORMAT`.
pub fn report_as(results: &Path, format: &str) -> String {
    ok(&fathom(&[
        "report",
        results.to_str().unwrap(),
        "--format",
        format,
    ]))
}

pub fn report_json(results: &Path) -> Value {
    serde_json::from_str(&report_as(results, "json")).expect("report --format json is JSON")
}

pub fn step<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// The element of the JSON array `rows` whose `key` is `value`.
pub fn row_where(rows: &Value, key: &str, value: &str) -> Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r[key] == value)
        .unwrap_or_else(|| panic!("no row with {key} = {value}"))
        .clone()
}

/// The row of the report's JSON table titled `title` whose first cell is `first`, as column
/// name -> value.
pub fn table_row(report: &Value, title: &str, first: &str) -> serde_json::Map<String, Value> {
    let table = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["title"] == title)
        .unwrap_or_else(|| panic!("no table `{title}` in {report}"));
    let row = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[0] == first)
        .unwrap_or_else(|| panic!("no row {first} in `{title}`: {table}"));
    table["header"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_string())
        .zip(row.as_array().unwrap().iter().cloned())
        .collect()
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A scratch directory the `postgres` user can reach (the target directory may sit under a
/// private home), on the real disk.
pub fn server_scratch() -> tempfile::TempDir {
    tempfile::tempdir_in("/var/tmp").expect("scratch dir in /var/tmp")
}

/// The tests' user id.
pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() }
}

/// A live process seen in /proc.
pub struct Proc {
    pub pid: u32,
    /// Its real user id.
    pub uid: u32,
    /// Its command line, arguments joined by spaces.
    pub cmd: String,
}

/// Live (not zombie) processes but the tests' own.
pub fn live_processes() -> Vec<Proc> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let uid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next()?.parse::<u32>().ok());
        let zombie = status.lines().any(|l| l.starts_with("State:\tZ"));
        let (Some(uid), false) = (uid, zombie || pid == std::process::id()) else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        found.push(Proc { pid, uid, cmd });
    }
    found
}

/// Live (not zombie) processes whose command line mentions `needle`: servers fathom started
/// for a results directory carry its path in their arguments.
pub fn processes_mentioning(needle: &str) -> Vec<(u32, String)> {
    live_processes()
        .into_iter()
        .filter(|p| p.cmd.contains(needle))
        .map(|p| (p.pid, p.cmd))
        .collect()
}

/// Waits up to `secs` for `cond`.
pub fn wait_for(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// Asserts that no process mentions `dir` (servers fathom started for it carry its path).
pub fn no_server_left(dir: &Path) {
    let left = processes_mentioning(dir.to_str().unwrap());
    assert!(left.is_empty(), "still running: {left:?}");
}

/// Starts a sysbench run on `engine` into `results` with a 60 s timed step, and returns once
/// that step (the run's second) is under way.
pub fn start_long_run(engine: &str, results: &Path) -> Child {
    start_long_run_in(engine, results, &std::env::temp_dir())
}

/// `start_long_run` with `tmp` for its `TMPDIR`, where a server's socket directory goes: out
/// of reach of the other tests' runs, each of which removes the socket directories of dead
/// fathoms it finds in its own.
pub fn start_long_run_in(engine: &str, results: &Path, tmp: &Path) -> Child {
    let line = format!(
        "run --engine {engine} --workload sysbench --clients 2 --duration 60s \
         --param table_size=2000 --results"
    );
    let child = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(line.split_whitespace())
        .arg(results)
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_point_selects(results);
    child
}

/// Returns once a sysbench run into `results` has recorded an interval of its timed step (the
/// run's second), within 90 s.
pub fn wait_for_point_selects(results: &Path) {
    let started = wait_for(90, || {
        std::fs::read_dir(results).is_ok_and(|d| {
            d.flatten().any(|e| {
                let f = e.path().join("steps/02-oltp_point_select.intervals.jsonl");
                std::fs::metadata(f).is_ok_and(|m| m.len() > 0)
            })
        })
    });
    assert!(started, "the timed step never started");
}

/// `fathom serve --engine ENGINE` with its data under `dir` (its stderr in `dir/serve.log`),
/// once ready: the process, the server's URL and its pid.
pub fn serve(engine: &str, dir: &Path) -> (Child, String, String) {
    serve_with(engine, dir, &[])
}

/// `serve` with more arguments (`--network namespace`).
pub fn serve_with(engine: &str, dir: &Path, more: &[&str]) -> (Child, String, String) {
    let url_file = dir.join("url");
    let child = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(["serve", "--engine", engine])
        .args(more)
        .arg("--data-dir")
        .arg(dir.join("server"))
        .arg("--url-file")
        .arg(&url_file)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("serve.log")).unwrap())
        .spawn()
        .unwrap();
    assert!(
        wait_for(120, || url_file.exists()),
        "fathom serve never became ready"
    );
    let text = std::fs::read_to_string(&url_file).unwrap();
    let mut lines = text.lines().map(str::to_string);
    let (url, pid) = (lines.next().unwrap(), lines.next().unwrap());
    (child, url, pid)
}

/// The server's network namespace's file, the third line of the url file `serve_with` waited
/// for in `dir` (`fathom serve --network namespace`).
pub fn served_netns(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("url")).unwrap();
    text.lines().nth(2).expect("a namespace's line").to_string()
}

/// `fathom history` of readrandom on the null engine's dbbench runs in the results database
/// `store` (a path or a URL), with more arguments.
pub fn null_history(store: &str, more: &[&str]) -> Output {
    let mut args = vec![
        "history",
        "--engine",
        "null",
        "--workload",
        "dbbench",
        "--step",
        "readrandom",
        "--store",
        store,
    ];
    args.extend(more);
    fathom(&args)
}

/// The merged run in `merged` started each of `steps` on its hosts within half a second.
pub fn started_together(merged: &Path, steps: &[&str]) {
    let report = report_json(merged);
    for name in steps {
        let skew = step(&report["runs"][0], name)["start_skew_seconds"]
            .as_f64()
            .expect("a merged step's start skew");
        assert!(skew < 0.5, "{name} started {skew}s apart");
    }
}
