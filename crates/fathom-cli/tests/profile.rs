//! `--profile` end to end, with Linux perf on real engines: every timed step of a RocksDB,
//! an InnoDB and a PostgreSQL run leaves folded stacks that name the engine's functions and
//! fathom's client threads; the page has a flame graph per step, linked from its row; the text
//! and JSON reports list the top functions and the shares; `compare` of RocksDB with
//! compression against without shows the compression library's CPU per operation grow; and
//! what cannot be profiled fails before anything runs.

mod common;

use common::*;
use std::path::Path;

/// Every `.folded` file under `results`, by file name.
fn folded(results: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for run in std::fs::read_dir(results).unwrap().flatten() {
        let steps = run.path().join("steps");
        for f in std::fs::read_dir(&steps).into_iter().flatten().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.ends_with(".folded") {
                out.push((name, std::fs::read_to_string(f.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn folded_step<'a>(all: &'a [(String, String)], step: &str) -> &'a str {
    &all.iter()
        .find(|(n, _)| n.ends_with(&format!("-{step}.folded")))
        .unwrap_or_else(|| {
            panic!(
                "no folded stacks for {step}: {:?}",
                all.iter().map(|x| &x.0).collect::<Vec<_>>()
            )
        })
        .1
}

/// The samples of the stacks whose frames include `frame` (a prefix of a frame). A trait
/// method reads `<Type as Trait>::method`: the prefix may follow the `<`.
fn samples_with(folded: &str, frame: &str) -> u64 {
    folded
        .lines()
        .filter(|l| {
            l.split(';').any(|f| {
                f.starts_with(frame) || f.strip_prefix('<').is_some_and(|t| t.starts_with(frame))
            })
        })
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum()
}

#[test]
fn rocksdb_steps_are_profiled_engine_and_client_frames_and_a_flame_graph_each() {
    // A HOME of its own, to see that perf keeps no build-id cache there.
    let dir = scratch();
    let results = dir.path().join("results");
    let out = fathom_with(
        &format!(
            "run --engine rocksdb --workload dbbench --param num_keys=200000 \
             --param steps=fillseq,readrandom,overwrite --duration 3s --profile --results {}",
            results.display()
        ),
        "HOME",
        dir.path(),
    );
    let stdout = ok(&out);
    assert!(
        !dir.path().join(".debug").exists(),
        "perf's build-id cache in HOME"
    );
    let all = folded(&results);
    assert_eq!(all.len(), 3, "a folded file per step: {all:?}");
    let reads = folded_step(&all, "readrandom");
    assert!(
        samples_with(reads, "rocksdb::DBImpl::GetImpl") > 0,
        "RocksDB's Get in:\n{reads}"
    );
    assert!(
        samples_with(reads, "fathom:client0") > 0,
        "the client thread by name"
    );
    // The client threads' own frames: the main thread's sampler is seldom on a CPU in 3 s,
    // and a client's calls are trait methods (`<fathom_workloads::... as ...>::next`).
    let clients: String = reads
        .lines()
        .filter(|l| l.starts_with("fathom;fathom:client"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        samples_with(&clients, "fathom_") > 0,
        "fathom's own functions on the client threads:\n{reads}"
    );
    // Every stack is under fathom's process, then a thread.
    assert!(reads.lines().all(|l| l.starts_with("fathom;")), "{reads}");

    report_shows_each_steps_profile(&results, &stdout);
    no_profiler_left();
}

/// The report of a profiled dbbench run: a profile per step in JSON, the shares and top
/// functions in text, a flame graph per step on the page linked from its row.
fn report_shows_each_steps_profile(results: &Path, stdout: &str) {
    let json = report_json(results);
    let run = &json["runs"][0];
    for s in ["fillseq", "readrandom", "overwrite"] {
        let p = &step(run, s)["profile"];
        assert!(f(&p["samples"]) > 0.0, "{s}: {p}");
        assert_eq!(p["frequency_hz"], 99);
        assert_eq!(p["processes"][0]["label"], "fathom");
        assert_eq!(
            p["processes"][0]["unwinding"], "dwarf",
            "a Rust release build: {p}"
        );
    }
    // The text report: the shares and the top functions.
    assert_holds(stdout, &["profile shares", "top functions"]);
    let row = table_row(&json, "profile shares", "readrandom");
    assert!(
        f(&row["engine%"]) > 20.0,
        "reads are mostly RocksDB's: {row:?}"
    );
    assert!(f(&row["samples"]) > 0.0, "numbers as numbers: {row:?}");

    // A CPU-bound step's verdict names the functions the CPU was in.
    // On a host other processes filled, the step waited for a CPU, and the report says who
    // disturbed it; that is the verdict then (a CI run beside a build met it).
    let reads = table_row(&json, "bound", "readrandom");
    let disturbed = reads["confidence"]
        .as_str()
        .is_some_and(|c| c.contains("disturbed: "));
    if disturbed && reads["bound"] == "waiting for a cpu" {
        println!("readrandom waited for a CPU other processes used: {reads:?}");
    } else {
        assert_eq!(reads["bound"], "engine cpu", "{reads:?}");
        assert!(
            reads["where"].as_str().unwrap().contains("on the CPU: "),
            "{reads:?}"
        );
    }

    let page = report_as(results, "html");
    assert_eq!(
        page.matches("class=\"flame\"").count(),
        3,
        "a flame graph per step"
    );
    assert!(
        page.contains("href=\"#profile-rocksdb-readrandom\""),
        "the step's row links to it"
    );
    assert!(page.contains("id=\"profile-rocksdb-readrandom\""));
}

/// perf's scratch data is gone with its run (other tests' runs may be profiling now), and no
/// perf outlives the fathom that started it.
fn no_profiler_left() {
    let alive = |pid: &str| Path::new(&format!("/proc/{pid}")).exists();
    for e in std::fs::read_dir("/dev/shm").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("fathom-profile-") {
            assert!(alive(pid), "{name} left in /dev/shm by a finished run");
        }
    }
    for (pid, _) in processes_mentioning("perf record") {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1));
        assert!(
            ppid.is_some_and(|p| p != "1"),
            "perf {pid} outlived its fathom"
        );
    }
}

#[test]
fn a_server_is_profiled_in_its_own_processes_beside_fathom() {
    let dir = server_scratch();
    let results = dir.path().join("results");
    ok(&run(
        "--engine innodb,postgres --workload sysbench --clients 2 --duration 2s \
         --param table_size=2000 --param tests=oltp_point_select --profile",
        &results,
    ));
    no_server_left(dir.path());
    let json = report_json(&results);
    for run in json["runs"].as_array().unwrap() {
        let engine = run["engine"].as_str().unwrap();
        let p = &step(run, "oltp_point_select")["profile"];
        let file = Path::new(run["path"].as_str().unwrap()).join(p["folded"].as_str().unwrap());
        let stacks = std::fs::read_to_string(&file).unwrap();
        let (server, function) = match engine {
            "innodb" => ("mariadbd;", "dispatch_command"),
            _ => ("postgres;", "PortalRun"),
        };
        assert!(
            stacks.lines().any(|l| l.starts_with(server)),
            "{engine}: the server's own stacks: {p}"
        );
        assert!(
            samples_with(&stacks, function) > 0,
            "{engine}: {function} in\n{stacks}"
        );
        assert!(
            stacks
                .lines()
                .any(|l| l.starts_with("fathom;fathom:client")),
            "{engine}: fathom's clients beside the server"
        );
        assert_eq!(p["processes"][0]["label"], "fathom", "{engine}: {p}");
        // Debian builds both servers with frame pointers.
        assert_eq!(
            p["processes"][1]["unwinding"], "frame_pointers",
            "{engine}: {p}"
        );
    }
}

#[test]
fn compare_of_profiled_runs_shows_compressions_cost_per_operation() {
    let dir = scratch();
    let results = dir.path().join("results");
    for (name, compression) in [("plain", "kNoCompression"), ("zstd", "kZSTD")] {
        ok(&run(
            &format!(
                "--engine rocksdb --name {name} --workload dbbench --param num_keys=300000 \
                 --param steps=fillseq --setup write_buffer_size=2m;compression={compression} \
                 --profile --profile-hz 499"
            ),
            &results,
        ));
    }
    let out = ok(&fathom_at("compare {} --format json", &[&results]));
    assert!(out.contains("fillseq"), "{out}");
    let text = ok(&fathom(&["compare", results.to_str().unwrap()]));
    let table = text
        .split("functions whose CPU per operation changed most")
        .nth(1)
        .unwrap_or_else(|| panic!("no per-function table:\n{text}"));
    // The rows name ZSTD's functions with more CPU per operation in the new setup.
    let zstd: Vec<&str> = table.lines().filter(|l| l.contains("ZSTD_")).collect();
    assert!(
        !zstd.is_empty(),
        "ZSTD's functions among the changes:\n{table}"
    );
    let grows = zstd.iter().any(|l| {
        let cells: Vec<&str> = l.split_whitespace().collect();
        // step, function, self base, self new, self diff, ...
        cells
            .get(4)
            .and_then(|d| d.parse::<f64>().ok())
            .is_some_and(|d| d > 0.0)
    });
    assert!(grows, "ZSTD's CPU per operation grows:\n{table}");
    let page = ok(&fathom_at("compare {} --format html", &[&results]));
    assert_eq!(
        page.matches("class=\"flame\"").count(),
        1,
        "a differential graph"
    );
}

#[test]
fn what_cannot_be_profiled_fails_before_anything_runs() {
    let dir = scratch();
    let results = dir.path().join("results");
    let refused: &[(&str, &[&str])] = &[
        (
            "--engine innodb --set url=mysql://root@127.0.0.1:1/x --workload sysbench --profile",
            &["--profile", "pid="],
        ),
        (
            "--engine rocksdb --workload dbbench --profile --profile-hz 0",
            &["--profile-hz", "expected 1 to"],
        ),
    ];
    for (args, wants) in refused {
        assert_holds(&err(&run(args, &results)), wants);
    }
    // Without perf on the PATH.
    let out = fathom_with(
        &format!(
            "run --engine rocksdb --workload dbbench --profile --results {}",
            results.display()
        ),
        "PATH",
        dir.path(),
    );
    let e = err(&out);
    assert_holds(&e, &["Linux perf", "setup.sh --profile"]);
    assert!(!results.exists() || std::fs::read_dir(&results).unwrap().next().is_none());
}

#[test]
fn a_merge_keeps_the_first_hosts_profile_and_its_stacks() {
    let (dir, results, _) = run_ok(
        "--engine null --workload dbbench --param num_keys=30000 --param steps=readrandom \
         --duration 1s --clients 1 --profile",
    );
    let one = results.join(&run_dirs(&results)[0]);
    let merged = dir.path().join("merged");
    merge_with_itself(&one, &merged);
    let json = report_json(&merged);
    let p = &step(&json["runs"][0], "readrandom")["profile"];
    let copied = merged.join(p["folded"].as_str().unwrap());
    let original = one.join(p["folded"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(copied).unwrap(),
        std::fs::read_to_string(original).unwrap()
    );
    let text = report_as(&merged, "text");
    assert!(
        text.contains("profile shares") && !text.contains("cannot read"),
        "{text}"
    );
}

#[test]
fn a_peer_tool_is_profiled_under_the_same_perf() {
    let dir = scratch();
    let out = dir.path().join("sysbench.folded");
    let printed = ok(&fathom_at(
        "profile --out {} -- sysbench cpu --time=2 run",
        &[&out],
    ));
    let stacks = std::fs::read_to_string(&out).unwrap();
    assert!(samples_with(&stacks, "sysbench") > 0, "{stacks}");
    assert_holds(&printed, &["profile shares", "top functions"]);
    let e = err(&fathom_at("profile --out {} -- /nonexistent/tool", &[&out]));
    assert!(e.contains("/nonexistent/tool"), "{e}");
}
