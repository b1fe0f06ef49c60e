//! PostgreSQL's sessions waiting for a lock, as `pg_stat_activity` shows them at one moment
//! (`wait_event_type = 'Lock'`, the holders from `pg_blocking_pids`): every wait, where the
//! server's log tells only those longer than `deadlock_timeout`. The watcher's connection is
//! to the `postgres` database, so the workload database's counters (`pg_stat_database`) hold
//! none of its statements. `server::watch` makes events of the looks.

use crate::server::watch::{Look, Looked, Seen};
use fathom_api::events::LOCK_WAIT;
use postgres::NoTls;

/// Each client session waiting for a lock: its pid, the lock's kind, the holders' pids and
/// the start of its statement.
const LOCK_WAITS: &str = "SELECT pid::text, wait_event, \
    array_to_string(pg_blocking_pids(pid), ', '), \
    left(regexp_replace(query, '\\s+', ' ', 'g'), 60) \
    FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND backend_type = 'client backend'";

/// A look at the sessions over a connection of its own to the server at `address`.
pub(super) fn look(address: &postgres::Config) -> anyhow::Result<Look> {
    let mut cfg = address.clone();
    cfg.dbname("postgres")
        .connect_timeout(std::time::Duration::from_secs(10));
    let mut client = cfg.connect(NoTls)?;
    // Checked now: a server that refuses the view says so before the run starts.
    client.query(LOCK_WAITS, &[])?;
    Ok(Box::new(move || {
        let rows = client.query(LOCK_WAITS, &[])?;
        let seen = (rows.iter())
            .map(|r| lock_wait(r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect();
        Ok(Looked {
            seen,
            own: Default::default(),
        })
    }))
}

/// One waiting session, as the log's waits say it (`process N waited for …, held by process M`).
fn lock_wait(pid: &str, lock: &str, holders: &str, statement: &str) -> Seen {
    let held = match holders {
        "" => String::new(),
        h => format!(", held by process {h}"),
    };
    Seen {
        key: format!("lock {pid}"),
        what: LOCK_WAIT,
        detail: format!("process {pid} waited for a lock on a {lock} ({statement}){held}"),
        count: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_names_its_lock_statement_and_holders() {
        let s = lock_wait(
            "8505",
            "transactionid",
            "8516",
            "UPDATE sbtest1 SET c=$1 WHERE id=$2",
        );
        assert_eq!(s.key, "lock 8505");
        assert_eq!(
            s.detail,
            "process 8505 waited for a lock on a transactionid (UPDATE sbtest1 SET c=$1 WHERE \
             id=$2), held by process 8516"
        );
        assert!(!lock_wait("1", "tuple", "", "x").detail.contains("held"));
    }
}
