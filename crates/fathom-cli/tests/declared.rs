//! Workload files end to end: YCSB's bundled workloads on an embedded kv engine, on SQLite
//! through SQL and on the servers (InnoDB, PostgreSQL), each kind counted as YCSB counts it;
//! a file of one's own; and bad files refused by file, line and key before anything runs.

mod common;
use common::*;
use std::path::PathBuf;

/// A bundled file's path in the repository, as a user gives it from a checkout.
fn bundled(name: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ycsb");
    root.join(format!("{name}.toml")).display().to_string()
}

fn ops(step: &Value, kind: &str) -> f64 {
    f(&step["by_op"][kind]["ops"])
}

#[test]
fn ycsb_a_loads_then_reads_and_updates_on_rocksdb() {
    let (_dir, results, stdout) = run_ok(&format!(
        "--engine rocksdb --workload {} --clients 2 --param records=2000 --param operations=4000",
        bundled("workloada")
    ));
    // The run, its directory and its header carry the file's name, not `declared`.
    assert!(stdout.contains("workload ycsb-a, 2 clients"), "{stdout}");
    assert!(!stdout.contains("declared"), "{stdout}");
    // READ against UPDATE latency, as YCSB prints them: a row of each under the run step.
    let kinds = stdout
        .split("run: latency by operation kind, µs")
        .nth(1)
        .unwrap_or_else(|| panic!("no latency by kind for run: {stdout}"));
    for kind in ["\nREAD ", "\nUPDATE "] {
        assert!(kinds.contains(kind), "{kind:?}: {kinds}");
    }
    let dirs: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        dirs.iter().any(|d| d.ends_with("-rocksdb-ycsb-a-c2")),
        "{dirs:?}"
    );
    let report = report_json(&results);
    let run = &report["runs"][0];
    assert_eq!(ops(step(run, "load"), "INSERT"), 2000.0, "{run}");
    let phase = step(run, "run");
    let (reads, updates) = (ops(phase, "READ"), ops(phase, "UPDATE"));
    assert_eq!(reads + updates, 4000.0);
    assert!((1700.0..2300.0).contains(&reads), "{reads} reads");
    // The run records which file it ran.
    let params = &run["params"];
    assert_eq!(params["workload_name"], "ycsb-a", "{params}");
    assert!(params["file_digest"]
        .as_str()
        .is_some_and(|d| d.len() == 16));
}

#[test]
fn a_bundled_name_and_sql_through_sqlite() {
    let (_dir, results, _) = run_ok(
        "--engine sqlite-sql --workload ycsb/workloade --clients 1 --param records=1000 \
         --param operations=500",
    );
    let run = &report_json(&results)["runs"][0];
    let phase = step(run, "run");
    assert_eq!(ops(phase, "SCAN") + ops(phase, "INSERT"), 500.0);
    // Scans read rows: up to 100 each, uniform from 1.
    let rows = f(&phase["by_op"]["SCAN"]["rows"]) / ops(phase, "SCAN");
    assert!((20.0..80.0).contains(&rows), "{rows} rows per scan");
}

#[test]
fn ycsb_b_on_the_servers() {
    let dir = server_scratch();
    ok(&run(
        "--engine innodb,postgres --workload ycsb/workloadb --clients 2 --param records=2000 \
         --param operations=2000",
        dir.path(),
    ));
    no_server_left(dir.path());
    for r in report_json(dir.path())["runs"].as_array().unwrap() {
        let engine = r["engine"].as_str().unwrap();
        assert_eq!(ops(step(r, "load"), "INSERT"), 2000.0, "{engine}");
        let phase = step(r, "run");
        assert_eq!(
            ops(phase, "READ") + ops(phase, "UPDATE"),
            2000.0,
            "{engine}"
        );
        // Every read finds its record: the load wrote them all.
        assert_eq!(
            f(&phase["by_op"]["READ"]["rows"]),
            ops(phase, "READ"),
            "{engine}"
        );
    }
}

#[test]
fn a_file_of_ones_own_runs_and_a_bad_one_is_refused_by_line_and_key() {
    let dir = scratch();
    let mine = dir.path().join("mine.toml");
    std::fs::write(
        &mine,
        "name = \"mine\"\nabout = \"hot reads beside deletes\"\n[data]\nrecords = 500\n\
         fields = 2\nfield_length = 10\ninsert_order = \"ordered\"\n[load]\n\
         [[phase]]\nname = \"hot\"\noperations = 300\ndistribution = \"hotspot\"\n\
         [phase.mix]\nread = 9\ndelete = 1\n",
    )
    .unwrap();
    let results = dir.path().join("results");
    ok(&run(
        &format!("--engine lmdb --workload {}", mine.display()),
        &results,
    ));
    let report = report_json(&results);
    let hot = step(&report["runs"][0], "hot");
    assert_eq!(ops(hot, "READ") + ops(hot, "DELETE"), 300.0);

    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"bad\"\nabout = \"x\"\n[data]\nrecords = 10\n[[phase]]\nname = \"p\"\n\
         operations = 5\ndistribution = \"zipfan\"\n[phase.mix]\nread = 1\n",
    )
    .unwrap();
    let e = err(&run(
        &format!("--engine lmdb --workload {}", bad.display()),
        &dir.path().join("never"),
    ));
    assert!(
        e.contains("bad.toml, line 8") && e.contains("zipfan") && e.contains("distribution"),
        "{e}"
    );
    assert!(!dir.path().join("never").exists(), "nothing ran");
}

#[test]
fn ycsb_a_on_a_document_server_as_the_mongodb_binding() {
    let dir = server_scratch();
    ok(&run(
        "--engine mongodb --workload ycsb/workloada --clients 2 --param records=500 \
         --param operations=300",
        dir.path(),
    ));
    no_server_left(dir.path());
    let report = report_json(dir.path());
    let r = &report["runs"][0];
    assert_eq!(ops(step(r, "load"), "INSERT"), 500.0);
    let phase = step(r, "run");
    assert_eq!(ops(phase, "READ") + ops(phase, "UPDATE"), 300.0);
    // A read returns the whole document: ten fields of 100 bytes and its key.
    let per_read = f(&phase["by_op"]["READ"]["bytes"]) / ops(phase, "READ");
    assert!(
        (1000.0..1400.0).contains(&per_read),
        "{per_read} bytes per read"
    );
    // Each operation reads its document by the `_id` index (an update finds it, then writes
    // it): no scans of the collection (FerretDB as released scans all 500 rows each time).
    let stats = &phase["engine_stats"];
    let n = ops(phase, "READ") + ops(phase, "UPDATE");
    let scanned = f(&stats["postgres.table_rows_scanned"]) / n;
    let by_index = f(&stats["postgres.table_rows_by_index"]) / n;
    assert!(
        scanned < 1.0,
        "{scanned} rows scanned an operation: {stats}"
    );
    // FerretDB's pooled sessions publish their counts up to 10 s late (PostgreSQL flushes an
    // idle session's statistics at most once a second, else ten seconds on): at most.
    assert!(
        by_index <= 2.5,
        "{by_index} rows by index an operation: {stats}"
    );
}

/// Closed-loop readers beside a writer held to 100 updates a second, then a phase whose rate
/// steps from 200 to 400 a second: the writer keeps its rate, the readers run free, and the
/// report prints the stepped phase's intervals with the rate meant for each.
#[test]
fn client_groups_keep_their_rates_and_a_schedule_shows_per_interval() {
    let dir = scratch();
    let mine = dir.path().join("groups.toml");
    std::fs::write(
        &mine,
        "name = \"groups\"\nabout = \"readers beside a writer\"\n[data]\nrecords = 1000\n\
         [load]\n\
         [[phase]]\nname = \"mixed\"\nduration = \"3s\"\narrivals = \"uniform\"\n\
         [[phase.group]]\nname = \"readers\"\nclients = 2\nmix = { read = 1 }\n\
         [[phase.group]]\nname = \"writer\"\nclients = 1\nrate = 100\nmix = { update = 1 }\n\
         [[phase]]\nname = \"stepped\"\nduration = \"4s\"\nrate = [200, 400]\n\
         arrivals = \"uniform\"\n[phase.mix]\nread = 1\n",
    )
    .unwrap();
    let results = dir.path().join("results");
    let out = ok(&run(
        &format!("--engine rocksdb --workload {} --clients 1", mine.display()),
        &results,
    ));
    let report = report_json(&results);
    let r = &report["runs"][0];
    let mixed = step(r, "mixed");
    assert_eq!(f(&mixed["clients"]), 3.0, "the groups' clients together");
    let updates = ops(mixed, "UPDATE");
    assert!(
        (270.0..=330.0).contains(&updates),
        "{updates} updates in 3 s at 100/s"
    );
    assert!(ops(mixed, "READ") > 10.0 * updates, "{mixed}");
    let stepped = step(r, "stepped");
    let reads = ops(stepped, "READ");
    assert!(
        (1080.0..=1320.0).contains(&reads),
        "{reads} reads: 2 s at 200, 2 s at 400"
    );
    assert!(out.contains("schedule stepped"), "{out}");
}

/// pgbench's tpcb-like on PostgreSQL and MariaDB: the load fills pgbench -i's tables (100,000
/// accounts, 10 tellers, a branch at scale 1), and each transaction touches five rows (three
/// updates, a select, an insert), reported under the script's name with its statements by
/// class, and as pgbench prints a run with `--format pgbench` (the run step only).
#[test]
fn pgbench_tpcb_like_on_postgres_and_mariadb() {
    let dir = server_scratch();
    ok(&run(
        "--engine postgres,innodb --workload pgbench/tpcb-like --clients 2 --duration 2s",
        dir.path(),
    ));
    no_server_left(dir.path());
    let as_pgbench = ok(&fathom(&[
        "report",
        dir.path().to_str().unwrap(),
        "--format",
        "pgbench",
    ]));
    let builtin =
        "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 1\nquery mode: simple\n";
    assert_eq!(as_pgbench.matches(builtin).count(), 2, "{as_pgbench}");
    assert!(!as_pgbench.contains(" load ("), "{as_pgbench}");
    for r in report_json(dir.path())["runs"].as_array().unwrap() {
        let processed = ops(step(r, "run"), "tpcb-like");
        let line = format!("number of transactions actually processed: {processed}\n");
        assert!(as_pgbench.contains(&line), "{line} in {as_pgbench}");
    }
    for r in report_json(dir.path())["runs"].as_array().unwrap() {
        let engine = r["engine"].as_str().unwrap();
        let load = step(r, "load");
        assert_eq!(f(&load["by_op"]["LOAD"]["rows"]), 100_011.0, "{engine}");
        let phase = step(r, "run");
        let xacts = ops(phase, "tpcb-like");
        assert!(xacts > 50.0, "{engine}: {xacts} transactions");
        let rows = f(&phase["by_op"]["tpcb-like"]["rows"]);
        if engine == "postgres" {
            assert_eq!(rows, 5.0 * xacts, "{engine}: rows per transaction");
        } else {
            // MariaDB counts the rows an UPDATE changed, not those it matched: one of the
            // three updates with a delta of 0 (1 in 10,001 draws) affects none.
            let missing = 5.0 * xacts - rows;
            let most = (3.0 * xacts / 10_001.0 * 4.0).ceil() + 3.0;
            assert!(
                (0.0..=most).contains(&missing),
                "{engine}: {rows} rows in {xacts} transactions"
            );
        }
    }
}

/// sysbench's tests written as files on PostgreSQL and MariaDB: the load makes sbtest1 with an
/// auto-increment id on each (`serial` as the server spells it) and fills the rows `vars`
/// asks for; an oltp_insert adds one row under a new id, a select_random_ranges returns one
/// count, an oltp_delete takes at most one row.
#[test]
fn sysbench_files_on_postgres_and_mariadb() {
    for (file, rows_per_op) in [
        ("sysbench/oltp_insert", Some(1.0)),
        ("sysbench/select_random_ranges", Some(1.0)),
        ("sysbench/oltp_delete", None),
    ] {
        let dir = server_scratch();
        ok(&run(
            &format!(
                "--engine postgres,innodb --workload {file} --clients 2 --duration 1s \
                 --param vars=table_size=3000"
            ),
            dir.path(),
        ));
        no_server_left(dir.path());
        for r in report_json(dir.path())["runs"].as_array().unwrap() {
            let engine = r["engine"].as_str().unwrap();
            assert_eq!(f(&step(r, "load")["by_op"]["LOAD"]["rows"]), 3000.0);
            let phase = step(r, "run");
            let (name, by) = phase["by_op"].as_object().unwrap().iter().next().unwrap();
            let (ops, rows) = (f(&by["ops"]), f(&by["rows"]));
            assert!(ops > 20.0, "{file} on {engine}: {ops} {name}");
            match rows_per_op {
                Some(per) => assert_eq!(rows, per * ops, "{file} on {engine}"),
                None => assert!(rows <= ops && rows > 0.0, "{file} on {engine}: {rows}"),
            }
        }
    }
}

/// docs/declared.md's "Write your own" file, as the page prints it, runs on RocksDB and
/// PostgreSQL: the load, then both phases, the arrivals group held near its 100 inserts a
/// second beside closed-loop readers.
#[test]
fn the_docs_own_workload_runs_as_written() {
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/declared.md"),
    )
    .unwrap();
    let recipe = &doc[doc.find("## Write your own").expect("the recipe's section")..];
    let start = recipe.find("```toml\n").expect("its file") + "```toml\n".len();
    let text = &recipe[start..start + recipe[start..].find("```").unwrap()];
    let dir = server_scratch();
    let file = dir.path().join("sessions.toml");
    std::fs::write(&file, text).unwrap();
    let results = dir.path().join("results");
    ok(&run(
        &format!(
            "--engine rocksdb,postgres --workload {} --clients 2 --duration 3s",
            file.display()
        ),
        &results,
    ));
    no_server_left(dir.path());
    for r in report_json(&results)["runs"].as_array().unwrap() {
        let engine = r["engine"].as_str().unwrap();
        assert_eq!(ops(step(r, "load"), "INSERT"), 20_000.0, "{engine}");
        let warm = step(r, "warm");
        let (reads, updates) = (ops(warm, "READ"), ops(warm, "UPDATE"));
        assert!(
            reads > 5.0 * updates && updates > 0.0,
            "{engine}: {reads} {updates}"
        );
        let busy = step(r, "busy");
        let inserts = ops(busy, "INSERT");
        assert!(
            (200.0..=330.0).contains(&inserts),
            "{engine}: {inserts} in 3s at 100/s"
        );
        assert!(ops(busy, "READ") > inserts, "{engine}");
    }
}

#[test]
fn db_benchs_keys_and_values_as_a_file_on_kv_engines_and_refused_through_sql() {
    let (_dir, results, _) = run_ok(
        "--engine rocksdb,lmdb --workload dbbench/readrandom --clients 2 --param records=3000 \
         --param operations=3000",
    );
    let report = report_json(&results);
    for run in report["runs"].as_array().unwrap() {
        // A record is a 20-byte key and its 400-byte value, alone (no packed fields).
        let load = &step(run, "fillseq")["by_op"]["INSERT"];
        assert_eq!(f(&load["ops"]), 3000.0, "{run}");
        assert_eq!(f(&load["bytes"]), 3000.0 * 420.0, "{run}");
        // Every key read is there, and its value is 400 bytes.
        let read = &step(run, "readrandom")["by_op"]["READ"];
        assert_eq!(f(&read["ops"]), 3000.0, "{run}");
        assert_eq!(f(&read["rows"]), 3000.0, "{run}");
        assert_eq!(f(&read["bytes"]), 3000.0 * 400.0, "{run}");
    }
    let dir = scratch();
    let e = err(&run(
        "--engine sqlite-sql --workload dbbench/readrandom --param records=10",
        &dir.path().join("results"),
    ));
    assert!(e.contains("key_format") && e.contains("kv engines"), "{e}");
}
