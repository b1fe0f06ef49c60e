//! Faults on real engines and servers: fathom interrupted (SIGINT, SIGTERM) at seeded random
//! points of experiments across engines and all four workloads, then resumed; fathom killed
//! with SIGKILL and the next run removing what it left; a PostgreSQL server killed mid-step;
//! a full disk; the results directory deleted mid-run. After each: every finished step
//! readable, nothing left running. `FATHOM_FAULT_RUNS` and `FATHOM_FAULT_SEED` set how many
//! interrupted experiments and which (bench/faults.sh runs many).

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The experiments interrupted at random: an engine, a workload and small parameters each.
const CASES: &[(&str, &str, &str)] = &[
    (
        "sqlite",
        "dbbench",
        r#"{ num_keys = 20000, steps = "fillseq,readrandom,overwrite" }"#,
    ),
    (
        "rocksdb",
        "ibench",
        r#"{ rows = 4000, write_rows = 2000, settle = "0s", query_secs = "1s", steps = "l.i0,l.x,l.i1,qr200" }"#,
    ),
    (
        "wiredtiger",
        "linkbench",
        r#"{ maxid1 = 2001, duration = "2s" }"#,
    ),
    (
        "postgres",
        "sysbench",
        r#"{ table_size = 2000, tests = "oltp_point_select,oltp_read_only" }"#,
    ),
    (
        "innodb",
        "linkbench",
        r#"{ maxid1 = 2001, duration = "2s" }"#,
    ),
    (
        "lmdb",
        "sysbench",
        r#"{ table_size = 2000, tests = "oltp_point_select" }"#,
    ),
    (
        "postgres",
        "ibench",
        r#"{ rows = 4000, write_rows = 2000, settle = "0s", query_secs = "1s", steps = "l.i0,l.x,qr200" }"#,
    ),
    ("rocksdb", "dbbench", r#"{ num_keys = 20000 }"#),
];

/// A small seeded generator (xorshift64*), so a failing draw can be replayed from its seed.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` at most `secs`; a hang is a failure (and the child is killed).
fn finish(mut child: Child, secs: u64, what: &str) -> std::process::Output {
    let end = Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            panic!("{what}: fathom did not end within {secs}s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid as i32, sig) };
}

/// The socket directories fathom `pid` made in `tmp`.
fn socket_dirs_of(tmp: &Path, pid: u32) -> Vec<PathBuf> {
    let prefix = format!("fathom-{pid}-");
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// Markers of data directories in use, left in `RESULTS/.data`.
fn running_markers(results: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(results.join(".data"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".running"))
                .collect()
        })
        .unwrap_or_default()
}

/// Each run directory under `results` with its run.json's status and modification time.
fn cells(results: &Path) -> Vec<(String, String, std::time::SystemTime)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(results).unwrap().flatten() {
        let manifest = e.path().join("run.json");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let json: Value = serde_json::from_str(&text)
            .unwrap_or_else(|err| panic!("{} is not whole JSON: {err}", manifest.display()));
        let when = std::fs::metadata(&manifest).unwrap().modified().unwrap();
        v.push((
            e.file_name().to_string_lossy().into_owned(),
            json["status"].as_str().unwrap_or("").to_string(),
            when,
        ));
    }
    v.sort();
    v
}

fn experiment(dir: &Path, engine: &str, workload: &str, params: &str) -> PathBuf {
    let file = dir.join("faults.toml");
    let text = format!(
        "name = \"faults\"\nclients = [1, 2]\nduration = \"2s\"\ninterval = \"500ms\"\n\n\
         [[setup]]\nname = \"{engine}\"\nengine = \"{engine}\"\n\n\
         [[workload]]\nname = \"{workload}\"\nparams = {params}\n"
    );
    std::fs::write(&file, text).unwrap();
    file
}

/// One experiment interrupted at a drawn moment with a drawn signal, checked, then resumed.
fn interrupt_and_resume(draw: &mut Draw, round: usize) {
    let (engine, workload, params) = CASES[draw.below(CASES.len() as u64) as usize];
    let (sig, sig_name) = if draw.below(2) == 0 {
        (libc::SIGINT, "SIGINT")
    } else {
        (libc::SIGTERM, "SIGTERM")
    };
    let after = Duration::from_millis(200 + draw.below(9_000));
    let what = format!("round {round}: {engine} {workload}, {sig_name} after {after:?}");
    eprintln!("{what}");
    let dir = server_scratch();
    let file = experiment(dir.path(), engine, workload, params);
    let results = dir.path().join("results");
    let args = [
        "run",
        file.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ];
    let child = spawn(&args);
    let pid = child.id();
    std::thread::sleep(after);
    signal(pid, sig);
    let out = finish(child, 180, &what);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let left = processes_mentioning(results.to_str().unwrap());
    assert!(left.is_empty(), "{what}: still running: {left:?}\n{stderr}");
    assert!(
        socket_dirs_of(&std::env::temp_dir(), pid).is_empty(),
        "{what}: socket directories left"
    );
    assert!(
        running_markers(&results).is_empty(),
        "{what}: data directories left"
    );
    let before = cells(&results);
    for (name, status, _) in &before {
        assert!(
            status == "finished" || status == "interrupted",
            "{what}: {name} is `{status}`\n{stderr}"
        );
    }
    if !before.is_empty() {
        let report = report_json(&results);
        let runs = report["runs"].as_array().unwrap();
        for r in runs.iter().filter(|r| r["status"] == "interrupted") {
            let last = r["steps"].as_array().unwrap().last();
            assert!(
                last.is_none_or(|s| s["interrupted"] == true || s["ops"].as_f64() > Some(0.0)),
                "{what}: the interrupted run's last step is neither marked nor whole: {r}"
            );
        }
    }
    // Resumed: every cell finishes; those finished before are not run again.
    let out = ok(&fathom(&args));
    drop(out);
    let after_resume = cells(&results);
    assert_eq!(after_resume.len(), 2, "{what}: {after_resume:?}");
    assert!(
        after_resume.iter().all(|(_, s, _)| s == "finished"),
        "{what}"
    );
    for (name, status, when) in before.iter().filter(|(_, s, _)| s == "finished") {
        let now = after_resume.iter().find(|(n, _, _)| n == name).unwrap();
        assert_eq!((&now.1, now.2), (status, *when), "{what}: {name} ran twice");
    }
    assert!(processes_mentioning(results.to_str().unwrap()).is_empty());
}

#[test]
fn interrupted_at_random_points_every_finished_step_stays_and_a_resume_finishes() {
    let seed = env_u64("FATHOM_FAULT_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1
    });
    let rounds = env_u64("FATHOM_FAULT_RUNS").unwrap_or(3) as usize;
    eprintln!("FATHOM_FAULT_SEED={seed} FATHOM_FAULT_RUNS={rounds}");
    let mut draw = Draw(seed);
    for round in 1..=rounds {
        interrupt_and_resume(&mut draw, round);
    }
}

#[test]
fn a_killed_fathom_leaves_no_server_and_the_next_run_removes_its_directories() {
    let dir = server_scratch();
    let results = dir.path().join("results");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let child = start_long_run_in("postgres", &results, &tmp);
    let pid = child.id();
    signal(pid, libc::SIGKILL);
    let _ = finish(child, 30, "SIGKILL");
    // The server dies with its parent (a parent-death signal), within a moment.
    assert!(
        wait_for(30, || processes_mentioning(results.to_str().unwrap())
            .is_empty()),
        "a server outlived fathom"
    );
    let sockets = socket_dirs_of(&tmp, pid);
    let markers = running_markers(&results);
    assert!(
        !sockets.is_empty() && !markers.is_empty(),
        "nothing left to clean?"
    );
    // In the killed run's TMPDIR, so that this run, and no other test's, finds what it left.
    let out = fathom_with(
        &format!(
            "run --engine postgres --workload sysbench --clients 1 --duration 1s \
             --param table_size=500 --results {}",
            results.display()
        ),
        "TMPDIR",
        &tmp,
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out);
    assert!(stderr.contains("removed socket directory"), "{stderr}");
    assert!(stderr.contains("removed data directory"), "{stderr}");
    assert!(sockets.iter().all(|s| !s.exists()));
    assert!(running_markers(&results).is_empty());
    let data_left: Vec<_> = std::fs::read_dir(results.join(".data")).unwrap().collect();
    assert!(data_left.is_empty(), "{data_left:?}");
    // The killed run's finished step is readable; the report says it was killed (its
    // recorded process is gone), not that it is still running.
    let report = report_json(&results);
    let statuses: Vec<&serde_json::Value> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["status"])
        .collect();
    let killed = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "killed")
        .unwrap_or_else(|| panic!("the killed run, among {statuses:?}"));
    assert!(f(&step(killed, "prepare")["ops"]) > 0.0);
}

#[test]
fn a_killed_postgres_fails_the_run_with_its_exit_and_log() {
    let dir = server_scratch();
    let results = dir.path().join("results");
    let child = start_long_run("postgres", &results);
    // The postmaster is fathom's child; its backends are the postmaster's.
    let postmaster = processes_mentioning(results.to_str().unwrap())
        .into_iter()
        .find(|(p, _)| parent_of(*p) == Some(child.id()))
        .expect("a postmaster");
    signal(postmaster.0, libc::SIGKILL);
    let out = finish(child, 120, "postgres killed");
    let stderr = err(&out);
    assert_holds(&stderr, &["exited", "last lines of"]);
    let r = &report_json(&results)["runs"][0];
    assert_eq!(r["status"], "failed");
    assert!(f(&step(r, "prepare")["ops"]) > 0.0);
    assert!(processes_mentioning(results.to_str().unwrap()).is_empty());
}

fn parent_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// A small tmpfs mounted for the test's life.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: PathBuf, size: &str) -> SmallDisk {
        std::fs::create_dir_all(&at).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .status()
            .expect("mount runs (the tests run as root)");
        assert!(status.success(), "mounting a tmpfs needs root");
        SmallDisk(at)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_a_clear_error_naming_the_directory_and_results_stay() {
    let dir = scratch();
    let disk = SmallDisk::mount(dir.path().join("small"), "16m");
    let data = disk.0.join("db");
    let results = dir.path().join("results");
    for engine in ["rocksdb", "sqlite"] {
        let _ = std::fs::remove_dir_all(&data);
        let out = run(
            &format!(
                "--engine {engine} --workload dbbench --data-dir {} --param num_keys=2000000 \
                 --param steps=fillseq,readrandom --name {engine}.full",
                data.display()
            ),
            &results,
        );
        let stderr = err(&out);
        assert!(
            stderr.contains(&data.display().to_string()) && stderr.contains("ENOSPC"),
            "{engine}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let report = report_json(&results);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs
        .iter()
        .all(|r| r["status"] == "failed" && r["error"].as_str().unwrap().contains("ENOSPC")));
}

#[test]
fn results_deleted_mid_run_stop_the_step_and_the_server() {
    let dir = server_scratch();
    let results = dir.path().join("results");
    let child = start_long_run("postgres", &results);
    let started = Instant::now();
    std::fs::remove_dir_all(&results).unwrap();
    let out = finish(child, 60, "results deleted");
    let stderr = err(&out);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the 60 s step ran on after its results were deleted"
    );
    assert!(
        stderr.contains("was removed while the step ran"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(processes_mentioning(dir.path().to_str().unwrap()).is_empty());
}
