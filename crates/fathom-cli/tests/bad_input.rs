//! Bad input in bulk, as one table: command flags, engine settings and options strings of every
//! engine, workload parameters, experiment files, and truncated or corrupted result files given
//! to `report`, `compare` and `merge`. Each must end fathom with a non-zero exit and a message
//! naming the flag or file, the key, and what was expected — never a panic.

mod common;
use common::*;
use std::path::Path;

/// A malformed input: the arguments of `fathom` (`{dir}` is the scratch directory, `{run}` a
/// good run directory), and the words the error must contain.
struct Case {
    args: &'static str,
    wants: &'static [&'static str],
}

const fn case(args: &'static str, wants: &'static [&'static str]) -> Case {
    Case { args, wants }
}

const RUN: &str = "run --engine null --workload dbbench";

/// Flags of `fathom run` and the other commands.
#[rustfmt::skip]
const FLAGS: &[Case] = &[
    case("run --engine nosuch --workload dbbench", &["unknown engine `nosuch`", "rocksdb, wiredtiger, lmdb, sqlite, innodb, myrocks, postgres, mongodb, sqlite-sql, null"]),
    case("run --engine null --workload nosuch", &["unknown workload `nosuch`", "dbbench"]),
    case("run --engine null", &["--workload"]),
    case("run --workload dbbench", &["--engine"]),
    case("run --engine null --workload dbbench --clients 0", &["--clients", "0"]),
    case("run --engine null --workload dbbench --clients two", &["--clients", "two"]),
    case("run --engine null --workload dbbench --duration -1s", &["--duration", "`-1s`", "cannot be negative"]),
    case("run --engine null --workload dbbench --duration 1s --metrics 19465", &["--metrics", "port alone", "127.0.0.1:19465"]),
    case("run --engine null --workload dbbench --duration 1s --metrics localhost", &["--metrics", "no port", "HOST:PORT"]),
    case("run --engine null --workload ycsb/workloadz", &["`ycsb/workloadz`", "ycsb/workloada", "ycsb/workloadf", ".toml"]),
    case("run --engine null --workload {dir}/nameless.toml", &["nameless.toml", "missing field `about`", "top level"]),
    case("run --engine null --workload dbbench --duration soon", &["--duration", "not a duration"]),
    case("run --engine null --workload dbbench --interval never", &["--interval", "never"]),
    case("run --engine null --workload dbbench --memory-limit 12q", &["--memory-limit", "12q", "expected k, m, g or t"]),
    case("run --engine null --workload dbbench --memory-limit lots", &["--memory-limit", "not a size"]),
    case("run --engine null --workload dbbench --rate fast", &["--rate", "fast"]),
    case("run --engine null --workload dbbench --arrivals sometimes --rate 10", &["--arrivals", "sometimes"]),
    case("run --engine null --workload dbbench --format pdf", &["--format", "pdf"]),
    case("run --engine null --workload dbbench --set", &["--set"]),
    case("run --engine null --workload dbbench --set =1", &["`=1`"]),
    case("run --engine null --workload dbbench --param =1", &["`=1`"]),
    case("run --engine null --workload dbbench --setup @{dir}/missing.options", &["missing.options"]),
    case("run --engine null --workload dbbench --existing-data", &["--existing-data", "--data-dir"]),
    case("run --engine innodb --workload sysbench --existing-data --data-dir /nonexistent", &["--existing-data", "`innodb` is a server"]),
    case("run {dir}/missing.toml", &["missing.toml"]),
    case("report {dir}/no-such-results", &["no-such-results"]),
    case("report {run} --format pdf", &["--format", "pdf"]),
    case("report {run} --threshold lots", &["--threshold", "lots"]),
    case("compare {run}", &["compare"]),
    case("compare {run} {dir}/no-such-results", &["no-such-results"]),
    case("merge --out {dir}/merged", &["merge"]),
    case("serve --engine rocksdb --data-dir {dir}/s", &["rocksdb", "server"]),
    case("serve --engine nosuch --data-dir {dir}/s", &["unknown engine `nosuch`"]),
    case("serve --engine postgres", &["--data-dir"]),
];

/// What cannot work with the engine or target given: refused before anything runs, so no run
/// directory is made and no server started (each runs into a results directory of its own,
/// which must not exist afterwards).
#[rustfmt::skip]
const BEFORE_ANYTHING: &[Case] = &[
    case("run --engine rocksdb --workload pgbench/tpcb-like", &["SQL tables or scripts", "`rocksdb` is a kv engine"]),
    case("run --engine mongodb --workload pgbench/tpcb-like", &["SQL tables or scripts", "`mongodb` is a doc engine"]),
    case("run --engine null --workload ycsb/workloadc --duration 1s --find-max NOSUCH:p99<=5ms", &["NOSUCH", "READ"]),
    case("run --engine null --workload ycsb/workloadc --find-max p99<=5ms", &["--find-max", "timed step", "--duration"]),
    case("run --engine null --workload dbbench --duration -1s", &["--duration", "cannot be negative"]),
    case("run --engine null --workload ycsb/workloadz", &["`ycsb/workloadz`", "ycsb/workloada"]),
    case("run --engine null --workload dbbench --device gp9", &["--device", "`gp9`", "gp3", "seed-disk-array", "profile file"]),
    case("run --engine null --workload dbbench --device {dir}/negative.toml", &["--device", "negative.toml", "`read_iops` is -5", "above 0"]),
    case("run --engine null --workload dbbench --device {dir}/rateless.toml", &["--device", "rateless.toml", "`write_mibps` is missing"]),
    // A disk that cannot be throttled by a group: a data directory on tmpfs (a device of the
    // run's own, the default layer, can be made over tmpfs).
    case("run --engine sqlite --workload dbbench --param steps=fillseq --data-dir /dev/shm/fathom-bad-input --device gp3 --device-layer group", &["--device", "/dev/shm/fathom-bad-input", "no block device", "tmpfs"]),
];

/// Settings and options strings, for every engine (server engines refuse them before starting).
#[rustfmt::skip]
const ENGINE_INPUT: &[Case] = &[
    case("run --engine rocksdb --workload dbbench --setup write_buffer_size=huge --param steps=fillseq", &["RocksDB rejected the options string", "write_buffer_size"]),
    case("run --engine rocksdb --workload dbbench --setup write_bufer_size=4m --param steps=fillseq", &["RocksDB rejected the options string", "write_bufer_size"]),
    case("run --engine rocksdb --workload dbbench --set cache_size=big", &["cache_size", "big"]),
    case("run --engine rocksdb --workload dbbench --set o_direct=maybe", &["o_direct", "none, reads, flush or all"]),
    case("run --engine rocksdb --workload dbbench --set cache=1g", &["no setting `cache`", "cache_size"]),
    case("run --engine wiredtiger --workload dbbench --setup cache_size=lots --param steps=fillseq", &["cache_size"]),
    case("run --engine wiredtiger --workload dbbench --setup no_such_key=1 --param steps=fillseq", &["no_such_key"]),
    case("run --engine wiredtiger --workload dbbench --set nosuch=1", &["no setting `nosuch`"]),
    case("run --engine lmdb --workload dbbench --set map_size=tiny", &["map_size", "tiny"]),
    case("run --engine lmdb --workload dbbench --set nosuch=1", &["no setting `nosuch`"]),
    case("run --engine sqlite --workload dbbench --setup journal_mod=WAL --param steps=fillseq", &["journal_mod"]),
    // A value SQLite ignores (it keeps its mode) is refused, read back.
    case("run --engine sqlite --workload dbbench --setup journal_mode=banana --param steps=fillseq", &["journal_mode", "`wal`", "`banana`"]),
    case("run --engine sqlite-sql --workload sysbench --setup synchronous=sometimes", &["synchronous", "`sometimes`"]),
    case("run --engine sqlite --workload dbbench --set nosuch=1", &["no setting `nosuch`"]),
    case("run --engine sqlite-sql --workload sysbench --set nosuch=1", &["no setting `nosuch`"]),
    case("run --engine innodb --workload sysbench --set nosuch=1", &["no setting `nosuch`"]),
    case("run --engine innodb --workload sysbench --set cache_size=big", &["cache_size", "big"]),
    case("run --engine innodb --workload sysbench --setup bad!line", &["setup line", "expected"]),
    case("run --engine myrocks --workload sysbench --set client=odbc", &["client", "odbc"]),
    case("run --engine postgres --workload sysbench --set nosuch=1", &["no setting `nosuch`"]),
    case("run --engine postgres --workload sysbench --set client=jdbc", &["client", "jdbc"]),
    case("run --engine postgres --workload sysbench --setup 'shared_buffers'", &["setup line", "expected"]),
    case("run --engine postgres --workload sysbench --set url=mysql://x --set pid=", &["url"]),
    case("run --engine postgres --workload sysbench --set url=postgresql://u@127.0.0.1:1/db?sslmode=require", &["url", "sslmode=require", "TLS"]),
    case("run --engine innodb --workload sysbench --set pid=notapid --set url=mysql://root@localhost/x", &["pid", "notapid"]),
    case("run --engine null --workload dbbench --set nosuch=1", &["no setting `nosuch`"]),
    case("run --engine postgres --workload sysbench --setup listen_addresses='*'", &["listen_addresses", "unix socket"]),
    case("run --engine mongodb --workload sysbench --set transactions=maybe", &["transactions", "maybe", "auto, on or off"]),
    case("run --engine mongodb --workload sysbench --set write_concern=lots", &["write_concern", "lots", "majority"]),
    case("run --engine mongodb --workload sysbench --set journal=maybe", &["journal", "maybe", "expected on or off"]),
    case("run --engine mongodb --workload sysbench --set read_concern=fresh", &["read_concern", "fresh", "snapshot"]),
    case("run --engine mongodb --workload sysbench --set url=postgres://x", &["url", "postgres://x", "MongoDB URL"]),
    case("run --engine mongodb --workload sysbench --set url=mongodb://127.0.0.1:1 --set pid=1,x", &["pid", "`x`"]),
    case("run --engine mongodb --workload sysbench --set url=mongodb://127.0.0.1:1 --setup fsync=off", &["setup", "running server"]),
    case("run --engine mongodb --workload sysbench --set url=mongodb://127.0.0.1:1 --set data_dir=/no/such", &["data_dir", "/no/such", "not a directory"]),
    case("run --engine mongodb --workload sysbench --set version=0.0.1", &["ferretdb 0.0.1", "fetch-engine.sh ferretdb 0.0.1"]),
    case("run --engine mongodb --workload sysbench --set client=pymongo", &["client", "pymongo", "auto, fathom or driver"]),
    case("run --engine innodb --workload sysbench --setup bind-address=0.0.0.0", &["bind_address", "unix socket"]),
];

/// Workload parameters.
#[rustfmt::skip]
const PARAMS: &[Case] = &[
    case("run --engine null --workload dbbench --param num_keys=lots", &["num_keys", "lots"]),
    case("run --engine null --workload dbbench --param steps=fillseq,nosuchstep", &["nosuchstep"]),
    case("run --engine null --workload dbbench --param num_kyes=5", &["no parameter `num_kyes`", "num_keys"]),
    case("run --engine null --workload dbbench --param num_keys", &["`num_keys` is not key=value"]),
    case("run --engine sqlite-sql --workload sysbench --param tests=oltp_nothing", &["tests", "`oltp_nothing` is not oltp_point_select, "]),
    case("run --engine sqlite-sql --workload sysbench --param table_size=-5", &["table_size"]),
    case("run --engine sqlite-sql --workload sysbench --param tables=0", &["tables"]),
    case("run --engine sqlite-sql --workload ibench --param rows=many", &["rows", "many"]),
    case("run --engine sqlite-sql --workload ibench --param steps=l.i9", &["l.i9"]),
    case("run --engine sqlite-sql --workload ibench --param query_secs=forever", &["query_secs", "forever"]),
    case("run --engine sqlite-sql --workload linkbench --param maxid1=0", &["maxid1"]),
    case("run --engine sqlite-sql --workload linkbench --param duration=abit", &["duration", "abit"]),
    case("run --engine sqlite-sql --workload linkbench --param nosuch=1", &["no parameter `nosuch`"]),
];

/// Experiment files: each is written to `{dir}/bad.toml` and run.
const EXPERIMENTS: &[(&str, &[&str])] = &[
    ("name = 1", &["bad.toml", "name"]),
    ("name = \"x\"\nclients = \"many\"", &["bad.toml", "clients"]),
    ("name = \"x\"\nduration = 5", &["bad.toml", "duration"]),
    ("name = \"x\"\nthreads = 4", &["bad.toml", "unknown field `threads`"]),
    ("name = \"x\"\n[[setup]]\nname = \"a\"", &["bad.toml", "engine"]),
    ("name = \"x\"\n[[setup]]\nname = \"a\"\nengine = \"null\"\nsettings = { nosuch = \"1\" }\n[[workload]]\nname = \"dbbench\"", &["bad.toml", "no setting `nosuch`"]),
    ("name = \"x\"\n[[setup]]\nname = \"a\"\nengine = \"null\"\n[[workload]]\nname = \"nosuch\"", &["bad.toml", "unknown workload `nosuch`"]),
    ("name = \"x\"\n[[setup]]\nname = \"a\"\nengine = \"null\"\n[[workload]]\nname = \"dbbench\"\nparams = { num_keys = \"lots\" }", &["bad.toml", "num_keys"]),
    ("name = \"x\"\n[[setup]]\nname = \"a\"\nengine = \"null\"\noptions_file = \"missing.options\"\n[[workload]]\nname = \"dbbench\"", &["bad.toml", "missing.options"]),
    ("name = \"x\"\n[[setup]]\nname = \"a\"\nengine = \"null\"\n[[setup]]\nname = \"a\"\nengine = \"null\"\n[[workload]]\nname = \"dbbench\"", &["bad.toml", "`a`"]),
    ("name = \"x\"\nrepeats = 0\n[[setup]]\nname = \"a\"\nengine = \"null\"\n[[workload]]\nname = \"dbbench\"", &["bad.toml", "repeats"]),
    ("name = \"x\"\nrate = 10\narrivals = \"sometimes\"", &["bad.toml", "line 3", "`uniform` or `poisson`"]),
    ("name = \"x\"\nallocator = \"hoard\"", &["bad.toml", "line 2", "`glibc`, `tcmalloc`, `jemalloc`"]),
    ("name = \"x\"\norder = [\"setup\", \"setup\", \"clients\", \"repeat\"]\n[[setup]]\nname = \"a\"\nengine = \"null\"\n[[workload]]\nname = \"dbbench\"", &["bad.toml", "order", "each once"]),
    ("name = \"x\"\ninterval = \"10x\"", &["bad.toml", "line 2", "`10x` is not a duration"]),
    ("name = \"x\"\n[[setup]]\nname = \"a\"\nengine = \"null\"\nmemory_limit = \"12q\"", &["bad.toml", "line 5", "expected k, m, g or t"]),
    ("this is not toml", &["bad.toml"]),
];

/// Result files corrupted in a copy of a good run: the file, how, which commands read it
/// (`report`, `json`, `intervals`, `compare`, `merge`), and the words.
const RESULT_FILES: &[(&str, &str, &[&str], &[&str])] = &[
    ("run.json", "truncate", ALL, &["run.json"]),
    ("run.json", "garbage", ALL, &["run.json"]),
    ("run.json", "empty", ALL, &["run.json"]),
    ("run.json", "wrongtype", ALL, &["run.json"]),
    (
        "steps/01-fillseq.json",
        "truncate",
        ALL,
        &["01-fillseq.json"],
    ),
    (
        "steps/01-fillseq.json",
        "garbage",
        ALL,
        &["01-fillseq.json"],
    ),
    (
        "steps/01-fillseq.json",
        "wrongtype",
        ALL,
        &["01-fillseq.json"],
    ),
    (
        "steps/01-fillseq.intervals.jsonl",
        "truncate",
        &["intervals"],
        &["01-fillseq.intervals.jsonl"],
    ),
    (
        "steps/01-fillseq.intervals.jsonl",
        "garbage",
        &["intervals"],
        &["01-fillseq.intervals.jsonl"],
    ),
    (
        "steps/01-fillseq.hlog",
        "truncate",
        &["merge"],
        &["01-fillseq.hlog"],
    ),
    (
        "steps/01-fillseq.hlog",
        "garbage",
        &["merge"],
        &["01-fillseq.hlog"],
    ),
    // Cut at a line's end, so what is left still reads: short of the step's operations.
    (
        "steps/01-fillseq.hlog",
        "halflines",
        &["merge"],
        &[
            "01-fillseq.hlog",
            "timed calls where the step's summary counts",
        ],
    ),
];

const ALL: &[&str] = &["report", "json", "intervals", "compare", "merge"];

/// The command line of `cmd` on the corrupted run `bad` (`good` beside it, `out` for merge).
fn result_command(cmd: &str, bad: &Path, good: &Path, out: &Path) -> Vec<String> {
    let (b, g, o) = (bad.display(), good.display(), out.display());
    let line = match cmd {
        "report" => format!("report {b}"),
        "json" => format!("report {b} --format json"),
        "intervals" => format!("report {b} --intervals"),
        "compare" => format!("compare {g} {b}"),
        "merge" => format!("merge {b} {g} --out {o}"),
        _ => unreachable!(),
    };
    line.split_whitespace().map(String::from).collect()
}

fn expand(args: &str, dir: &Path, good: &Path) -> Vec<String> {
    args.replace("{dir}", dir.to_str().unwrap())
        .replace("{run}", good.to_str().unwrap())
        .split_whitespace()
        .map(|w| w.trim_matches('\'').to_string())
        .collect()
}

/// Runs fathom with `argv`; it must fail with every word of `wants` and no panic.
fn refused(argv: &[String], wants: &[&str]) -> Result<(), String> {
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = fathom(&args);
    let e = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        return Err(format!("`fathom {}` succeeded", args.join(" ")));
    }
    if e.contains("panicked") || out.status.code().is_none() {
        return Err(format!("`fathom {}` panicked or died: {e}", args.join(" ")));
    }
    match wants.iter().find(|w| !e.contains(*w)) {
        Some(w) => Err(format!("`fathom {}`: no `{w}` in:\n{e}", args.join(" "))),
        None => Ok(()),
    }
}

fn corrupt(file: &Path, how: &str) {
    let text = std::fs::read(file).unwrap();
    let new = match how {
        "truncate" => text[..text.len() / 2].to_vec(),
        "garbage" => b"\x00\xff not json at all".to_vec(),
        "empty" => Vec::new(),
        "halflines" => {
            let t = String::from_utf8(text).unwrap();
            let lines: Vec<&str> = t.lines().collect();
            (lines[..lines.len() / 2].join("\n") + "\n").into_bytes()
        }
        // A number where the file has a string, or a string where it has a number.
        "wrongtype" => {
            let t = String::from_utf8(text).unwrap();
            match t.find("\"ops\": ") {
                Some(_) => t.replacen("\"ops\": ", "\"ops\": \"many\", \"was\": ", 1),
                None => t.replacen("\"status\": ", "\"status\": 7, \"was\": ", 1),
            }
            .into_bytes()
        }
        _ => unreachable!(),
    };
    std::fs::write(file, new).unwrap();
}

#[test]
fn every_malformed_input_is_refused_by_name_without_a_panic() {
    let dir = server_scratch();
    let results = dir.path().join("good");
    ok(&run(
        &format!(
            "{} --param num_keys=2000 --param steps=fillseq,readrandom --duration 1s --name good",
            RUN.trim_start_matches("run ")
        ),
        &results,
    ));
    let good = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("run.json").is_file())
        .expect("the good run");
    // A workload file that does not say what it is (no `about`).
    std::fs::write(
        dir.path().join("nameless.toml"),
        "name = \"nameless\"\n[data]\nrecords = 10\n[[phase]]\nname = \"run\"\nduration = \"1s\"\n[phase.mix]\nread = 1\n",
    )
    .unwrap();
    // Device profiles with a negative rate and with one missing.
    let profile =
        "name = \"p\"\nread_iops = 100\nwrite_iops = 100\nread_mibps = 10\nwrite_mibps = 10\n";
    std::fs::write(
        dir.path().join("negative.toml"),
        profile.replace("read_iops = 100", "read_iops = -5"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("rateless.toml"),
        profile.replace("write_mibps = 10\n", ""),
    )
    .unwrap();
    let mut failures = Vec::new();
    let mut tried = 0;
    for c in FLAGS.iter().chain(ENGINE_INPUT).chain(PARAMS) {
        tried += 1;
        let mut argv = expand(c.args, dir.path(), &good);
        if argv[0] == "run" && !argv.iter().any(|a| a == "--results") {
            argv.extend([
                "--results".into(),
                dir.path().join("r").display().to_string(),
            ]);
        }
        if let Err(e) = refused(&argv, c.wants) {
            failures.push(e);
        }
    }
    for (i, c) in BEFORE_ANYTHING.iter().enumerate() {
        tried += 1;
        let results = dir.path().join(format!("early{i}"));
        let mut argv = expand(c.args, dir.path(), &good);
        argv.extend(["--results".into(), results.display().to_string()]);
        if let Err(e) = refused(&argv, c.wants) {
            failures.push(e);
        } else if results.exists() {
            failures.push(format!(
                "`fathom {}` refused, but after making {}",
                argv.join(" "),
                results.display()
            ));
        }
    }
    for (text, wants) in EXPERIMENTS {
        tried += 1;
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let argv: Vec<String> = ["run", file.to_str().unwrap(), "--results"]
            .iter()
            .map(|s| s.to_string())
            .chain([dir.path().join("r").display().to_string()])
            .collect();
        if let Err(e) = refused(&argv, wants) {
            failures.push(format!("{text:?}: {e}"));
        }
    }
    for (i, (file, how, commands, wants)) in RESULT_FILES.iter().enumerate() {
        let bad = dir.path().join(format!("bad{i}"));
        copy_dir(&good, &bad);
        // merge reads on to the corrupted file only for what it takes as another host's run.
        if commands.contains(&"merge") {
            as_another_host(&bad, "another-host");
        }
        corrupt(&bad.join(file), how);
        for cmd in *commands {
            tried += 1;
            let argv = result_command(cmd, &bad, &good, &dir.path().join(format!("m{i}{cmd}")));
            if let Err(e) = refused(&argv, wants) {
                failures.push(format!("{file} {how}: {e}"));
            }
        }
    }
    assert!(tried >= 50, "only {tried} inputs");
    // A refused input leaves no half-made run behind.
    let left = fathom_schema::store::find_runs(&dir.path().join("r"));
    assert!(left.is_err(), "runs left by refused inputs: {left:?}");
    assert!(
        failures.is_empty(),
        "{} of {tried} malformed inputs were not refused as they should be:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    eprintln!("{tried} malformed inputs, each refused by name");
}
