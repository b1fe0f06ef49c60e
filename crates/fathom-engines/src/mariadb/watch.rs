//! What InnoDB is doing in the background, as MariaDB's views show it at one moment (its log
//! tells none of it): sessions waiting for a row lock another transaction holds
//! (`information_schema.INNODB_LOCK_WAITS` with the waiting and holding transactions and the
//! lock), pages the buffer pool's flushing wrote since the look before
//! (`Innodb_buffer_pool_pages_flushed`), and old row versions purge removed (the history list,
//! `Innodb_history_list_length`, shrinking). `server::watch` makes events of the looks.

use crate::server::watch::{Look, Looked, Seen};
use fathom_api::events::{FLUSH, LOCK_WAIT, PURGE};
use fathom_api::target::{Counters, STATEMENT_TIME_US};
use mysql::prelude::Queryable;

/// Each waiting transaction with the lock it waits for and who holds it.
const LOCK_WAITS: &str = "SELECT r.trx_id, r.trx_mysql_thread_id, b.trx_mysql_thread_id, \
    l.lock_mode, l.lock_table, IFNULL(l.lock_index, '') \
    FROM information_schema.INNODB_LOCK_WAITS w \
    JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id \
    JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id \
    JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.requested_lock_id";

/// The global figures a look compares with the look before, and the watcher's own session's
/// statements and their time (`Busy_time` counts only with `userstat` on).
const STATUS: &str = "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
    WHERE VARIABLE_NAME IN ('INNODB_BUFFER_POOL_PAGES_FLUSHED', 'INNODB_HISTORY_LIST_LENGTH') \
    UNION ALL SELECT CONCAT('SESSION.', VARIABLE_NAME), VARIABLE_VALUE \
    FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME IN ('QUESTIONS', 'BUSY_TIME')";

/// A look at InnoDB over a connection of its own to `address`.
pub(super) fn look(address: &mysql::Opts) -> anyhow::Result<Look> {
    let opts = mysql::OptsBuilder::from_opts(address.clone())
        .read_timeout(Some(std::time::Duration::from_secs(10)))
        .write_timeout(Some(std::time::Duration::from_secs(10)));
    let mut conn = mysql::Conn::new(opts)?;
    // Checked now: a server that refuses the views says so before the run starts.
    conn.query_drop(LOCK_WAITS)?;
    let mut before: Option<Figures> = None;
    Ok(Box::new(move || {
        let waits: Vec<(String, String, String, String, String, String)> =
            conn.query(LOCK_WAITS)?;
        let status: Vec<(String, String)> = conn.query(STATUS)?;
        let now = Figures::of(&status);
        let mut seen: Vec<Seen> = waits.into_iter().map(lock_wait).collect();
        if let Some(b) = before {
            seen.extend(work(&b, &now));
        }
        before = Some(now);
        Ok(Looked {
            seen,
            own: own(&status),
        })
    }))
}

/// The watcher's session's statements and their time, under the keys of the step's counters.
fn own(status: &[(String, String)]) -> Counters {
    let questions: f64 = figure(status, "SESSION.QUESTIONS");
    let busy_s: f64 = figure(status, "SESSION.BUSY_TIME");
    Counters::from([
        ("questions".to_string(), questions),
        (STATEMENT_TIME_US.to_string(), busy_s * 1e6),
    ])
}

/// A figure of the status rows (0 when missing).
fn figure<T: std::str::FromStr + Default>(status: &[(String, String)], name: &str) -> T {
    (status.iter())
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_default()
}

/// The counters a look compares with the look before.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Figures {
    pages_flushed: u64,
    history: u64,
}

impl Figures {
    fn of(status: &[(String, String)]) -> Figures {
        Figures {
            pages_flushed: figure(status, "Innodb_buffer_pool_pages_flushed"),
            history: figure(status, "Innodb_history_list_length"),
        }
    }
}

/// A waiting transaction: (its id, its session, the holder's session, mode, table, index).
fn lock_wait(
    (trx, thread, holder, mode, table, index): (String, String, String, String, String, String),
) -> Seen {
    let on = match index.as_str() {
        "" => table,
        i => format!("{table} ({i})"),
    };
    Seen {
        key: format!("lock {trx}"),
        what: LOCK_WAIT,
        detail: format!(
            "thread {thread} waited for a {mode} lock on {on}, held by thread {holder}"
        ),
        count: 0,
    }
}

/// The background work done between two looks: pages flushed, undo logs purged.
fn work(before: &Figures, now: &Figures) -> Vec<Seen> {
    let done = [
        (
            FLUSH,
            now.pages_flushed.saturating_sub(before.pages_flushed),
            "pages written from the buffer pool",
        ),
        (
            PURGE,
            before.history.saturating_sub(now.history),
            "undo logs purged from the history list",
        ),
    ];
    (done.into_iter())
        .filter(|(_, n, _)| *n > 0)
        .map(|(what, count, detail)| Seen {
            key: what.into(),
            what,
            detail: detail.into(),
            count,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages flushed since the look before are a flush; a shorter history list is purge; a
    /// longer one (transactions adding undo) is nothing.
    #[test]
    fn work_between_two_looks() {
        let a = Figures {
            pages_flushed: 100,
            history: 50,
        };
        let b = Figures {
            pages_flushed: 130,
            history: 20,
        };
        let seen = work(&a, &b);
        assert_eq!(seen.len(), 2);
        assert_eq!((seen[0].what, seen[0].count), (FLUSH, 30));
        assert_eq!((seen[1].what, seen[1].count), (PURGE, 30));
        assert!(work(&b, &a).is_empty());
    }

    #[test]
    fn a_lock_wait_names_the_lock_and_its_holder() {
        let s = lock_wait((
            "421".into(),
            "12".into(),
            "15".into(),
            "X".into(),
            "`sbtest`.`sbtest1`".into(),
            "PRIMARY".into(),
        ));
        assert_eq!(s.key, "lock 421");
        assert_eq!(
            s.detail,
            "thread 12 waited for a X lock on `sbtest`.`sbtest1` (PRIMARY), held by thread 15"
        );
        let status = vec![
            ("Innodb_history_list_length".to_string(), "7".to_string()),
            (
                "Innodb_buffer_pool_pages_flushed".to_string(),
                "9".to_string(),
            ),
        ];
        assert_eq!(
            Figures::of(&status),
            Figures {
                pages_flushed: 9,
                history: 7
            }
        );
    }

    /// The watcher's own session's statements and time, to take out of the step's counters.
    #[test]
    fn its_own_session_figures() {
        let status: Vec<(String, String)> =
            [("SESSION.QUESTIONS", "41"), ("SESSION.BUSY_TIME", "0.0025")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let own = own(&status);
        assert_eq!(own["questions"], 41.0);
        assert!((own[STATEMENT_TIME_US] - 2_500.0).abs() < 1e-6, "{own:?}");
    }
}
