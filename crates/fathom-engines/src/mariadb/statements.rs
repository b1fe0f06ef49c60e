//! Every statement's work from a MariaDB fathom started with `statement_log`: its slow log with
//! no threshold, kept as a table (`mysql.slow_log`, whose start time has microseconds, where
//! the file's has seconds), read over the admin connection after the step. Each row gives the
//! connection (the session), when the statement began, how long it ran, and the rows it
//! examined, sent and changed — the slow log's figures for every statement.

use crate::server::statements::shape;
use fathom_api::work::{Counts, Statement, StatementLog};
use mysql::prelude::Queryable;

/// The my.cnf lines that log every statement into `mysql.slow_log`.
pub(super) const CONF: &[&str] = &[
    "slow_query_log = 1",
    "long_query_time = 0",
    "log_output = TABLE",
];

/// What each statement counts, in `Counts`' order. The lock time is table locks' only (an
/// InnoDB row lock's wait is not in it).
pub(super) const NAMES: &[&str] = &[
    "rows examined",
    "rows sent",
    "rows affected",
    "µs waiting for table locks",
];

/// One row of `mysql.slow_log`: thread, start µs, duration µs, rows examined, sent, affected,
/// lock µs, text.
type Row = (u64, u64, u64, u64, u64, u64, u64, String);

/// The statements that began within `[from_us, to_us]`.
pub(super) fn read(
    admin: &mut mysql::Conn,
    from_us: u64,
    to_us: u64,
) -> anyhow::Result<StatementLog> {
    let at = |us: u64| format!("FROM_UNIXTIME({}.{:06})", us / 1_000_000, us % 1_000_000);
    let micros = |col: &str| format!("CAST(TIME_TO_SEC({col}) * 1000000 AS UNSIGNED)");
    let sql = format!(
        "SELECT thread_id, CAST(UNIX_TIMESTAMP(start_time) * 1000000 AS UNSIGNED), {}, \
         rows_examined, rows_sent, rows_affected, {}, sql_text FROM mysql.slow_log \
         WHERE start_time >= {} AND start_time <= {}",
        micros("query_time"),
        micros("lock_time"),
        at(from_us),
        at(to_us)
    );
    let rows: Vec<Row> = admin.query(sql)?;
    Ok(StatementLog {
        names: NAMES,
        statements: rows.into_iter().map(statement).collect(),
        slack_us: 0,
    })
}

fn statement(
    (thread, start_us, took_us, examined, sent, affected, lock_us, text): Row,
) -> Statement {
    let mut counts = Counts::default();
    counts[..4].copy_from_slice(&[examined, sent, affected, lock_us]);
    Statement {
        session: thread,
        start_us,
        end_us: start_us + took_us,
        shape: shape(&text),
        counts,
    }
}
