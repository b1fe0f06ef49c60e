//! What fathom asks of PostgreSQL over its admin connection: the settings recorded with a run
//! and the database's statistics counters of a step.

use fathom_core::target::Counters;
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
    match row {
        Ok(Some(r)) => names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), r.get::<_, f64>(i)))
            .collect(),
        _ => Counters::new(),
    }
}
