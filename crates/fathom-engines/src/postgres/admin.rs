//! What fathom asks of PostgreSQL over its admin connection: the settings recorded with a run
//! and the database's statistics counters of a step.

use fathom_api::target::Counters;
use postgres::Client;
use std::collections::BTreeMap;

/// The server's settings that matter for a run, plus those the setup's lines set, with units.
pub(super) fn settings(admin: &mut Client, setup: &[String]) -> BTreeMap<String, String> {
    let mut names: Vec<String> = [
        "shared_buffers",
        "max_wal_size",
        "synchronous_commit",
        "fsync",
        "wal_level",
        "max_connections",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    names.extend(
        setup
            .iter()
            .map(|l| l.split('=').next().unwrap_or("").trim().to_string()),
    );
    admin
        .query(
            "SELECT name, setting || COALESCE(unit, '') FROM pg_settings WHERE name = ANY($1)",
            &[&names],
        )
        .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        .unwrap_or_default()
}

/// How long the counters wait for other sessions' statistics to reach the shared counters.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(3);

/// Waits (up to `SETTLE`) until every other client session has flushed its statistics: a
/// backend keeps its counts until it exits, or until it has been idle for up to a second
/// (PostgreSQL flushes at most once a second), so counters read as the clients disconnect
/// miss their last second of commits.
pub(super) fn settle(admin: &mut Client) {
    let start = std::time::Instant::now();
    while start.elapsed() < SETTLE {
        let pending = admin.query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' \
             AND pid <> pg_backend_pid() \
             AND (state IS DISTINCT FROM 'idle' OR state_change > clock_timestamp() - interval '1100 ms')",
            &[],
        );
        match pending {
            Ok(row) if row.get::<_, i64>(0) > 0 => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            _ => return,
        }
    }
}

/// pg_stat_database's counters of the current database (empty when the query fails).
pub(super) fn counters(admin: &mut Client) -> Counters {
    let row = admin.query_opt(
        "SELECT blks_read::float8, blks_hit::float8, tup_returned::float8, \
         tup_fetched::float8, xact_commit::float8, xact_rollback::float8, deadlocks::float8 \
         FROM pg_stat_database WHERE datname = current_database()",
        &[],
    );
    let names = [
        "blks_read",
        "blks_hit",
        "tup_returned",
        "tup_fetched",
        "xact_commit",
        "xact_rollback",
        "deadlocks",
    ];
    let mut counters: Counters = match row {
        Ok(Some(r)) => names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), r.get::<_, f64>(i)))
            .collect(),
        _ => Counters::new(),
    };
    // Rows read from the user tables alone (the database's counters above include the
    // catalogs' and the statistics views'): by scans, and fetched through indexes.
    let tables = admin.query_opt(
        "SELECT COALESCE(sum(seq_tup_read), 0)::float8, COALESCE(sum(idx_tup_fetch), 0)::float8 \
         FROM pg_stat_user_tables",
        &[],
    );
    if let Ok(Some(r)) = tables {
        counters.insert("table_rows_scanned".into(), r.get::<_, f64>(0));
        counters.insert("table_rows_by_index".into(), r.get::<_, f64>(1));
    }
    // The time sessions spent running statements (from 14 on; an older release has none),
    // ms: what the server's own work on a statement took, beside the wire's.
    let active = admin.query_opt(
        "SELECT active_time FROM pg_stat_database WHERE datname = current_database()",
        &[],
    );
    if let Ok(Some(r)) = active {
        if let Ok(Some(ms)) = r.try_get::<_, Option<f64>>(0) {
            counters.insert(fathom_api::target::STATEMENT_TIME_US.into(), ms * 1e3);
        }
    }
    counters
}
