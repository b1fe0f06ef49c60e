//! TPC-C's additions to reports (docs/workloads.md §5.5): per setup, the run step's tpmC (the
//! New-Orders committed a minute, which HammerDB calls NOPM), all transactions a minute, the
//! rollbacks, the transactions lost to a deadlock or serialization failure (sysbench-tpcc's
//! ignored errors) and the retries, and the cost per transaction; per transaction kind, its
//! response times (p50, p90 — the specification's constraint is on the 90th percentile — p99,
//! max), its failures and retries. Each figure is the median over repeats.

use super::TpccKind as K;
use crate::report::ReportHooks;
use fathom_schema::group::{median_step, Series};
use fathom_schema::result::StepSummary;
use fathom_schema::table::{Cell, Style, Table, Titled};

/// What TPC-C adds to reports.
pub const HOOKS: ReportHooks = ReportHooks {
    heading: "TPC-C",
    tables,
    kinds_shown: true,
    ..ReportHooks::NONE
};

/// The transaction kinds in the order TPC-C lists them.
const TRANSACTIONS: [K; 6] = [
    K::NewOrder,
    K::NewOrderRollback,
    K::Payment,
    K::OrderStatus,
    K::Delivery,
    K::StockLevel,
];

/// The median run step of each series that ran TPC-C's transactions.
fn run_steps(all: &[Series]) -> Vec<(String, StepSummary)> {
    let mut out = Vec::new();
    for s in all {
        let reps: Vec<&StepSummary> = (s.runs.iter())
            .flat_map(|r| &r.steps)
            .filter(|x| x.by_op.contains_key(K::Payment.name()))
            .collect();
        if !reps.is_empty() {
            out.push((s.label(all), median_step(&reps)));
        }
    }
    out
}

fn tables(all: &[Series]) -> Vec<Titled> {
    let steps = run_steps(all);
    if steps.is_empty() {
        return Vec::new();
    }
    vec![
        Titled {
            title: "TPC-C throughput: tpmC is New-Orders committed a minute (HammerDB's NOPM)"
                .into(),
            table: throughput(&steps),
        },
        Titled {
            title: "TPC-C response times per transaction, ms".into(),
            table: response_times(&steps),
        },
    ]
}

fn throughput(steps: &[(String, StepSummary)]) -> Table {
    let mut t = Table::new(&[
        "clients",
        "tpmC",
        "tpm",
        "rollback%",
        "failed%",
        "retry%",
        "cpu/txn",
        "r/txn",
        "wKB/txn",
        "cs/txn",
        "setup",
    ]);
    for (label, m) in steps {
        let minutes = m.seconds.max(f64::MIN_POSITIVE) / 60.0;
        let ops = |k: K| m.by_op.get(k.name()).map_or(0, |o| o.ops) as f64;
        let all: f64 = TRANSACTIONS.iter().map(|&k| ops(k)).sum();
        let retries: u64 = m.by_op.values().map(|o| o.retries).sum();
        let failed: u64 = m.by_op.values().map(|o| o.failed).sum();
        let share = |n: f64| (all > 0.0).then(|| 100.0 * n / all);
        t.push(vec![
            Cell::count(m.clients as f64),
            Cell::Number(ops(K::NewOrder) / minutes, Style::Fixed(0)),
            Cell::Number(all / minutes, Style::Fixed(0)),
            Cell::styled(share(ops(K::NewOrderRollback)), Style::Percent),
            Cell::styled(share(failed as f64), Style::Percent),
            Cell::styled(share(retries as f64), Style::Percent),
            Cell::opt(m.per_op.cpu_us),
            Cell::opt(m.per_op.reads),
            Cell::opt(m.per_op.write_kb),
            Cell::opt(m.per_op.cs),
            Cell::Text(label.clone()),
        ]);
    }
    t
}

fn response_times(steps: &[(String, StepSummary)]) -> Table {
    let mut t = Table::new(&[
        "transaction",
        "count",
        "p50",
        "p90",
        "p99",
        "max",
        "failed",
        "retries",
        "setup",
    ]);
    for (label, m) in steps {
        for k in TRANSACTIONS {
            let Some(o) = m.by_op.get(k.name()) else {
                continue;
            };
            let l = &o.latency_us;
            let ms = |us: f64| Cell::num(us / 1000.0);
            t.push(vec![
                Cell::text(k.name()),
                Cell::count(o.ops as f64),
                ms(l.p50),
                ms(l.p90),
                ms(l.p99),
                ms(l.max),
                Cell::count(o.failed as f64),
                Cell::count(o.retries as f64),
                Cell::Text(label.clone()),
            ]);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::latency::Latency;
    use fathom_schema::result::OpSummary;

    #[test]
    fn tpmc_counts_committed_new_orders_a_minute() {
        let op = |ops, p90| OpSummary {
            ops,
            retries: 2,
            failed: 1,
            latency_us: Latency {
                p90,
                ..Latency::default()
            },
            ..OpSummary::default()
        };
        let m = StepSummary {
            seconds: 30.0,
            clients: 2,
            by_op: [
                (K::NewOrder.name().into(), op(990, 4000.0)),
                (K::NewOrderRollback.name().into(), op(10, 3000.0)),
                (K::Payment.name().into(), op(1000, 2000.0)),
            ]
            .into(),
            ..StepSummary::default()
        };
        let steps = vec![("a".to_string(), m)];
        let row = &throughput(&steps).rows[0];
        // 990 in half a minute; 2000 transactions; 10 of them rolled back; 3 lost; 6 retries.
        assert_eq!(row[1], Cell::Number(1980.0, Style::Fixed(0)));
        assert_eq!(row[2], Cell::Number(4000.0, Style::Fixed(0)));
        assert_eq!(row[3], Cell::Number(0.5, Style::Percent));
        assert_eq!(row[4], Cell::Number(0.15, Style::Percent));
        assert_eq!(row[5], Cell::Number(0.3, Style::Percent));
        let times = response_times(&steps);
        assert_eq!(times.rows.len(), 3);
        assert_eq!(times.rows[0][3], Cell::num(4.0));
    }
}
