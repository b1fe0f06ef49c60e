//! TPC-C end to end on the SQL servers (MariaDB's InnoDB, PostgreSQL), SQLite and the kv engines:
//! the load of a warehouse as sysbench-tpcc's prepare writes it, the five transactions in
//! sysbench-tpcc's mix, TPC-C's consistency conditions 1–4 holding after the run, the report's
//! tpmC and response times, and a corrupted district failing the check by its condition.

mod common;
use common::*;

fn ops(step: &Value, kind: &str) -> f64 {
    step["by_op"][kind]["ops"].as_f64().unwrap_or(0.0)
}

/// Asserts what one run of `tpcc` on one warehouse did: its load, its mix, its check.
fn loaded_ran_and_checked(run: &Value) {
    let engine = &run["engine"];
    // One warehouse: its row, 10 districts, 30,000 customers, history rows and orders,
    // 100,000 stock rows, 9,000 new orders, about 300,000 order lines: about 500,000.
    let rows = f(&step(run, "prepare")["by_op"]["load"]["rows"]);
    assert!(
        (480_000.0..520_000.0).contains(&rows),
        "{engine}: {rows} rows loaded"
    );
    let r = step(run, "run");
    let (new, pay) = (ops(r, "new_order"), ops(r, "payment"));
    let rest = ["order_status", "delivery", "stock_level"].map(|k| ops(r, k));
    assert!(
        new > 20.0 && pay > 20.0,
        "{engine}: {new} new orders, {pay} payments"
    );
    // sysbench-tpcc's mix: 10 of 23 each, 1 of 23 each of the rest.
    let all = new + ops(r, "new_order_rollback") + pay + rest.iter().sum::<f64>();
    let share = (new + ops(r, "new_order_rollback")) / all;
    assert!(
        (0.33..0.53).contains(&share),
        "{engine}: New-Order share {share}"
    );
    assert!(rest.iter().all(|&n| n > 0.0), "{engine}: {rest:?}");
    // TPC-C's response-time percentile is in every kind's latency.
    let p90 = f(&r["by_op"]["new_order"]["latency_us"]["p90"]);
    let p50 = f(&r["by_op"]["new_order"]["latency_us"]["p50"]);
    assert!(p90 >= p50 && p90 > 0.0, "{engine}: p50 {p50} p90 {p90}");
    // Conditions 1–4 on the one warehouse.
    assert_eq!(ops(step(run, "check"), "check"), 4.0, "{engine}");
}

#[test]
fn one_warehouse_loads_runs_the_mix_and_stays_consistent() {
    let dir = server_scratch();
    let results = dir.path().join("results");
    ok(&run(
        "--engine innodb,postgres,sqlite-sql --workload tpcc --clients 2 --param warehouses=1 \
         --duration 8s",
        &results,
    ));
    let report = report_json(&results);
    for run in report["runs"].as_array().unwrap() {
        loaded_ran_and_checked(run);
    }
    let text = report_as(&results, "text");
    assert_holds(
        &text,
        &["TPC-C throughput", "tpmC", "TPC-C response times", "p90"],
    );
}

#[test]
fn the_kv_engines_run_the_same_transactions_in_their_own() {
    let dir = scratch();
    let results = dir.path().join("results");
    ok(&run(
        "--engine rocksdb,wiredtiger,lmdb,sqlite --workload tpcc --clients 2 \
         --param warehouses=1 --duration 6s",
        &results,
    ));
    let report = report_json(&results);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for run in runs {
        loaded_ran_and_checked(run);
    }
}

#[test]
fn a_district_corrupted_after_the_run_fails_the_check_by_its_condition() {
    let dir = scratch();
    let (results, data) = (dir.path().join("results"), dir.path().join("db"));
    let data_arg = format!("--data-dir {}", data.display());
    ok(&run(
        &format!(
            "--engine sqlite-sql --workload tpcc --clients 1 --param steps=prepare,run \
             --duration 2s \
             {data_arg}"
        ),
        &results,
    ));
    let db = rusqlite::Connection::open(data.join("fathom-sql.sqlite")).unwrap();
    let changed = db
        .execute(
            "UPDATE district1 SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 1 AND d_id = 4",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let out = run(
        &format!(
            "--engine sqlite-sql --workload tpcc --param steps=check {data_arg} --existing-data"
        ),
        &results,
    );
    let e = err(&out);
    assert_holds(
        &e,
        &[
            "TPC-C consistency condition 2",
            "D_NEXT_O_ID - 1 = max(O_ID)",
            "fails in 1 of the 10 districts of warehouse 1, table copy 1",
        ],
    );
}
