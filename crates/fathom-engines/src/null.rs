//! The null engine stores nothing and answers every read with "not found": running a workload
//! on it measures what the harness itself costs per operation. With `latency=1ms` every
//! operation also waits its turn at one simulated server, a queue of known capacity for
//! testing rate schedules and `fathom findmax`. With `lock=50us` every operation holds one
//! engine-wide mutex while it spins on a CPU that long: clients that outnumber one contend on
//! it, a lock-bound engine for testing what bounded a step. With `order_effect=20%` and
//! `order_file=PATH` as well, every second run opened with that file is that much slower: an
//! order effect of known size, for testing how experiments are laid out and judged.

use crate::{EngineConfig, EngineEntry};
use fathom_api::doc::bson::Document;
use fathom_api::doc::{Count, DocVisit, Find, Modify, Update, Updated};
use fathom_api::family::{Db, Family};
use fathom_api::kv::{KvEngine, KvSession, KvTxn, Seek, SessionOptions, TxnBody, TxnEnd, Visit};
use fathom_api::target::{Identity, Target};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const ENTRY: EngineEntry = EngineEntry {
    name: "null",
    about: "stores nothing; measures the harness's own cost per operation",
    options_doc:
        "none, or latency=DURATION (e.g. latency=1ms): every operation is served in turn by \
                  one simulated server taking this long, so the engine serves at most 1/DURATION \
                  operations a second and a faster arrival rate queues; or lock=DURATION: every \
                  operation holds one engine-wide mutex while it spins on a CPU this long; with \
                  either, order_effect=PERCENT;order_file=PATH makes every second run opened \
                  with that file take that much longer per operation (a counter kept in it)",
    version,
    ..EngineEntry::embedded_kv(open)
};

fn version() -> anyhow::Result<String> {
    Ok(env!("CARGO_PKG_VERSION").to_string())
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let mut null = Null::new(config.data_dir.clone());
    let expected = "latency=DURATION or lock=DURATION, then optionally \
                    ;order_effect=PERCENT;order_file=PATH, or nothing";
    let mut server: Option<(Held, Duration)> = None;
    let (mut effect, mut file) = (None, None);
    for part in config
        .options
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        let duration = || {
            fathom_api::units::parse_duration(value)
                .map_err(|e| anyhow::anyhow!("engine `null` option {key}: {e}"))
        };
        match key {
            "latency" => server = Some((Held::Queued, duration()?)),
            "lock" => server = Some((Held::Spinning, duration()?)),
            "order_effect" => {
                effect = Some(
                    fathom_api::units::parse_threshold(value)
                        .map_err(|e| anyhow::anyhow!("engine `null` option order_effect: {e}"))?,
                )
            }
            "order_file" => file = Some(PathBuf::from(value)),
            _ => anyhow::bail!(
                "engine `null` options: {expected} (got `{}`)",
                config.options
            ),
        }
    }
    if let Some((held, mut service)) = server {
        match (effect, file) {
            (Some(e), Some(f)) => {
                if second_run(&f, &config.data_dir)? {
                    service = service.mul_f64(1.0 + e);
                }
            }
            (None, None) => {}
            _ => anyhow::bail!("engine `null`: order_effect and order_file go together"),
        }
        null.server = Some(Server {
            service,
            held,
            free_at: Mutex::new(Instant::now()),
        });
    } else if effect.is_some() || file.is_some() {
        anyhow::bail!("engine `null`: order_effect slows latency= or lock=; give one of them");
    }
    Ok(Box::new(null))
}

/// Whether this run is an odd one of those opened with `file`: the file holds how many runs
/// opened it and the last one's data directory (the same run opening again counts once).
fn second_run(file: &std::path::Path, data_dir: &std::path::Path) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut lines = text.lines();
    let count: u64 = lines.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    let last = lines.next().unwrap_or("");
    let dir = data_dir.display().to_string();
    if count > 0 && last == dir {
        return Ok((count - 1) % 2 == 1);
    }
    std::fs::write(file, format!("{}\n{dir}\n", count + 1))
        .map_err(|e| anyhow::anyhow!("engine `null` order_file {}: {e}", file.display()))?;
    Ok(count % 2 == 1)
}

pub struct Null {
    id: Identity,
    server: Option<Server>,
}

impl Null {
    /// A null engine for calibration, outside the registry's validation.
    pub fn new(dir: PathBuf) -> Null {
        Null {
            id: Identity::new(ENTRY.name, version().unwrap_or_default(), vec![dir]),
            server: None,
        }
    }

    /// The null engine as an engine of `family`: every step's first client runs on it to
    /// measure the harness's cost in that family (the calibration contract). A family without
    /// its arm here cannot be calibrated.
    pub fn db(&self, family: Family) -> anyhow::Result<Db<'_>> {
        Ok(match family {
            Family::Kv => Db::Kv(self),
            Family::Sql => Db::Sql(self),
            Family::Doc => Db::Doc(self),
            other => anyhow::bail!("the null engine has no {other} family to calibrate on"),
        })
    }
}

/// One simulated server: operations are served one after another in the order they come,
/// each taking `service`, so at most 1/`service` a second finish however many clients ask.
/// The time is kept as the server's own clock (when it is next free), so a client's late
/// wake-up does not lower the capacity.
struct Server {
    service: Duration,
    held: Held,
    free_at: Mutex<Instant>,
}

/// How an operation takes its turn.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    /// Queued at the simulated server, asleep until its service ends (`latency=`).
    Queued,
    /// Holding the server's mutex, spinning on a CPU for the service (`lock=`).
    Spinning,
}

/// A session's way to the server, if the engine has one.
#[derive(Clone, Copy)]
struct Served<'a>(Option<&'a Server>);

impl Served<'_> {
    /// Waits for this operation's turn and its service.
    fn serve(self) {
        let Some(server) = self.0 else { return };
        if server.held == Held::Spinning {
            let _turn = server.free_at.lock().unwrap_or_else(|p| p.into_inner());
            let start = Instant::now();
            while start.elapsed() < server.service {
                std::hint::spin_loop();
            }
            return;
        }
        let done = {
            let mut free = server.free_at.lock().unwrap_or_else(|p| p.into_inner());
            *free = (*free).max(Instant::now()) + server.service;
            *free
        };
        let now = Instant::now();
        if done > now {
            std::thread::sleep(done - now);
        }
    }
}

impl Target for Null {
    fn identity(&self) -> &Identity {
        &self.id
    }
}

struct NullSession<'a>(Served<'a>);

impl KvTxn for NullSession<'_> {
    fn read(&mut self, key: &[u8], _out: &mut Vec<u8>) -> anyhow::Result<bool> {
        std::hint::black_box(key);
        self.0.serve();
        Ok(false)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        std::hint::black_box((key, value));
        self.0.serve();
        Ok(())
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        std::hint::black_box(key);
        self.0.serve();
        self.0.serve();
        Ok(())
    }
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        KvSession::get(self, key)
    }
    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        KvSession::scan(self, seek, visit)
    }
}

impl KvSession for NullSession<'_> {
    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        body(&mut NullSession(self.0))
    }
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        std::hint::black_box(key);
        self.0.serve();
        Ok(None)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        KvTxn::put(self, key, value)
    }
    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        KvTxn::delete(self, key)
    }
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        KvTxn::read(self, key, out)
    }
    fn scan(&mut self, seek: Seek, _visit: &mut Visit) -> anyhow::Result<usize> {
        std::hint::black_box(seek);
        self.0.serve();
        Ok(0)
    }
}

impl KvEngine for Null {
    fn session(&self, _options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        Ok(Box::new(NullSession(Served(self.server.as_ref()))))
    }
}

/// The null engine as a SQL database: statements prepare and run, return no rows and change
/// none, so a sql workload's own cost can be calibrated on it.
impl fathom_api::sql::SqlEngine for Null {
    fn dialect(&self) -> fathom_api::sql::Dialect {
        fathom_api::sql::Dialect::MariaDb
    }
    fn connect(&self) -> anyhow::Result<Box<dyn fathom_api::sql::SqlConn + '_>> {
        Ok(Box::new(NullConn(0, Served(self.server.as_ref()))))
    }
}

struct NullConn<'a>(usize, Served<'a>);

impl fathom_api::sql::SqlConn for NullConn<'_> {
    fn exec(&mut self, _sql: &str) -> anyhow::Result<()> {
        Ok(())
    }
    fn prepare(&mut self, _sql: &str) -> anyhow::Result<fathom_api::sql::Stmt> {
        self.0 += 1;
        Ok(fathom_api::sql::Stmt(self.0 - 1))
    }
    /// Text statements cost the harness nothing more here: the writing-in of values is the
    /// server client's (measured on the real engine).
    fn prepare_text(&mut self, sql: &str) -> anyhow::Result<fathom_api::sql::Stmt> {
        self.prepare(sql)
    }
    fn run_with(
        &mut self,
        _stmt: fathom_api::sql::Stmt,
        params: &[fathom_api::sql::Value<'_>],
        _keep: fathom_api::sql::Keep,
    ) -> fathom_api::sql::Ran {
        std::hint::black_box(params);
        self.1.serve();
        Ok(fathom_api::sql::Outcome::default())
    }
    /// No rows: the row stays empty, as a statement that matched nothing leaves it.
    fn run_row(
        &mut self,
        stmt: fathom_api::sql::Stmt,
        params: &[fathom_api::sql::Value<'_>],
        _n: u64,
        row: &mut fathom_api::sql::Row,
    ) -> fathom_api::sql::Ran {
        row.0.clear();
        self.run_with(stmt, params, fathom_api::sql::Keep::NOTHING)
    }
}

/// The null engine as a document server: every statement is taken and does nothing, reads
/// return no documents, so a doc workload's own cost (building its BSON) can be calibrated.
impl fathom_api::doc::DocEngine for Null {
    fn session(&self) -> anyhow::Result<Box<dyn fathom_api::doc::DocSession + '_>> {
        Ok(Box::new(NullDocs(Served(self.server.as_ref()))))
    }
    fn transactions(&self) -> bool {
        true
    }
    fn drop_collections(&self, _colls: &[&str]) -> anyhow::Result<()> {
        Ok(())
    }
    fn create_indexes(
        &self,
        _coll: &str,
        _indexes: &[fathom_api::doc::Index],
    ) -> anyhow::Result<()> {
        Ok(())
    }
}

struct NullDocs<'a>(Served<'a>);

impl fathom_api::doc::DocSession for NullDocs<'_> {
    fn insert(&mut self, _coll: &str, docs: &[Document], _ordered: bool) -> Count {
        std::hint::black_box(docs);
        self.0.serve();
        Ok(docs.len() as u64)
    }
    fn find(&mut self, _coll: &str, find: Find<'_>, _visit: &mut DocVisit) -> Count {
        std::hint::black_box(find);
        self.0.serve();
        Ok(0)
    }
    fn aggregate(&mut self, _coll: &str, pipeline: &[Document], _visit: &mut DocVisit) -> Count {
        std::hint::black_box(pipeline);
        self.0.serve();
        Ok(0)
    }
    fn distinct(&mut self, _coll: &str, _field: &str, filter: &Document) -> Count {
        std::hint::black_box(filter);
        self.0.serve();
        Ok(0)
    }
    fn update(&mut self, _coll: &str, update: Update<'_>) -> anyhow::Result<Updated> {
        std::hint::black_box(update);
        self.0.serve();
        Ok(Updated::default())
    }
    fn update_each(&mut self, _coll: &str, updates: &[Update<'_>]) -> anyhow::Result<Updated> {
        std::hint::black_box(updates);
        self.0.serve();
        Ok(Updated::default())
    }
    fn find_and_modify(&mut self, _coll: &str, modify: Modify<'_>, _visit: &mut DocVisit) -> Count {
        std::hint::black_box(modify);
        self.0.serve();
        Ok(0)
    }
    fn delete(&mut self, _coll: &str, filter: &Document, _many: bool) -> Count {
        std::hint::black_box(filter);
        self.0.serve();
        Ok(0)
    }
    fn count(&mut self, _coll: &str, filter: &Document) -> Count {
        std::hint::black_box(filter);
        self.0.serve();
        Ok(0)
    }
    fn begin(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn commit(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn abort(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}
