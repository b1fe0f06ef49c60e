//! The results database: every finished run is also recorded as rows, a run and its steps'
//! headline figures (with their whole JSON beside them), so a team can query every run it
//! ever made. SQLite by default, one file under the results root. The run directories stay
//! the source of truth: a database that cannot be written never loses a run (fathom says the
//! run was not recorded, and `fathom store import` catches up), and importing a directory
//! twice records each run once.

use anyhow::Context;
use fathom_core::result::RunStatus;
use fathom_core::store::LoadedRun;
use rusqlite::{params, Connection};
use std::path::{Path, PathBuf};

/// The schema's version, in `schema_version`; each later version adds a migration to
/// `MIGRATIONS`.
const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    experiment TEXT,
    cell TEXT,
    repeat INTEGER,
    setup TEXT NOT NULL,
    engine TEXT NOT NULL,
    engine_version TEXT NOT NULL,
    workload TEXT NOT NULL,
    clients INTEGER NOT NULL,
    hostname TEXT NOT NULL,
    cpu_model TEXT,
    kernel TEXT NOT NULL,
    fathom_version TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    manifest TEXT NOT NULL
);
CREATE TABLE steps (
    run_id TEXT NOT NULL REFERENCES runs(id),
    idx INTEGER NOT NULL,
    step TEXT NOT NULL,
    ops INTEGER NOT NULL,
    ops_per_sec REAL NOT NULL,
    p50_us REAL,
    p99_us REAL,
    cpu_us REAL,
    write_kb REAL,
    reads REAL,
    db_gb REAL,
    rss_gb REAL,
    summary TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE INDEX steps_by_step ON steps(step);
CREATE INDEX runs_by_series ON runs(engine, workload, setup);
"#];

/// Where finished runs are recorded.
#[derive(Clone, Debug, PartialEq)]
pub enum Store {
    Sqlite(PathBuf),
    Off,
}

impl Store {
    /// `--store`: `off`, or a SQLite file's path; `None` takes the default,
    /// `ROOT/fathom.db` under the results root.
    pub fn parse(text: Option<&str>, root: &Path) -> Result<Store, String> {
        match text {
            None => Ok(Store::Sqlite(root.join("fathom.db"))),
            Some("off") => Ok(Store::Off),
            Some(t) if t.starts_with("postgres://") || t.starts_with("postgresql://") => Err(
                "--store: a PostgreSQL results database is not built yet; give a SQLite file's path or off".into(),
            ),
            Some(t) => Ok(Store::Sqlite(PathBuf::from(t))),
        }
    }

    fn open(&self) -> anyhow::Result<Option<Connection>> {
        let Store::Sqlite(path) = self else {
            return Ok(None);
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut db = Connection::open(path)
            .with_context(|| format!("opening the results database {}", path.display()))?;
        db.busy_timeout(std::time::Duration::from_secs(30))?;
        migrate(&mut db)
            .with_context(|| format!("migrating the results database {}", path.display()))?;
        Ok(Some(db))
    }

    /// Records a finished run; `Ok(false)` when it was recorded before (or the store is off,
    /// or the run did not finish).
    pub fn record(&self, run_dir: &Path) -> anyhow::Result<bool> {
        let run = LoadedRun::load(run_dir)?;
        if run.manifest.status != RunStatus::Finished {
            return Ok(false);
        }
        let Some(mut db) = self.open()? else {
            return Ok(false);
        };
        insert(&mut db, &run)
    }

    /// Records every finished run under `dir`: (recorded now, recorded before).
    pub fn import(&self, dir: &Path) -> anyhow::Result<(usize, usize)> {
        let Some(mut db) = self.open()? else {
            anyhow::bail!("--store off: nothing to import into");
        };
        let (mut new, mut old) = (0, 0);
        for path in fathom_core::store::find_runs(dir)? {
            let run = LoadedRun::load(&path)?;
            if run.manifest.status != RunStatus::Finished {
                continue;
            }
            if insert(&mut db, &run)? {
                new += 1;
            } else {
                old += 1;
            }
        }
        Ok((new, old))
    }
}

/// Brings the schema to the newest version, one migration at a time.
fn migrate(db: &mut Connection) -> anyhow::Result<()> {
    let tx = db.transaction()?;
    tx.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
        [],
    )?;
    let at: i64 = tx.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )?;
    for (n, sql) in MIGRATIONS.iter().enumerate().skip(at as usize) {
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            [n as i64 + 1],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// A run's identity: the host that ran it, its directory (made absolute) and when it started.
/// Importing a directory again finds the same runs; a moved directory is recorded anew.
fn run_id(run: &LoadedRun) -> String {
    let m = &run.manifest;
    let path = std::fs::canonicalize(&run.path).unwrap_or_else(|_| run.path.clone());
    format!("{}:{}@{}", m.host.hostname, path.display(), m.started_at)
}

/// Inserts a run and its steps; false when the run was there already.
fn insert(db: &mut Connection, run: &LoadedRun) -> anyhow::Result<bool> {
    let m = &run.manifest;
    let id = run_id(run);
    let tx = db.transaction()?;
    let exp = m.experiment.as_ref();
    let added = tx.execute(
        "INSERT OR IGNORE INTO runs (id, path, experiment, cell, repeat, setup, engine, \
         engine_version, workload, clients, hostname, cpu_model, kernel, fathom_version, \
         started_at, finished_at, manifest) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            id,
            std::fs::canonicalize(&run.path)
                .unwrap_or_else(|_| run.path.clone())
                .display()
                .to_string(),
            exp.map(|e| e.name.clone()),
            exp.map(|e| e.cell.clone()),
            exp.map(|e| e.repeat as i64),
            m.setup.name,
            m.setup.engine,
            m.setup.engine_version,
            m.workload,
            m.clients as i64,
            m.host.hostname,
            m.host.cpu_model,
            m.host.kernel,
            m.host.fathom_version,
            m.started_at,
            m.finished_at,
            serde_json::to_string(m)?,
        ],
    )?;
    if added == 0 {
        return Ok(false);
    }
    for s in &run.steps {
        tx.execute(
            "INSERT INTO steps (run_id, idx, step, ops, ops_per_sec, p50_us, p99_us, cpu_us, \
             write_kb, reads, db_gb, rss_gb, summary) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                id,
                s.index as i64,
                s.step,
                s.ops as i64,
                s.ops_per_sec,
                (s.ops > 0).then_some(s.latency_us.p50),
                (s.ops > 0).then_some(s.latency_us.p99),
                s.per_op.cpu_us,
                s.per_op.write_kb,
                s.per_op.reads,
                s.db_gb.allocated,
                s.rss_gb,
                serde_json::to_string(s)?,
            ],
        )?;
    }
    tx.commit()?;
    Ok(true)
}

/// Records a run that just finished, saying on stderr when it could not be: the run is on
/// disk all the same, and `fathom store import` records it later.
pub fn record_or_say(store: &Store, run_dir: &Path) {
    if let Err(e) = store.record(run_dir) {
        eprintln!(
            "fathom: {} finished but is not recorded in the results database ({e:#}); its files are complete, and `fathom store import {}` records it later",
            run_dir.display(),
            run_dir.parent().unwrap_or(run_dir).display()
        );
    }
}
