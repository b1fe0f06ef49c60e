//! End to end on a MongoDB-protocol server: FerretDB (built by `scripts/setup.sh --test`) over a
//! PostgreSQL from Debian's packages, started by `fathom serve --engine mongodb` on unix sockets
//! and reached with `--set url=` as any mongod would be; every workload runs on it at small
//! scale, through fathom's own client and (sysbench) the official driver, and the report has
//! the columns of every other engine. After each, no server is left.

mod common;
use common::*;

/// Runs `fathom run --engine mongodb ARGS` against the served URL into `results`, which must
/// succeed, and returns the run's report.
fn run_by_url(url: &str, pid: &str, args: &str, results: &std::path::Path) -> Value {
    let out = common::fathom(
        &[
            "run",
            "--engine",
            "mongodb",
            "--set",
            &format!("url={url}"),
            "--set",
            &format!("pid={pid}"),
            "--results",
            results.to_str().unwrap(),
            "--clients",
            "2",
        ]
        .into_iter()
        .chain(args.split_whitespace())
        .collect::<Vec<_>>(),
    );
    ok(&out);
    report_json(results)["runs"][0].clone()
}

/// The client the run's sessions used, as its record says (`fathom.client`).
fn client_of(run: &Value) -> String {
    let record = std::path::Path::new(run["path"].as_str().unwrap()).join("run.json");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
    record["setup"]["effective"]["fathom.client"]
        .as_str()
        .unwrap_or_else(|| panic!("no fathom.client in {}", record["setup"]))
        .to_string()
}

/// Every step ran operations, and the server's CPU and fathom's own were measured apart.
fn measured(run: &Value, steps: &[&str]) {
    for name in steps {
        let s = step(run, name);
        assert!(f(&s["ops"]) > 0.0, "{name}: no operations: {s}");
        assert!(
            f(&s["per_op"]["cpu_us_engine"]) > 0.0,
            "{name}: no server CPU: {s}"
        );
    }
}

#[test]
fn every_workload_runs_on_ferretdb_by_url() {
    let dir = server_scratch();
    let (mut server, url, pid) = serve("mongodb", dir.path());
    assert!(url.starts_with("mongodb://"), "{url}");
    assert!(pid.contains(','), "FerretDB's and PostgreSQL's pids: {pid}");
    let results = |name: &str| dir.path().join(name);

    let db = run_by_url(
        &url,
        &pid,
        "--workload dbbench --duration 1s --param num_keys=2000 \
         --param steps=fillseq,readrandom,fwdrange,overwrite,multireadrandom",
        &results("dbbench"),
    );
    measured(&db, &["fillseq", "readrandom", "fwdrange", "overwrite"]);
    let version = db["engine_version"].as_str().unwrap();
    assert!(version.contains("FerretDB"), "{db}");

    let sb = run_by_url(
        &url,
        &pid,
        "--workload sysbench --duration 1s --param table_size=500 \
         --param tests=oltp_point_select,select_random_points,oltp_read_write",
        &results("sysbench"),
    );
    measured(&sb, &["prepare", "oltp_point_select", "oltp_read_write"]);
    assert_eq!(client_of(&sb), "fathom", "fathom's own client by default");
    // The same statements through the official driver.
    let driver = run_by_url(
        &url,
        &pid,
        "--workload sysbench --duration 1s --param table_size=500 --set client=driver \
         --param tests=oltp_point_select,oltp_read_write",
        &results("sysbench-driver"),
    );
    measured(
        &driver,
        &["prepare", "oltp_point_select", "oltp_read_write"],
    );
    assert_eq!(client_of(&driver), "driver");

    let ib = run_by_url(
        &url,
        &pid,
        "--workload ibench --duration 1s --param rows=2000 --param write_rows=500 \
         --param settle=0s --param steps=l.i0,l.x,l.i1,qr100,qp100",
        &results("ibench"),
    );
    measured(&ib, &["l.i0", "l.i1", "qr100", "qp100"]);

    // LinkbenchX's collections; FerretDB has no transactions, so the check reports drifted
    // counts, if any, rather than failing.
    let lb = run_by_url(
        &url,
        &pid,
        "--workload linkbench --param maxid1=2001 --param duration=2s",
        &results("linkbench"),
    );
    measured(&lb, &["load", "request"]);
    assert!(f(&step(&lb, "check")["ops"]) >= 1.0, "{lb}");

    // TPC-C in py-tpcc's collections: one warehouse's documents (its row, 10 districts, 30,000
    // customers, history documents and orders with their lines inside, 100,000 stock, 9,000
    // new orders), transactions (FerretDB's New-Orders take about 30 s: it filters `$in` itself),
    // and conditions 1-4 holding after them.
    let tpcc = run_by_url(
        &url,
        &pid,
        "--workload tpcc --param warehouses=1 --duration 10s",
        &results("tpcc"),
    );
    let loaded = f(&step(&tpcc, "prepare")["by_op"]["load"]["rows"]);
    assert_eq!(loaded, 199_011.0, "{tpcc}");
    assert!(f(&step(&tpcc, "run")["ops"]) >= 1.0, "{tpcc}");
    assert_eq!(f(&step(&tpcc, "check")["ops"]), 4.0, "{tpcc}");

    // The tables and collections are the server's: the text report names it as FerretDB.
    let text = report_as(&results("sysbench"), "text");
    assert!(text.contains("FerretDB"), "{text}");
    assert!(
        text.contains("FerretDB's and its PostgreSQL's, not mongod's"),
        "{text}"
    );
    assert_holds(&text, &["cpu/o", "fathom/o"]);

    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    unsafe { libc::kill(server.id() as i32, libc::SIGINT) };
    assert!(server.wait().unwrap().success());
    no_server_left(dir.path());
}

/// Without a URL fathom starts FerretDB and its PostgreSQL itself, in the run's data directory,
/// and stops both when the run ends.
#[test]
fn a_run_without_url_starts_and_stops_ferretdb() {
    let dir = server_scratch();
    ok(&run(
        "--engine mongodb --workload sysbench --clients 2 --param table_size=500 \
         --param duration=1s",
        dir.path(),
    ));
    no_server_left(dir.path());
    let run = &report_json(dir.path())["runs"][0];
    measured(run, &["prepare", "oltp_point_select"]);
    let stats = &step(run, "oltp_point_select")["engine_stats"];
    assert!(
        f(&stats["postgres.xact_commit"]) > 0.0,
        "the PostgreSQL under FerretDB's counters: {stats}"
    );
}
