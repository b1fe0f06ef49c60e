//! TPC-C end to end on the SQL servers (MariaDB's InnoDB, PostgreSQL) and SQLite: the load of a
//! warehouse as sysbench-tpcc's prepare writes it, the five transactions in sysbench-tpcc's mix,
//! and TPC-C's consistency conditions 1–4 holding after the run.

mod common;
use common::*;

fn ops(step: &Value, kind: &str) -> f64 {
    step["by_op"][kind]["ops"].as_f64().unwrap_or(0.0)
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
        // Conditions 1–4 on the one warehouse.
        assert_eq!(ops(step(run, "check"), "check"), 4.0, "{engine}");
    }
}
