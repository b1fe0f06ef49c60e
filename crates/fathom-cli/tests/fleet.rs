//! Several machines on one benchmark. An experiment run as concurrent shards, each with the
//! variables a Kubernetes Indexed Job or a Slurm array sets, holds the cells of the unsharded
//! run, each once; reports read the shards' directories as one experiment and refuse
//! directories of different definitions. Client hosts meeting at a barrier start each step
//! together, and the merge of their runs says how far apart they started. Every finished run
//! is also a row of the results database, and `fathom store import` records what was not.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;

/// Two setups of the null engine, short steps: 12 cells in 6 groups of compared setups.
static EXPERIMENT: LazyLock<String> =
    LazyLock::new(|| null_pair("sharded", "300ms", "100ms", 2000));

/// Starts `fathom run FILE --shard auto --results DIR` with the scheduler's variables.
fn shard(file: &Path, results: &Path, vars: &[(&str, String)]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--shard",
            "auto",
            "--no-calibrate",
        ])
        .arg("--results")
        .arg(results)
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fathom runs")
}

/// Runs the shards at once and waits for all; their results directories.
fn run_shards(
    file: &Path,
    root: &Path,
    name: &str,
    vars: Vec<Vec<(&str, String)>>,
) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = (0..vars.len())
        .map(|i| root.join(format!("{name}-{i}")))
        .collect();
    let children: Vec<_> = vars
        .iter()
        .zip(&dirs)
        .map(|(v, d)| shard(file, d, v))
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dirs
}

#[test]
fn shards_hold_the_unsharded_cells_once_and_report_as_one() {
    let dir = scratch();
    let file = dir.path().join("e.toml");
    std::fs::write(&file, &*EXPERIMENT).unwrap();
    let all = dir.path().join("all");
    ok(&run(&format!("{} --no-calibrate", file.display()), &all));
    let whole = run_dirs(&all);
    assert_eq!(whole.len(), 12);

    let k8s = (0..3)
        .map(|i| {
            vec![
                ("JOB_COMPLETION_INDEX", i.to_string()),
                ("JOB_COMPLETIONS", "3".into()),
            ]
        })
        .collect();
    let slurm = (1..=2)
        .map(|i| {
            vec![
                ("SLURM_ARRAY_TASK_ID", i.to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".into()),
                ("SLURM_ARRAY_TASK_COUNT", "2".into()),
            ]
        })
        .collect();
    for (name, vars) in [("k8s", k8s), ("slurm", slurm)] {
        let dirs = run_shards(&file, dir.path(), name, vars);
        let mut union: Vec<String> = dirs.iter().flat_map(|d| run_dirs(d)).collect();
        union.sort();
        assert_eq!(union, whole, "{name}: the shards' cells, each once");
        every_setup_of_a_group_on_one_shard(name, &dirs);
        let mut args = vec!["report".to_string()];
        args.extend(dirs.iter().map(|d| d.display().to_string()));
        args.extend(["--format".into(), "json".into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let report: Value = serde_json::from_str(&ok(&fathom(&args))).unwrap();
        assert_eq!(report["runs"].as_array().unwrap().len(), 12, "{name}");
    }

    refuses_other_definitions_and_cells_twice(dir.path(), &all);
    // An experiment's results import whole, each run once (they recorded themselves too).
    let fresh = dir.path().join("fresh.db");
    let out = ok(&fathom_at("store import {} --store {}", &[&all, &fresh]));
    assert!(out.contains("12 runs recorded, 0 recorded before"), "{out}");
    assert_eq!(
        rows(&dir.path().join("fathom.db"), "runs"),
        12 * 3 + 4,
        "all, k8s, slurm, other"
    );
}

/// Every setup of a (repeat, client count) ran on one shard: compared cells share a host.
fn every_setup_of_a_group_on_one_shard(name: &str, dirs: &[PathBuf]) {
    for d in dirs {
        // Every setup of a (repeat, client count) on one shard: compared cells share a host.
        let cells = run_dirs(d);
        for c in &cells {
            let pair = match c.strip_prefix("one.") {
                Some(rest) => format!("two.{rest}"),
                None => format!("one.{}", c.trim_start_matches("two.")),
            };
            assert!(
                cells.contains(&pair),
                "{name}: {c} without {pair} in {}",
                d.display()
            );
        }
    }
}

/// A shard of another definition is refused, naming the line that differs, and so is a
/// directory holding cells another holds.
fn refuses_other_definitions_and_cells_twice(root: &Path, all: &Path) {
    // A shard of another definition is refused, naming the line that differs.
    let changed = root.join("changed.toml");
    std::fs::write(
        &changed,
        EXPERIMENT.replace("num_keys = 2000", "num_keys = 3000"),
    )
    .unwrap();
    let other = root.join("other");
    let out = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args([
            "run",
            changed.to_str().unwrap(),
            "--shard",
            "2/3",
            "--no-calibrate",
        ])
        .arg("--results")
        .arg(&other)
        .output()
        .unwrap();
    ok(&out);
    let first = root.join("k8s-0");
    let e = err(&fathom_at("report {} {}", &[&first, &other]));
    assert_holds(
        &e,
        &["differently defined", "num_keys = 2000", "num_keys = 3000"],
    );
    // The whole run beside one of its shards holds cells twice.
    let e = err(&fathom_at("report {} {}", &[all, &first]));
    assert!(e.contains("both hold cell"), "{e}");
}

/// Client host `i` of `hosts`: a null-engine run meeting the others at `barrier`.
fn barrier_host(
    root: &Path,
    barrier: &Path,
    i: usize,
    hosts: &str,
    timeout: &str,
) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args("run --engine null --workload dbbench --no-calibrate".split(' '))
        .args([
            "--param",
            "num_keys=2000",
            "--param",
            "steps=fillseq,readrandom",
        ])
        .args([
            "--duration",
            "300ms",
            "--barrier-hosts",
            hosts,
            "--barrier-timeout",
            timeout,
        ])
        .arg("--barrier")
        .arg(barrier)
        .arg("--results")
        .arg(root.join(format!("host-{i}")))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fathom runs")
}

/// Waits for client hosts 0 and 1 (their results in `root/host-0`, `root/host-1`), which must
/// succeed, and merges their runs into `root/merged`.
fn merge_hosts(root: &Path, hosts: [std::process::Child; 2]) -> PathBuf {
    for c in hosts {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let run_of = |i: usize| {
        let h = root.join(format!("host-{i}"));
        h.join(&run_dirs(&h)[0])
    };
    let merged = root.join("merged");
    ok(&fathom_at(
        "merge {} {} --out {}",
        &[&run_of(0), &run_of(1), &merged],
    ));
    merged
}

/// Two client hosts (here two processes) meet at a barrier before each step: the merge of
/// their runs started each step within a fraction of a second. A third host that never comes
/// makes the barrier fail after its timeout, naming the hosts that were ready.
#[test]
fn hosts_at_a_barrier_start_each_step_together() {
    let dir = scratch();
    let barrier = dir.path().join("barrier");
    let host = |i: usize, hosts: &str, timeout: &str| {
        barrier_host(dir.path(), &barrier, i, hosts, timeout)
    };
    // The second host starts a second later: the first waits for it at fillseq.
    let first = host(0, "2", "30s");
    std::thread::sleep(std::time::Duration::from_secs(1));
    let second = host(1, "2", "30s");
    let merged = merge_hosts(dir.path(), [first, second]);
    started_together(&merged, &["fillseq", "readrandom"]);
    let text = report_as(&merged, "text");
    assert!(
        text.contains("fillseq: the hosts started it within"),
        "{text}"
    );

    std::fs::remove_dir_all(&barrier).unwrap();
    let out = host(2, "3", "2s").wait_with_output().unwrap();
    let e = err(&out);
    assert_holds(
        &e,
        &[
            "1 of 3 hosts were ready for step fillseq after 2s",
            "01-fillseq",
        ],
    );
}

/// Three hosts as network namespaces on one machine: a PostgreSQL served in a namespace of its
/// own (`fathom serve --network namespace`), and two client hosts each in a namespace of its own
/// (`--host-namespace`), joined to the server's by a veth pair, meeting at a barrier. Both
/// hosts' point selects reach the server over TCP from addresses of their own (one round trip
/// a select, counted at the clients' sockets), the merge of their runs started together, and
/// nothing of either network outlives its process.
#[test]
fn hosts_as_namespaces_drive_a_server_over_tcp() {
    if !needs_root("hosts_as_namespaces_drive_a_server_over_tcp") {
        return;
    }
    let dir = server_scratch();
    let links = || std::fs::read_dir("/sys/class/net").unwrap().count();
    let before = links();
    let (server, url, pid) = serve_with("postgres", dir.path(), &["--network", "namespace"]);
    // Stopped (Ctrl-C) however the test ends, so a failed assertion leaves no server.
    struct Stopped(std::process::Child);
    impl Drop for Stopped {
        fn drop(&mut self) {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(self.0.id() as i32, libc::SIGINT) };
            let _ = self.0.wait();
        }
    }
    let server = Stopped(server);
    let netns = served_netns(dir.path());
    assert!(in_namespace_range(&url), "{url}");
    let base = "run --engine postgres --workload sysbench --clients 1 --duration 1s \
                --param table_size=1000 --no-calibrate";
    let client = |i: usize, more: &str| {
        Command::new(env!("CARGO_BIN_EXE_fathom"))
            .args(base.split_whitespace())
            .args(more.split_whitespace())
            .args([
                "--set",
                &format!("url={url}"),
                "--set",
                &format!("pid={pid}"),
                "--host-namespace",
                &netns,
            ])
            .arg("--results")
            .arg(dir.path().join(format!("host-{i}")))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // The tables once, then both hosts at the barrier on them.
    let out = client(9, "").wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let barrier = dir.path().join("barrier");
    let at_barrier = format!(
        "--param prepare=off --barrier-hosts 2 --barrier {}",
        barrier.display()
    );
    let merged = merge_hosts(dir.path(), [client(0, &at_barrier), client(1, &at_barrier)]);
    started_together(&merged, &["oltp_point_select"]);
    let report = report_json(&merged);
    let select = step(&report["runs"][0], "oltp_point_select");
    assert!(f(&select["ops"]) > 0.0);
    let trips = f(&select["network"]["round_trips_per_op"]);
    assert!((0.9..1.5).contains(&trips), "{select}");
    // Each host said where it was: an address of its own in fathom's range.
    let mut addresses: Vec<String> = (0..2)
        .map(|i| {
            let h = dir.path().join(format!("host-{i}"));
            let run = h.join(&run_dirs(&h)[0]);
            let manifest = std::fs::read_to_string(run.join("run.json")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&manifest).unwrap();
            let path = v["host"]["network_path"].as_str().unwrap_or_default();
            let at = path.split(" at ").nth(1).unwrap_or_default();
            at.split_whitespace().next().unwrap_or_default().to_string()
        })
        .collect();
    assert!(
        addresses
            .iter()
            .all(|a| in_namespace_range(&format!("host={a}"))),
        "{addresses:?}"
    );
    addresses.dedup();
    assert_eq!(addresses.len(), 2, "{addresses:?}");
    // The clients' ends of the pairs went with their processes.
    let in_server = |what: &str| {
        let out = Command::new("nsenter")
            .arg(format!("--net={netns}"))
            .args(["ip", "-o", "link"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).matches(what).count()
    };
    assert!(
        wait_for(10, || in_server("fhs") == 0),
        "a client host's veth pair outlived it"
    );
    drop(server);
    assert!(
        wait_for(10, || links() == before),
        "the namespace's veth pair outlived the server"
    );
}

/// Whether a `host=10.X...` URL names an address of 10.128.0.0/9, where fathom's namespaces
/// take theirs (a pid above 16383 takes 10.129 and up).
fn in_namespace_range(url: &str) -> bool {
    let second: u32 = (url
        .strip_prefix("host=10.")
        .and_then(|r| r.split('.').next()))
    .and_then(|o| o.parse().ok())
    .unwrap_or(0);
    second >= 128
}

/// Rows of a table in a results database.
fn rows(db: &Path, table: &str) -> i64 {
    let db = rusqlite::Connection::open(db).unwrap();
    db.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

/// A run records itself in results/fathom.db; with the database unwritable it still finishes
/// and says it was not recorded; `fathom store import` records it later, each run once.
#[test]
fn finished_runs_are_recorded_and_import_catches_up() {
    let dir = scratch();
    let results = dir.path().join("results");
    let args = "--engine null --workload dbbench --param num_keys=2000 \
                --param steps=fillseq,readrandom --duration 300ms --no-calibrate";
    ok(&run(args, &results));
    let db = results.join("fathom.db");
    assert_eq!((rows(&db, "runs"), rows(&db, "steps")), (1, 2));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (engine, ops): (String, f64) = conn
        .query_row(
            "SELECT engine, ops_per_sec FROM runs JOIN steps ON steps.run_id = runs.id \
             WHERE step = 'readrandom'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let report = report_json(&results);
    let file_ops = step(&report["runs"][0], "readrandom")["ops_per_sec"].as_f64();
    assert_eq!((engine.as_str(), Some(ops)), ("null", file_ops));

    // A path under a file cannot be a database: the run finishes all the same.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "a file").unwrap();
    let out = run(
        &format!("{args} --store {}", blocked.join("fathom.db").display()),
        &results,
    );
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_holds(
        &stderr,
        &["not recorded in the results database", "store import"],
    );
    assert_eq!(run_dirs(&results).len(), 2);
    let import = |dir: &Path| ok(&fathom_at("store import {} --store {}", &[dir, &db]));
    assert!(import(&results).contains("1 runs recorded, 1 recorded before"));
    assert!(import(&results).contains("0 runs recorded, 2 recorded before"));
    assert_eq!(rows(&db, "runs"), 2);
}

/// `fathom serve`'s libpq key=value address as the URL `--store` takes.
fn store_url(kv: &str) -> String {
    let get = |key: &str| {
        kv.split_whitespace()
            .find_map(|p| p.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {kv}"))
            .to_string()
    };
    format!(
        "postgresql://{}@/{}?host={}&port={}",
        get("user"),
        get("dbname"),
        get("host"),
        get("port")
    )
}

/// A count from a PostgreSQL results database.
fn pg_count(url: &str, sql: &str) -> i64 {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    db.query_one(sql, &[]).unwrap().get(0)
}

/// A team's PostgreSQL as the results database (the managed server from Debian's packages):
/// its schema made on first use, runs recorded, imported once, read back by `fathom history`;
/// with the server stopped a run still finishes and says it was not recorded.
#[test]
fn runs_are_recorded_in_a_postgresql_results_database() {
    let dir = server_scratch();
    let (mut serve, kv, _) = serve("postgres", dir.path());
    let url = store_url(&kv);
    let results = dir.path().join("results");
    let args = format!(
        "--engine null --workload dbbench --param num_keys=2000 \
         --param steps=fillseq,readrandom --duration 300ms --no-calibrate --store {url}"
    );
    ok(&run(&args, &results));
    ok(&run(&args, &results));
    assert_eq!(pg_count(&url, "SELECT COUNT(*) FROM runs"), 2);
    assert_eq!(pg_count(&url, "SELECT COUNT(*) FROM steps"), 4);
    assert_eq!(pg_count(&url, "SELECT MAX(version) FROM schema_version"), 2);
    // A column for each recorded step figure, named in step_figures.
    let recorded = fathom_schema::figures::recorded_figures().count() as i64;
    assert_eq!(
        pg_count(&url, "SELECT COUNT(*) FROM step_figures"),
        recorded
    );
    let import = ok(&fathom(&[
        "store",
        "import",
        results.to_str().unwrap(),
        "--store",
        &url,
    ]));
    assert!(
        import.contains("0 runs recorded, 2 recorded before"),
        "{import}"
    );
    // A role that may only read follows the history: an up-to-date schema is only read.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
        )
        .unwrap();
    let reader = url.replacen("postgres@", "reader@", 1);
    let history = ok(&null_history(&reader, &["--format", "csv"]));
    assert_eq!(
        history.lines().count(),
        3,
        "a header and two runs: {history}"
    );

    unsafe { libc::kill(serve.id() as i32, libc::SIGINT) };
    assert!(serve.wait().unwrap().success());
    let out = run(&args, &results);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not recorded in the results database") && stderr.contains(&url),
        "{stderr}"
    );
    assert_eq!(run_dirs(&results).len(), 3);
    no_server_left(dir.path());
    let e = err(&run(
        "--engine null --workload dbbench --store postgres://h:port/db",
        &results,
    ));
    assert_holds(&e, &["--store", "not a PostgreSQL URL"]);
}
