//! fathom as an ordinary user: servers it starts without root, and memory limits in a cgroup
//! delegated to the user. Run as root, each test makes a fresh account and runs a copy of the
//! binary as it with `runuser`; run as anyone else, fathom runs as that user. Every run ends
//! with a report and leaves no process, data directory or socket directory behind.

mod common;

use common::*;
use fathom_measure::cgroup::{mounts, own_groups};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The account fathom runs as, and the copy of fathom it runs.
struct Account {
    /// The account made for the test (as root); `None`: the tests' own user.
    made: Option<String>,
    uid: u32,
    home: PathBuf,
    bin: PathBuf,
    _scratch: Option<tempfile::TempDir>,
}

impl Account {
    /// A fresh account named after `tag` when root (its home under /var/tmp, with a copy of
    /// the binary: the target directory may be under root's private home); else the tests'
    /// own user in a scratch directory.
    fn new(tag: &str) -> Account {
        if uid() != 0 {
            let scratch = server_scratch();
            return Account {
                made: None,
                uid: uid(),
                home: scratch.path().to_path_buf(),
                bin: PathBuf::from(env!("CARGO_BIN_EXE_fathom")),
                _scratch: Some(scratch),
            };
        }
        let name = format!("fathom-{tag}-{}", std::process::id());
        let home = Path::new("/var/tmp").join(&name);
        let made = Command::new("useradd")
            .args(["--create-home", "--shell", "/bin/sh", "--home-dir"])
            .arg(&home)
            .arg(&name)
            .status()
            .expect("useradd runs");
        assert!(made.success(), "useradd {name}: {made}");
        let bin = home.join("fathom");
        std::fs::copy(env!("CARGO_BIN_EXE_fathom"), &bin).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let uid = std::fs::metadata(&home).unwrap().uid();
        Account {
            made: Some(name),
            uid,
            home,
            bin,
            _scratch: None,
        }
    }

    /// A shell command line run as the account, with its own HOME (fathom's engines
    /// directory and caches are under it).
    fn shell(&self, line: &str) -> Output {
        self.shell_command(line).output().expect("the shell runs")
    }

    /// The command that runs `line` as the account, not yet started.
    fn shell_command(&self, line: &str) -> Command {
        let mut cmd = match &self.made {
            Some(name) => {
                let mut c = Command::new("runuser");
                // Releases fetched as root (FerretDB) are where root's fathom finds them.
                let engines = fathom_engines::fetched::engines_dir();
                c.args(["-u", name, "--", "env"])
                    .arg(format!("HOME={}", self.home.display()))
                    .arg(format!("FATHOM_ENGINES={}", engines.display()))
                    .args(["sh", "-c", line]);
                c
            }
            None => {
                let mut c = Command::new("sh");
                c.args(["-c", line]);
                c
            }
        };
        cmd.current_dir(&self.home);
        cmd
    }

    /// `fathom ARGS` as the account, after `before` (a shell command, or nothing).
    fn fathom(&self, before: &str, args: &str) -> Output {
        self.shell(&format!("{before} exec {} {args}", self.bin.display()))
    }

    /// The account's live `fathom run` processes writing into `results`.
    fn fathom_pids(&self, results: &Path) -> Vec<u32> {
        processes_mentioning(results.to_str().unwrap())
            .into_iter()
            .filter(|(pid, cmd)| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                comm.trim() == "fathom" && cmd.contains(" run ")
            })
            .map(|(pid, _)| pid)
            .collect()
    }

    /// Processes of the account still alive (none for the tests' own user: it is running).
    fn processes(&self) -> Vec<String> {
        if self.made.is_none() {
            return Vec::new();
        }
        live_processes()
            .into_iter()
            .filter(|p| p.uid == self.uid)
            .map(|p| p.cmd)
            .collect()
    }

    /// Entries of /tmp the account owns (fathom's socket directories are `fathom-PID-N`).
    fn temp_entries(&self) -> Vec<PathBuf> {
        if self.made.is_none() {
            return Vec::new();
        }
        let tmp = std::env::temp_dir();
        std::fs::read_dir(tmp)
            .unwrap()
            .flatten()
            .filter(|e| e.metadata().is_ok_and(|m| m.uid() == self.uid))
            .map(|e| e.path())
            .collect()
    }

    /// Nothing of a run into `results` is left: no process, no data directory, no socket
    /// directory.
    fn nothing_left(&self, results: &Path) {
        no_server_left(results);
        let left = self.processes();
        assert!(
            left.is_empty(),
            "processes of the account still run: {left:?}"
        );
        let data = results.join(".data");
        let kept: Vec<_> = std::fs::read_dir(&data)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(kept.is_empty(), "data directories left: {kept:?}");
        let tmp = self.temp_entries();
        assert!(tmp.is_empty(), "left in the temporary directory: {tmp:?}");
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        if let Some(name) = &self.made {
            let _ = Command::new("pkill").args(["-KILL", "-u", name]).status();
            let _ = Command::new("userdel").args(["--remove", name]).output();
            let _ = std::fs::remove_dir_all(&self.home);
        }
    }
}

/// The sysbench workload on PostgreSQL, InnoDB, MyRocks and FerretDB (over its PostgreSQL)
/// servers fathom starts as the account: initdb, mariadb-install-db and the servers run as
/// it, with no `chown` and no `user=` line, and each run ends with a report.
#[test]
fn servers_start_as_an_ordinary_user() {
    let me = Account::new("srv");
    for engine in ["postgres", "innodb", "myrocks", "mongodb"] {
        let results = me.home.join("results").join(engine);
        let out = me.fathom(
            "",
            &format!(
                "run --engine {engine} --workload sysbench --duration 2s --param table_size=2000 \
                 --param tests=oltp_point_select --results {}",
                results.display()
            ),
        );
        let printed = ok(&out);
        assert!(printed.contains("oltp_point_select"), "{engine}: {printed}");
        // Written by fathom as the account.
        let owner = std::fs::metadata(&results).unwrap().uid();
        assert_eq!(owner, me.uid, "{engine}: the results' owner");
        let run = &report_json(&results)["runs"][0];
        assert_eq!(run["status"], "finished", "{engine}: {run}");
        assert!(f(&step(run, "oltp_point_select")["ops"]) > 0.0, "{engine}");
        me.nothing_left(&results);
    }
}

/// Without root and outside a delegated group, `--memory-limit` fails and says how to get a
/// group: the command for the cgroup version that holds the memory controller.
#[test]
fn a_memory_limit_without_a_delegated_group_says_how_to_get_one() {
    let me = Account::new("nolim");
    let results = me.home.join("results");
    let out = me.fathom(
        "",
        &format!(
            "run --engine rocksdb --workload dbbench --param steps=fillseq --param num_keys=1000 \
             --memory-limit 256m --results {}",
            results.display()
        ),
    );
    let e = err(&out);
    assert!(e.contains("--memory-limit"), "{e}");
    assert!(
        e.contains("systemd-run --user --scope -p Delegate=yes")
            || (e.contains("sudo mkdir") && e.contains("cgroup.procs")),
        "the error names how to get a delegated group: {e}"
    );
    me.nothing_left(&results);
}

/// In a cgroup v1 memory group root made and gave to the account (what the error above says
/// to do), fathom as the account limits an embedded engine's memory in a child group of it,
/// and removes that child afterwards.
#[test]
fn a_memory_limit_in_a_group_delegated_to_the_user() {
    if !needs_root("a_memory_limit_in_a_group_delegated_to_the_user") {
        return;
    }
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let (Some(v1), _) = mounts(&info) else {
        // cgroup v2 only: delegation is systemd's (`systemd-run --user --scope -p
        // Delegate=yes`), which needs a user session this test does not have.
        println!(
            "SKIPPED a_memory_limit_in_a_group_delegated_to_the_user: the memory controller \
             is not on cgroup v1 here"
        );
        return;
    };
    let own = own_groups(&std::fs::read_to_string("/proc/self/cgroup").unwrap()).0;
    let me = Account::new("lim");
    let group = v1
        .join(own.unwrap_or_default().trim_start_matches('/'))
        .join(format!("fathom-delegated-{}", std::process::id()));
    std::fs::create_dir(&group).unwrap();
    let owner = Command::new("chown")
        .args(["-R", &me.uid.to_string()])
        .arg(&group)
        .status()
        .unwrap();
    assert!(owner.success());
    let results = me.home.join("results");
    let out = me.fathom(
        &format!("echo $$ > {}/cgroup.procs &&", group.display()),
        &format!(
            "run --engine rocksdb --workload dbbench --param steps=fillseq,readrandom \
             --param num_keys=20000 --duration 1s --memory-limit 64m --results {}",
            results.display()
        ),
    );
    ok(&out);
    let run = &report_json(&results)["runs"][0];
    let limit = run["host"]["memory_limit"].as_str().unwrap_or_default();
    assert!(
        limit.contains(group.to_str().unwrap()) && limit.contains("limited to 67108864"),
        "the limit's group is a child of the delegated one: {limit:?} in {run}"
    );
    let children: Vec<_> = std::fs::read_dir(&group)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.path())
        .collect();
    assert!(children.is_empty(), "child groups left: {children:?}");
    std::fs::remove_dir(&group).unwrap();
    me.nothing_left(&results);
}

/// Ctrl-C (SIGINT) to fathom running as the account mid-step, on a PostgreSQL server it started
/// as the account: fathom stops the server and exits, the finished step is readable, and
/// nothing is left.
#[test]
fn an_interrupted_server_run_as_an_ordinary_user_leaves_nothing() {
    let me = Account::new("int");
    let results = me.home.join("results");
    let mut child = me
        .shell_command(&format!(
            "exec {} run --engine postgres --workload sysbench --duration 60s \
             --param table_size=2000 --param tests=oltp_point_select --results {}",
            me.bin.display(),
            results.display()
        ))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_point_selects(&results);
    let pids = me.fathom_pids(&results);
    assert_eq!(pids.len(), 1, "one fathom process: {pids:?}");
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pids[0] as i32, libc::SIGINT) };
    let ended = wait_for(60, || child.try_wait().unwrap().is_some());
    if !ended {
        let _ = child.kill();
    }
    assert!(ended, "fathom did not end within 60 s of SIGINT");
    let run = &report_json(&results)["runs"][0];
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(
        f(&step(run, "prepare")["ops"]) > 0.0,
        "the finished step: {run}"
    );
    me.nothing_left(&results);
}

/// `--profile` as an ordinary user: perf may not sample every CPU, so it follows fathom's own
/// process, and with Debian's `kernel.perf_event_paranoid` 2 it sees user space only; the
/// step's record says both. Above 2 the run is refused before anything runs, naming the fix.
#[test]
fn a_profile_as_an_ordinary_user_follows_its_own_processes() {
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let me = Account::new("prof");
    let results = me.home.join("results");
    let out = me.fathom(
        "",
        &format!(
            "run --engine rocksdb --workload dbbench --param num_keys=100000 \
             --param steps=fillseq,readrandom --duration 2s --profile --results {}",
            results.display()
        ),
    );
    if paranoid > 2 {
        let e = err(&out);
        assert_holds(&e, &["perf_event_paranoid", "sysctl"]);
        return;
    }
    ok(&out);
    let run = &report_json(&results)["runs"][0];
    let p = &step(run, "readrandom")["profile"];
    assert!(f(&p["samples"]) > 0.0, "{p}");
    let problems = p["problems"].to_string();
    assert_eq!(
        problems.contains("followed the processes"),
        paranoid > 0,
        "{p}"
    );
    assert_eq!(
        problems.contains("kernel frames are not sampled"),
        paranoid > 1,
        "{p}"
    );
    let folded = results
        .read_dir()
        .unwrap()
        .flatten()
        .map(|r| r.path().join(p["folded"].as_str().unwrap()))
        .find(|f| f.exists())
        .expect("the folded stacks");
    let stacks = std::fs::read_to_string(folded).unwrap();
    assert!(stacks.contains("rocksdb::DBImpl::GetImpl"), "{stacks}");
    me.nothing_left(&results);
}

/// `fathom calibrate` and `--waits` as the account: fio runs without real-time priority (an
/// ordinary user may not have it) and `device.json` says so; `--waits` samples the server's
/// processes the account started, none unreadable, and the run records what it cost; `--waits=bpf`
/// is refused before anything runs, saying it needs root and that sampling works.
#[test]
fn calibrate_and_waits_as_an_ordinary_user() {
    let me = Account::new("waits");
    let results = me.home.join("results");
    let out = me.fathom(
        "",
        &format!(
            "calibrate --seconds 0.5 --repeats 1 --size-mib 64 --results {}",
            results.display()
        ),
    );
    ok(&out);
    let device: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(results.join("device.json")).expect("device.json"),
    )
    .unwrap();
    let limits = &device["devices"][0];
    assert!(f(&limits["figures"][0]["median"]) > 0.0, "{limits}");
    if limits["realtime"] == false {
        assert!(
            limits["notes"]
                .to_string()
                .contains("without real-time priority"),
            "{limits}"
        );
    }
    let out = me.fathom(
        "",
        &format!(
            "run --engine postgres --workload sysbench --duration 2s --param table_size=2000 \
             --param tests=oltp_point_select --waits --results {}",
            results.display()
        ),
    );
    ok(&out);
    let run = &report_json(&results)["runs"][0];
    assert_eq!(
        run["host"]["device_limits"]["device"], limits["device"],
        "{run}"
    );
    let waits = &step(run, "oltp_point_select")["waits"];
    assert!(f(&waits["engine"]["samples"]) > 0.0, "{waits}");
    assert!(f(&waits["clients"]["samples"]) > 0.0, "{waits}");
    assert_eq!(f(&waits["unreadable"]), 0.0, "{waits}");
    assert!(f(&waits["cost_ms"]) > 0.0, "{waits}");
    // The eBPF method needs root: refused before anything runs, saying why and what works.
    let out = me.fathom(
        "",
        &format!(
            "run --engine null --workload dbbench --duration 1s --waits=bpf --results {}",
            results.join("bpf").display()
        ),
    );
    let e = err(&out);
    assert!(
        e.contains("--waits: bpf:")
            && e.contains("needs root")
            && e.contains("--waits (sampling) works"),
        "{e}"
    );
    assert!(!results.join("bpf").exists(), "{e}");
    me.nothing_left(&results);
}
