//! MongoDB's wire protocol as the document family, through fathom's own client (`lean.rs`) or,
//! in a build with the `mongodb-driver` feature, the official `mongodb` crate's sync API:
//! `--set url=mongodb://…` for any server (mongod, a replica set, FerretDB), `--set pid=` so its
//! CPU and memory are measured. Without a URL fathom starts FerretDB over a PostgreSQL
//! of its own (`ferretdb.rs`): figures measured so are FerretDB's and PostgreSQL's, not
//! mongod's.

use crate::settings::{self, Size, Switch};
use crate::{EngineConfig, EngineEntry};
use anyhow::Context;
use fathom_api::doc::bson::{doc, Bson, Document};
use fathom_api::doc::{DocEngine, DocSession, Index};
use fathom_api::knobs;
use fathom_api::target::{Counters, Identity, Maintenance, Target};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

mod admin;
#[cfg(feature = "mongodb-driver")]
mod driver;
#[cfg(not(feature = "mongodb-driver"))]
#[path = "no_driver.rs"]
mod driver;
mod failed;
mod ferretdb;
mod lean;
mod pushdown;
mod url;
mod wire;

use admin::Admin;
use driver::Driver;
use failed::Failed;

/// fathom's settings for a MongoDB-protocol server (`--set`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MongoSettings {
    /// use this running server (mongod, mongos, FerretDB) instead of starting FerretDB
    #[schemars(title = "mongodb://HOST:PORT/?OPTIONS (a unix socket as %2Fpath%2Fto.sock)")]
    url: String,
    /// with `url`: the server's pids, comma-separated (FerretDB's and its PostgreSQL's, as
    /// `fathom serve` prints them), so their CPU and memory are measured
    #[schemars(title = "PID[,PID...]")]
    pid: String,
    /// with `url`: the server's data directory, for its size and device (a mongod's --dbpath);
    /// empty: asked of the server (getCmdLineOpts), when it says
    #[schemars(title = "DIR")]
    data_dir: String,
    /// the database the workloads' collections live in
    database: String,
    /// write concern of every write: w (a number or majority); empty: the server's default
    #[schemars(title = "0|1|N|majority")]
    write_concern: String,
    /// journal acknowledgment of writes (the write concern's j); empty: the server's default
    journal: Option<Switch>,
    /// read concern of every read; empty: the server's default
    read_concern: Option<ReadLevel>,
    /// multi-document transactions: auto (when the server is a replica set or mongos), on or
    /// off; workloads that wrap writes in a transaction send them alone without
    transactions: Transactions,
    /// without `url`: the FerretDB release fathom starts, built by
    /// `scripts/fetch-engine.sh ferretdb VERSION`
    #[schemars(title = "VERSION")]
    version: String,
    /// without `url`: the PostgreSQL under FerretDB's shared_buffers
    cache_size: Size,
    /// without `url`: beside each index FerretDB makes, a GIN index on the same fields and
    /// custom plans, so the filters it sends PostgreSQL (`_jsonb->'f' @> value`, which its
    /// btree indexes cannot serve) read by index; off: FerretDB as released, whose point
    /// operations scan the collection
    pushdown_indexes: Switch,
    /// the sessions' client: fathom (its own: one write and one read per command), driver
    /// (the official mongodb crate), or auto: fathom's unless the server needs what only the
    /// driver does (a login, TLS, several hosts, transactions)
    client: ClientChoice,
}

/// Whether writes a workload wraps in a transaction run in one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Transactions {
    /// When the server is a replica set or mongos.
    Auto,
    On,
    Off,
}

/// The read concern of every read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ReadLevel {
    Local,
    Majority,
    Available,
    Linearizable,
    Snapshot,
}

/// The sessions' client library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ClientChoice {
    /// fathom's unless the server needs what only the driver does.
    Auto,
    /// fathom's own.
    Fathom,
    /// The official mongodb crate.
    Driver,
}

impl Default for MongoSettings {
    fn default() -> Self {
        MongoSettings {
            url: String::new(),
            pid: String::new(),
            data_dir: String::new(),
            database: "fathom".into(),
            write_concern: String::new(),
            journal: None,
            read_concern: None,
            transactions: Transactions::Auto,
            version: ferretdb::VERSION.into(),
            cache_size: Size::new("256m"),
            pushdown_indexes: Switch::new("on"),
            client: ClientChoice::Auto,
        }
    }
}

pub const ENTRY: EngineEntry = EngineEntry {
    name: "mongodb",
    about: "a MongoDB-protocol server given by --set url=, or FerretDB over PostgreSQL started by fathom",
    options_doc: "without `url`: postgresql.conf lines for the PostgreSQL under FerretDB, one per line \
                  (https://www.postgresql.org/docs/current/runtime-config.html); with `url`: none \
                  (the server's options are its own)",
    settings: settings::of::<MongoSettings>(),
    version: ferretdb::packaged_version,
    ..EngineEntry::doc_server(open)
};

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn DocEngine>> {
    let s: MongoSettings = settings::read(&config.settings)?;
    let transactions = match s.transactions {
        Transactions::Auto => None,
        Transactions::On => Some(true),
        Transactions::Off => Some(false),
    };
    // The user's input is checked before any server starts.
    let (write, read) = (write_concern(&s)?, read_concern(s.read_concern));
    refuse_before_start(&s)?;
    let (url, pids, backend) = server(config, &s)?;
    let parsed = url::MongoUrl::parse(&url)?;
    let write = write.or(parsed.write_concern()?);
    let read = read.or(parsed.read_concern());
    let lean = parsed.needs_driver().map_or_else(
        || {
            Ok(lean::LeanConfig {
                endpoint: parsed.endpoint(),
                db: s.database.clone(),
                write_concern: write.clone(),
                read_concern: read.clone(),
            })
        },
        Err,
    );
    // The engine's own commands go on a connection of fathom's client where it can reach the
    // server; the driver is made only where that or the sessions need it.
    // A server fathom started on TCP (`--network`) takes fathom's commands on its socket.
    let admin_url = backend
        .as_ref()
        .map_or_else(|| url.clone(), |f| f.admin_url());
    let mut driver = None;
    let admin = match &lean {
        Ok(_) => Admin::Lean(std::sync::Mutex::new(
            wire::MsgConn::connect(&url::MongoUrl::parse(&admin_url)?.endpoint())
                .map_err(|e| anyhow::anyhow!("cannot reach the server at {admin_url}: {e}"))?,
        )),
        Err(why) => {
            let d = Driver::connect(&url, &s.database, write.as_ref(), read.as_ref())
                .with_context(|| format!("the server at {url} needs the driver ({why})"))?;
            driver = Some(d);
            Admin::Driver
        }
    };
    let command = |db: &str, cmd: Document| admin.command(driver.as_ref(), db, &cmd);
    let hello = command(&s.database, doc! {"hello": 1})
        .map_err(|e| anyhow::anyhow!("cannot reach the server at {url}: {e}"))?;
    let build = command(&s.database, doc! {"buildInfo": 1})?;
    let replicated = hello.get_str("setName").is_ok() || hello.get_str("msg") == Ok("isdbgrid");
    let transactions = transactions.unwrap_or(replicated);
    let writable = hello
        .get_bool("isWritablePrimary")
        .or(hello.get_bool("ismaster"))
        == Ok(true);
    let client_used = choose(lean, s.client, transactions, writable)?;
    let data_dirs = match &backend {
        Some(_) => vec![config.data_dir.clone()],
        None if !s.data_dir.is_empty() => vec![PathBuf::from(&s.data_dir)],
        None => db_path(&command).into_iter().collect(),
    };
    if let (Err(why), None) = (&client_used, &driver) {
        let d = Driver::connect(&url, &s.database, write.as_ref(), read.as_ref())
            .with_context(|| format!("the sessions need the driver ({why})"))?;
        driver = Some(d);
    }
    let version = server_version(&build, backend.as_ref());
    Ok(Box::new(MongoDb {
        id: Identity::new(ENTRY.name, version, data_dirs).running_as(pids),
        effective: effective(&s, transactions, &client_used, backend.as_ref()),
        transactions,
        lean: client_used.ok(),
        database: s.database,
        url,
        admin,
        driver,
        backend,
    }))
}

/// A bad `url`, or what this build cannot serve (without the driver: `client=driver`,
/// `transactions=on`), refused before any server starts.
fn refuse_before_start(s: &MongoSettings) -> anyhow::Result<()> {
    if !s.url.is_empty() {
        url::MongoUrl::parse(&s.url)?;
    }
    let needs = match (s.client, s.transactions) {
        _ if driver::IN_BUILD => None,
        (ClientChoice::Driver, _) => Some("setting `client=driver`"),
        (_, Transactions::On) => Some("setting `transactions=on`"),
        _ => None,
    };
    if let Some(needs) = needs {
        Driver::connect(&s.url, &s.database, None, None).context(needs)?;
    }
    Ok(())
}

/// The server's URL and pids: FerretDB started here when no `url` is given, else the one named.
fn server(
    config: &EngineConfig,
    s: &MongoSettings,
) -> anyhow::Result<(String, Vec<u32>, Option<ferretdb::Ferret>)> {
    if s.url.is_empty() {
        let f = ferretdb::Ferret::start(
            config,
            &s.version,
            s.cache_size.value,
            s.pushdown_indexes.value,
        )?;
        return Ok((f.url(), f.pids(), Some(f)));
    }
    if !config.options.trim().is_empty() {
        anyhow::bail!("engine `mongodb` with `url`: the setup's lines are for the PostgreSQL fathom starts under FerretDB; a running server's options are its own");
    }
    if !s.data_dir.is_empty() && !std::path::Path::new(&s.data_dir).is_dir() {
        anyhow::bail!("setting `data_dir`: {} is not a directory", s.data_dir);
    }
    Ok((s.url.clone(), crate::server::parse_pid(&s.pid)?, None))
}

/// The run's record of the options in force: fathom's choices, and FerretDB's PostgreSQL's.
fn effective(
    s: &MongoSettings,
    transactions: bool,
    client: &Result<lean::LeanConfig, String>,
    backend: Option<&ferretdb::Ferret>,
) -> BTreeMap<String, String> {
    let mut e = BTreeMap::new();
    e.insert("fathom.database".into(), s.database.clone());
    let client = match client {
        Ok(_) => "fathom".to_string(),
        Err(why) if s.client == ClientChoice::Auto => format!("driver ({why})"),
        Err(_) => "driver".to_string(),
    };
    e.insert("fathom.client".into(), client);
    let used = if transactions { "used" } else { "not used" };
    e.insert(
        "fathom.transactions".into(),
        format!("{} ({used})", knobs::text(&s.transactions)),
    );
    for (k, v) in [
        ("write_concern", knobs::text(&s.write_concern)),
        ("journal", knobs::text(&s.journal)),
        ("read_concern", knobs::text(&s.read_concern)),
    ] {
        let v = if v.is_empty() {
            "server default".into()
        } else {
            v
        };
        e.insert(k.into(), v);
    }
    if let Some(f) = backend {
        e.extend(f.effective());
    }
    e
}

/// The write concern the settings give, as a command sends it; `None`: the URL's.
fn write_concern(s: &MongoSettings) -> anyhow::Result<Option<Document>> {
    if s.write_concern.is_empty() && s.journal.is_none() {
        return Ok(None);
    }
    let mut d = Document::new();
    match s.write_concern.as_str() {
        "" => {}
        "majority" => {
            d.insert("w", "majority");
        }
        n => {
            let n: u32 = n.parse().map_err(|_| {
                anyhow::anyhow!(
                    "setting `write_concern`: `{n}` is not a number of nodes or majority"
                )
            })?;
            d.insert("w", url::acknowledgment(&n.to_string()));
        }
    }
    if let Some(j) = &s.journal {
        d.insert("j", j.value);
    }
    Ok(Some(d))
}

/// The read concern the settings give; `None`: the URL's.
fn read_concern(level: Option<ReadLevel>) -> Option<Document> {
    let level = match level? {
        ReadLevel::Local => "local",
        ReadLevel::Majority => "majority",
        ReadLevel::Available => "available",
        ReadLevel::Linearizable => "linearizable",
        ReadLevel::Snapshot => "snapshot",
    };
    Some(doc! {"level": level})
}

/// The server's version as reports show it: mongod's own, or FerretDB's with the MongoDB
/// version it answers as and the PostgreSQL under it.
fn server_version(build: &Document, backend: Option<&ferretdb::Ferret>) -> String {
    let version = build.get_str("version").unwrap_or("unknown");
    match build.get_str("ferretdbVersion") {
        Ok(f) => {
            let pg = backend.map(|b| {
                let v = b.postgres_version();
                format!(", PostgreSQL {}", v.split_whitespace().next().unwrap_or(""))
            });
            let f = f.trim_start_matches('v');
            format!(
                "FerretDB {f} (as MongoDB {version}{})",
                pg.unwrap_or_default()
            )
        }
        Err(_) => version.to_string(),
    }
}

/// A local mongod's data directory (its `storage.dbPath`), for size sampling.
fn db_path(command: &dyn Fn(&str, Document) -> Result<Document, Failed>) -> Option<PathBuf> {
    let opts = command("admin", doc! {"getCmdLineOpts": 1}).ok()?;
    let path = opts
        .get_document("parsed")
        .ok()?
        .get_document("storage")
        .ok()?
        .get_str("dbPath")
        .ok()?;
    Some(PathBuf::from(path)).filter(|p| p.is_dir())
}

pub struct MongoDb {
    id: Identity,
    transactions: bool,
    /// How fathom's own client reaches the server, when the sessions use it.
    lean: Option<lean::LeanConfig>,
    database: String,
    url: String,
    /// Where the engine's own commands go.
    admin: Admin,
    /// The driver, where the URL or the sessions need it.
    driver: Option<Driver>,
    /// FerretDB and its PostgreSQL, when fathom started them (stopped when dropped).
    backend: Option<ferretdb::Ferret>,
    effective: BTreeMap<String, String>,
}

impl Target for MongoDb {
    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }
    fn identity(&self) -> &Identity {
        &self.id
    }
    /// The server's operation counters (`serverStatus.opcounters`) and, under FerretDB, the
    /// PostgreSQL's.
    fn settle(&self) {
        if let Some(b) = &self.backend {
            b.settle();
        }
    }
    fn counters(&self) -> Counters {
        let mut c = Counters::new();
        if let Ok(status) = self.command(&self.database, doc! {"serverStatus": 1}) {
            if let Ok(ops) = status.get_document("opcounters") {
                for (k, v) in ops {
                    if let Some(n) = number(v) {
                        c.insert(format!("opcounters.{k}"), n);
                    }
                }
            }
        }
        if let Some(b) = &self.backend {
            c.extend(b.counters());
        }
        c
    }
    fn notes(&self) -> Vec<String> {
        // FerretDB answers as a MongoDB server; what it costs is its own and its PostgreSQL's.
        if self.version().starts_with("FerretDB") {
            vec!["figures measured through FerretDB are FerretDB's and its PostgreSQL's, not mongod's".into()]
        } else {
            Vec::new()
        }
    }

    fn check(&self) -> anyhow::Result<()> {
        self.backend.as_ref().map_or(Ok(()), |b| b.check())
    }
    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        match (&self.backend, action) {
            (Some(b), _) => b.maintain(action),
            (None, Maintenance::Flush) => match self.command("admin", doc! {"fsync": 1}) {
                // A server without the command (FerretDB) has nothing to flush on demand.
                Err(e) if e.is(failed::COMMAND_NOT_FOUND) => Ok(()),
                done => done
                    .map(|_| ())
                    .map_err(|e| anyhow::anyhow!("mongodb: fsync: {e}")),
            },
            _ => Ok(()),
        }
    }
    fn effective_options(&self) -> BTreeMap<String, String> {
        self.effective.clone()
    }
}

impl MongoDb {
    fn command(&self, db: &str, cmd: Document) -> Result<Document, Failed> {
        self.admin.command(self.driver.as_ref(), db, &cmd)
    }
}

fn number(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(n) => Some(*n as f64),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(n) => Some(*n),
        _ => None,
    }
}

impl DocEngine for MongoDb {
    fn session(&self) -> anyhow::Result<Box<dyn DocSession + '_>> {
        self.check()?;
        if let Some(lean) = &self.lean {
            return Ok(Box::new(lean::LeanSession::connect(lean)?));
        }
        match &self.driver {
            Some(d) => Ok(d.session()),
            None => anyhow::bail!("mongodb: no client for the sessions"),
        }
    }
    fn transactions(&self) -> bool {
        self.transactions
    }
    fn drop_collections(&self, colls: &[&str]) -> anyhow::Result<()> {
        for c in colls {
            match self.command(&self.database, doc! {"drop": *c}) {
                Err(e) if !e.is(failed::NAMESPACE_NOT_FOUND) => {
                    return Err(anyhow::anyhow!("mongodb: dropping collection {c}: {e}"));
                }
                _ => {}
            }
        }
        Ok(())
    }
    fn create_indexes(&self, coll: &str, indexes: &[Index]) -> anyhow::Result<()> {
        let indexes: Vec<Document> = (indexes.iter())
            .map(|i| doc! {"key": i.keys.clone(), "name": i.name.clone(), "unique": i.unique})
            .collect();
        self.command(
            &self.database,
            doc! {"createIndexes": coll, "indexes": indexes},
        )
        .map_err(|e| anyhow::anyhow!("mongodb: creating indexes on {coll}: {e}"))?;
        Ok(())
    }
}

/// The client the sessions use (`Ok`: fathom's own; `Err`: the driver, and why), from what
/// fathom's own client could serve (`lean`), or an error when `client=fathom` cannot serve
/// this server.
fn choose(
    lean: Result<lean::LeanConfig, String>,
    setting: ClientChoice,
    transactions: bool,
    writable: bool,
) -> anyhow::Result<Result<lean::LeanConfig, String>> {
    let config = lean.and_then(|c| match (transactions, writable) {
        (true, _) => Err("transactions".to_string()),
        (_, false) => Err("the host is not a writable primary".to_string()),
        _ => Ok(c),
    });
    match (setting, config) {
        (ClientChoice::Driver, _) => Ok(Err("client=driver".into())),
        (ClientChoice::Fathom, Err(why)) => anyhow::bail!(
            "setting `client`: fathom's own client cannot serve this server ({why}); use client=driver or auto"
        ),
        (_, chosen) => Ok(chosen),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netbuf::Endpoint;

    /// What fathom's own client could serve at `url`, as `open` finds it.
    struct Candidate(Result<lean::LeanConfig, String>);

    impl Candidate {
        fn choose(
            self,
            setting: ClientChoice,
            transactions: bool,
            writable: bool,
        ) -> anyhow::Result<Result<lean::LeanConfig, String>> {
            choose(self.0, setting, transactions, writable)
        }
    }

    fn candidate(url: &str) -> Candidate {
        let u = url::MongoUrl::parse(url).unwrap();
        Candidate(match u.needs_driver() {
            Some(why) => Err(why),
            None => Ok(lean::LeanConfig {
                endpoint: u.endpoint(),
                db: "fathom".into(),
                write_concern: u.write_concern().unwrap(),
                read_concern: u.read_concern(),
            }),
        })
    }

    /// fathom's own client where it can serve; the driver, saying why, where it cannot.
    #[test]
    fn the_client_is_chosen_by_what_the_server_needs() {
        let lean = candidate("mongodb://%2Ftmp%2Fm.sock/?w=majority")
            .choose(ClientChoice::Auto, false, true)
            .unwrap()
            .unwrap();
        assert_eq!(lean.endpoint, Endpoint::Socket("/tmp/m.sock".into()));
        assert_eq!(lean.write_concern, Some(doc! {"w": "majority"}));
        let by_tcp = candidate("mongodb://127.0.0.1").choose(ClientChoice::Auto, false, true);
        assert_eq!(
            by_tcp.unwrap().unwrap().endpoint,
            Endpoint::Tcp("127.0.0.1".into(), 27017)
        );
        let why = |url: &str, transactions: bool, writable: bool| {
            candidate(url)
                .choose(ClientChoice::Auto, transactions, writable)
                .unwrap()
                .unwrap_err()
        };
        assert_eq!(why("mongodb://u:p@h:1", false, true), "the URL logs in");
        assert_eq!(why("mongodb://h:1,h:2", false, true), "several hosts");
        assert_eq!(why("mongodb://h:1", true, true), "transactions");
        assert_eq!(
            why("mongodb://h:1", false, false),
            "the host is not a writable primary"
        );
        let e = candidate("mongodb://h:1")
            .choose(ClientChoice::Fathom, true, true)
            .unwrap_err();
        assert!(e.to_string().contains("client=driver"), "{e}");
        let driver = candidate("mongodb://h:1").choose(ClientChoice::Driver, false, true);
        assert!(driver.unwrap().is_err());
    }
}
