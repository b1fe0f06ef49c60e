//! The results database: every finished run is also recorded as rows, a run and its steps'
//! headline figures (with their whole JSON beside them), so a team can query every run it
//! ever made. SQLite by default, one file under the results root; a team's PostgreSQL with
//! `--store postgres://...`. Both take the same schema and statements through `Database`.
//! The run directories stay the source of truth: a database that cannot be written never
//! loses a run (fathom says the run was not recorded, and `fathom store import` catches up),
//! and importing a directory twice records each run once.

mod postgres;
mod rows;
mod sqlite;

use fathom_schema::result::RunStatus;
use fathom_schema::store::LoadedRun;
use std::path::{Path, PathBuf};

pub use rows::Value;

/// The schema, one migration per version (`schema_version` holds the versions applied). Its
/// types are the ones both databases read alike: TEXT, BIGINT and DOUBLE PRECISION. The step
/// figures a database records beyond these are added as columns when first recorded
/// (`add_figures`), and `step_figures` names every figure column `steps` has.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    experiment TEXT,
    cell TEXT,
    repeat BIGINT,
    setup TEXT NOT NULL,
    engine TEXT NOT NULL,
    engine_version TEXT NOT NULL,
    workload TEXT NOT NULL,
    clients BIGINT NOT NULL,
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
    idx BIGINT NOT NULL,
    step TEXT NOT NULL,
    ops BIGINT NOT NULL,
    ops_per_sec DOUBLE PRECISION NOT NULL,
    p50_us DOUBLE PRECISION,
    p99_us DOUBLE PRECISION,
    cpu_us DOUBLE PRECISION,
    write_kb DOUBLE PRECISION,
    reads DOUBLE PRECISION,
    db_gb DOUBLE PRECISION,
    rss_gb DOUBLE PRECISION,
    summary TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE INDEX steps_by_step ON steps(step);
CREATE INDEX runs_by_series ON runs(engine, workload, setup);
"#,
    r#"
CREATE TABLE step_figures (name TEXT PRIMARY KEY);
INSERT INTO step_figures (name) VALUES ('ops_per_sec'), ('p50_us'), ('p99_us'), ('cpu_us'),
    ('write_kb'), ('reads'), ('db_gb'), ('rss_gb');
"#,
];

/// A connection to a results database: statements are written once with `?` placeholders.
pub(crate) trait Database {
    /// Starts a transaction that will write (SQLite takes its write lock now, so two writers
    /// wait for each other rather than fail on upgrading; PostgreSQL also serializes schema
    /// migrations across hosts).
    fn begin(&mut self) -> anyhow::Result<()>;
    /// Statements without parameters (`COMMIT`, a migration).
    fn batch(&mut self, sql: &str) -> anyhow::Result<()>;
    /// One statement; the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<u64>;
    /// One query's rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>>;
}

/// Where finished runs are recorded.
#[derive(Clone, Debug, PartialEq)]
pub enum Store {
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://user@host:port/db`, `postgresql:///db?host=/socket/dir`).
    Postgres(String),
    Off,
}

impl std::fmt::Display for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Store::Sqlite(path) => write!(f, "{}", path.display()),
            Store::Postgres(url) => write!(f, "{}", fathom_api::secret::redact(url)),
            Store::Off => write!(f, "off"),
        }
    }
}

impl Store {
    /// `--store`: `off`, a PostgreSQL URL, or a SQLite file's path; `None` takes the default,
    /// `ROOT/fathom.db` under the results root.
    pub fn parse(text: Option<&str>, root: &Path) -> Result<Store, String> {
        match text {
            None => Ok(Store::Sqlite(root.join("fathom.db"))),
            Some("off") => Ok(Store::Off),
            Some(t) if t.starts_with("postgres://") || t.starts_with("postgresql://") => {
                postgres::check_url(t)?;
                Ok(Store::Postgres(t.to_string()))
            }
            Some(t) => Ok(Store::Sqlite(PathBuf::from(t))),
        }
    }

    /// The database, its schema brought to the newest version; None when the store is off.
    /// `create` false: a SQLite file that does not exist is an error rather than made.
    pub(crate) fn connect(&self, create: bool) -> anyhow::Result<Option<Box<dyn Database>>> {
        let mut db: Box<dyn Database> = match self {
            Store::Off => return Ok(None),
            Store::Sqlite(path) => Box::new(sqlite::open(path, create)?),
            Store::Postgres(url) => Box::new(postgres::connect(url)?),
        };
        migrate(db.as_mut())
            .map_err(|e| e.context(format!("migrating the results database {self}")))?;
        Ok(Some(db))
    }

    /// Records a finished run; `Ok(false)` when it was recorded before (or the store is off,
    /// or the run did not finish).
    pub fn record(&self, run_dir: &Path) -> anyhow::Result<bool> {
        let run = LoadedRun::load(run_dir)?;
        if run.manifest.status != RunStatus::Finished {
            return Ok(false);
        }
        let Some(mut db) = self.connect(true)? else {
            return Ok(false);
        };
        insert(db.as_mut(), &run)
    }

    /// Records every finished run under `dir`: (recorded now, recorded before).
    pub fn import(&self, dir: &Path) -> anyhow::Result<(usize, usize)> {
        let Some(mut db) = self.connect(true)? else {
            anyhow::bail!("--store off: nothing to import into");
        };
        let (mut new, mut old) = (0, 0);
        for path in fathom_schema::store::find_runs(dir)? {
            let run = LoadedRun::load(&path)?;
            if run.manifest.status != RunStatus::Finished {
                continue;
            }
            if insert(db.as_mut(), &run)? {
                new += 1;
            } else {
                old += 1;
            }
        }
        Ok((new, old))
    }
}

/// Runs `body` in a write transaction: committed when it succeeds, rolled back when not.
fn in_transaction<T>(
    db: &mut dyn Database,
    body: impl FnOnce(&mut dyn Database) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    db.begin()?;
    match body(db) {
        Ok(v) => {
            db.batch("COMMIT")?;
            Ok(v)
        }
        Err(e) => {
            let _ = db.batch("ROLLBACK");
            Err(e)
        }
    }
}

/// The schema's version, by reading it.
fn version(db: &mut dyn Database) -> anyhow::Result<i64> {
    let rows = db.query("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_i64)
        .unwrap_or(0))
}

/// Brings the schema to the newest version, one migration at a time. A database already at it
/// is only read, so a role that may only read can still follow a history.
fn migrate(db: &mut dyn Database) -> anyhow::Result<()> {
    let current = version(db).is_ok_and(|v| v == MIGRATIONS.len() as i64);
    if current && missing_figures(db)?.is_empty() {
        return Ok(());
    }
    in_transaction(db, |db| {
        db.batch("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")?;
        let at = version(db)?;
        for (n, sql) in MIGRATIONS.iter().enumerate().skip(at.max(0) as usize) {
            db.batch(sql)?;
            db.execute(
                "INSERT INTO schema_version (version) VALUES (?)",
                &[Value::Int(Some(n as i64 + 1))],
            )?;
        }
        add_figures(db)
    })
}

/// The recorded step figures (`fathom_schema::figures`) that `steps` has no column for yet.
fn missing_figures(db: &mut dyn Database) -> anyhow::Result<Vec<&'static str>> {
    let rows = db.query("SELECT name FROM step_figures", &[])?;
    let have: Vec<&str> = rows
        .iter()
        .filter_map(|r| match r.first() {
            Some(Value::Text(Some(name))) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    Ok(fathom_schema::figures::recorded_figures()
        .map(|(_, r)| r.column)
        .filter(|c| !have.contains(c))
        .collect())
}

/// Adds a column to `steps` for each recorded figure it lacks (runs recorded before have it
/// NULL).
fn add_figures(db: &mut dyn Database) -> anyhow::Result<()> {
    for column in missing_figures(db)? {
        db.batch(&format!(
            "ALTER TABLE steps ADD COLUMN {column} DOUBLE PRECISION"
        ))?;
        db.execute(
            "INSERT INTO step_figures (name) VALUES (?)",
            &[Value::text(column)],
        )?;
    }
    Ok(())
}

/// Inserts a run and its steps; false when the run was there already.
fn insert(db: &mut dyn Database, run: &LoadedRun) -> anyhow::Result<bool> {
    let (id, run_row) = rows::run(run)?;
    let step_rows = rows::steps(run, &id)?;
    in_transaction(db, |db| {
        if db.execute(&rows::insert_sql("runs", rows::RUN_COLUMNS, "id"), &run_row)? == 0 {
            return Ok(false);
        }
        let sql = rows::insert_sql("steps", &rows::step_columns(), "run_id, idx");
        for row in &step_rows {
            db.execute(&sql, row)?;
        }
        Ok(true)
    })
}

/// `text` as one shell word: single-quoted when it holds anything but `[A-Za-z0-9/._:@-]`.
fn quoted(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._:@-".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Records a run that just finished, saying on stderr when it could not be: the run is on
/// disk all the same, and `fathom store import` records it later.
pub fn record_or_say(store: &Store, run_dir: &Path) {
    if let Err(e) = store.record(run_dir) {
        let dir = run_dir.parent().unwrap_or(run_dir).display();
        let store = quoted(&store.to_string());
        eprintln!(
            "fathom: {} finished but is not recorded in the results database ({e:#}); its files are complete, and `fathom store import {dir} --store {store}` records it later",
            run_dir.display(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns of `steps`, as SQLite lists them, sorted.
    fn step_columns(db: &mut dyn Database) -> Vec<String> {
        let mut names: Vec<String> = db
            .query("SELECT name FROM pragma_table_info('steps')", &[])
            .unwrap()
            .into_iter()
            .filter_map(|r| match r.into_iter().next() {
                Some(Value::Text(name)) => name,
                _ => None,
            })
            .collect();
        names.sort();
        names
    }

    /// A database made before a figure was recorded gains its column when next opened, and
    /// one at the newest schema with every figure is opened without a write.
    #[test]
    fn a_recorded_figure_the_database_lacks_becomes_a_column() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Sqlite(dir.path().join("fathom.db"));
        let mut db = store.connect(true).unwrap().unwrap();
        let mut all = rows::step_columns();
        all.sort();
        assert_eq!(step_columns(db.as_mut()), all);
        // As if rss_gb were a figure added since the database was made.
        db.batch(
            "ALTER TABLE steps DROP COLUMN rss_gb; DELETE FROM step_figures WHERE name = 'rss_gb'",
        )
        .unwrap();
        assert_eq!(missing_figures(db.as_mut()).unwrap(), ["rss_gb"]);
        drop(db);
        let mut db = store.connect(true).unwrap().unwrap();
        assert_eq!(step_columns(db.as_mut()), all);
        assert!(missing_figures(db.as_mut()).unwrap().is_empty());
    }
}
