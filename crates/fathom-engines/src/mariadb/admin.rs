//! What fathom asks of MariaDB over its admin connection: the storage engine check, the
//! variables recorded with a run, the status counters of a step, and maintenance (InnoDB's
//! dirty pages written, MyRocks' memtable flushed).

use super::Flavor;
use fathom_api::target::{Counters, Maintenance};
use mysql::prelude::Queryable;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// `SHOW GLOBAL STATUS` or `VARIABLES` for the given names (empty when the server says no).
fn show(admin: &mut mysql::Conn, what: &str, names: &[&str]) -> Vec<(String, String)> {
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    admin
        .query(format!(
            "SHOW GLOBAL {what} WHERE Variable_name IN ({list})"
        ))
        .unwrap_or_default()
}

/// Fails unless the server can create tables with the flavor's storage engine.
pub(super) fn check_storage(admin: &mut mysql::Conn, flavor: Flavor) -> anyhow::Result<()> {
    let support: Option<String> = admin.exec_first(
        "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = ?",
        (flavor.storage,),
    )?;
    match support.as_deref() {
        Some("YES") | Some("DEFAULT") => Ok(()),
        other => anyhow::bail!(
            "the server has no usable {} storage engine (information_schema.ENGINES says {:?}){}",
            flavor.storage,
            other,
            match flavor.plugin {
                Some(plugin) => format!(
                    "; {} needs its plugin and plugin-load-add={plugin} at start-up",
                    flavor.name
                ),
                None => String::new(),
            }
        ),
    }
}

/// The server's variables that matter for a run, plus the setup's lines.
pub(super) fn variables(admin: &mut mysql::Conn, setup: &[String]) -> BTreeMap<String, String> {
    let mut names = vec![
        "innodb_buffer_pool_size",
        "innodb_page_size",
        "innodb_flush_log_at_trx_commit",
        "innodb_flush_method",
        "rocksdb_block_cache_size",
        "rocksdb_default_cf_options",
        "rocksdb_flush_log_at_trx_commit",
        "max_connections",
    ];
    let from_setup: Vec<String> = setup
        .iter()
        .map(|l| l.split('=').next().unwrap_or("").trim().replace('-', "_"))
        .collect();
    names.extend(from_setup.iter().map(String::as_str));
    show(admin, "VARIABLES", &names).into_iter().collect()
}

/// Counters from SHOW GLOBAL STATUS worth a step's record: buffer pool and block cache reads,
/// bytes read and written, row operations, and how statements arrived (prepared statements
/// executed, text statements, transactions begun and committed).
const STATUS: &[&str] = &[
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_os_log_written",
    "Innodb_rows_read",
    "Rocksdb_block_cache_data_miss",
    "Rocksdb_block_cache_data_hit",
    "Rocksdb_block_cache_index_miss",
    "Rocksdb_bytes_written",
    "Rocksdb_bytes_read",
    "Rocksdb_compact_write_bytes",
    "Rocksdb_flush_write_bytes",
    "Rocksdb_wal_bytes",
    "Rocksdb_rows_read",
    "Questions",
    "Com_stmt_prepare",
    "Com_stmt_execute",
    "Com_begin",
    "Com_commit",
    "Busy_time",
];

pub(super) fn counters(admin: &mut mysql::Conn) -> Counters {
    let mut counters: Counters = show(admin, "STATUS", STATUS)
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.parse().ok()?)))
        .collect();
    // Seconds connections were busy on statements, counted only with `userstat` on (fathom
    // turns it on for a server on TCP): none without it, rather than a 0 that says "no time".
    if let Some(busy) = counters.remove("busy_time").filter(|&s| s > 0.0) {
        counters.insert(fathom_api::target::STATEMENT_TIME_US.into(), busy * 1e6);
    }
    counters
}

/// How a flavor's storage engine does a maintenance action.
#[derive(Clone, Copy)]
pub(super) enum Upkeep {
    /// Write every dirty page out (as the insert benchmark's cleanup does, by setting
    /// `innodb_max_dirty_pages_pct` to 0 until none are left); no compaction to wait for.
    InnoDb,
    /// Flush the memtable; waiting for compaction also compacts L0.
    MyRocks,
}

pub(super) fn maintain(
    admin: &mut mysql::Conn,
    upkeep: Upkeep,
    action: Maintenance,
) -> anyhow::Result<()> {
    match (upkeep, action) {
        (Upkeep::MyRocks, Maintenance::Flush) => {
            admin.query_drop("SET GLOBAL rocksdb_force_flush_memtable_now = 1")?
        }
        (Upkeep::MyRocks, Maintenance::WaitForCompaction | Maintenance::CompactLevel0) => {
            admin.query_drop("SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1")?
        }
        (Upkeep::InnoDb, Maintenance::Flush) => flush_dirty_pages(admin)?,
        (Upkeep::InnoDb, Maintenance::WaitForCompaction | Maintenance::CompactLevel0) => {}
    }
    Ok(())
}

/// Longest wait for InnoDB's dirty pages to be written.
const FLUSH_WAIT: Duration = Duration::from_secs(900);

fn flush_dirty_pages(admin: &mut mysql::Conn) -> anyhow::Result<()> {
    let pct: Option<String> = admin.query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")?;
    let pct = pct.unwrap_or_else(|| "90".into());
    admin.query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")?;
    let started = Instant::now();
    let result = loop {
        let dirty = show(admin, "STATUS", &["Innodb_buffer_pool_pages_dirty"])
            .first()
            .and_then(|(_, v)| v.parse::<u64>().ok())
            .unwrap_or(0);
        if dirty == 0 {
            break Ok(());
        }
        if started.elapsed() > FLUSH_WAIT {
            break Err(anyhow::anyhow!(
                "InnoDB still had {dirty} dirty pages after {}s of flushing",
                FLUSH_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    admin.query_drop(format!("SET GLOBAL innodb_max_dirty_pages_pct = {pct}"))?;
    result
}
