//! Embedded WiredTiger: Debian's libwiredtiger (3.2.1) linked in, or a release fetched with
//! `scripts/fetch-engine.sh wiredtiger VERSION` (`--set version=X`), both through fathom's flat
//! interface (`shim.c`, `api.rs`). A setup is WiredTiger's own connection configuration
//! string; the table's configuration is the `table` setting. Sessions and cursors are per
//! client thread (`session.rs`); batches are transactions; statistics come from WiredTiger's
//! statistics cursor.

use crate::settings::{self, Size, Switch};
use crate::{EngineConfig, EngineEntry};
use api::{Api, Codes, Conn, Sess};
use fathom_api::kv::{KvEngine, KvSession, SessionOptions};
use fathom_api::options::Syntax;
use fathom_api::retry::EngineError;
use fathom_api::stats::EngineStats;
use fathom_api::target::{Counters, Identity, Maintenance, Target};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use session::Session;
use std::collections::BTreeMap;
use std::ffi::{c_int, CString};
use std::ptr;

mod api;
mod events;
mod session;
mod stats;
mod work;

const SNAPPY: &str = "/usr/lib/x86_64-linux-gnu/libwiredtiger_snappy.so";

/// fathom's WiredTiger settings (`--set`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WiredTigerSettings {
    /// WiredTiger cache size
    cache_size: Size,
    /// configuration of the table the workload uses (leaf_page_max, block_compressor, ...)
    #[schemars(title = "WiredTiger table config")]
    table: String,
    /// the log (journal): log=(enabled=...)
    wal: Switch,
    /// fsync the log at every commit
    sync: Switch,
    /// direct_io=[data,log,checkpoint]
    o_direct: Direct,
    /// run this release, fetched by `scripts/fetch-engine.sh wiredtiger VERSION` (PyPI's
    /// source, built with snappy: 2.9.2 to 11.3.1, e.g. 3.0.0, 11.3.1); empty: Debian's 3.2.1
    #[schemars(title = "VERSION")]
    version: String,
    /// read each client session's own statistics after every operation (bytes read into the
    /// cache and the time reading them, time waiting for cache room, bytes written, lock
    /// waits), for the slowest operations' explanation; about 1.4 µs of CPU per operation:
    /// small beside a read from storage, two thirds of a cached read's 2 µs
    session_stats: Switch,
}

impl Default for WiredTigerSettings {
    fn default() -> Self {
        WiredTigerSettings {
            cache_size: Size::new("256m"),
            table: "block_compressor=snappy".into(),
            wal: Switch::new("true"),
            sync: Switch::new("false"),
            o_direct: Direct::None,
            version: String::new(),
            session_stats: Switch::new("false"),
        }
    }
}

/// Whether WiredTiger uses O_DIRECT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Direct {
    None,
    All,
}

pub const ENTRY: EngineEntry = EngineEntry {
    name: "wiredtiger",
    about: "embedded WiredTiger: Debian's libwiredtiger 3.2.1 (snappy extension loaded), or a fetched release",
    options_doc: "WiredTiger's connection configuration string, e.g. `cache_size=1G,checkpoint=(wait=60),eviction_target=80` \
                  (WiredTiger docs: wiredtiger_open); applied after fathom's settings, so it wins",
    syntax: Syntax::WiredTiger,
    settings: settings::of::<WiredTigerSettings>(),
    version,
    code: &[
        "__wt_", "wiredtiger_", "fwt_", "__session_", "__curfile_", "__cursor_", "__conn_",
        "__evict", "__rec_", "__txn_", "__btcur_", "__log_", "__checkpoint", "snappy",
    ],
    memory,
    ..EngineEntry::embedded_kv(open)
};

/// The cache (the options string's cache_size wins, as it does when the engine opens).
fn memory(given: &crate::Settings, options: &str) -> anyhow::Result<crate::MemoryParts> {
    let s: WiredTigerSettings = settings::read(given)?;
    let from_options = crate::option_size(options, &[','], "cache_size");
    Ok(vec![(
        "cache_size".into(),
        from_options.unwrap_or(s.cache_size.value),
    )])
}

fn version() -> anyhow::Result<String> {
    Ok(api::linked().version())
}

/// A release's interface and the return codes fathom acts on.
#[derive(Clone, Copy)]
struct Lib {
    api: &'static Api,
    codes: Codes,
}

impl Lib {
    fn new(api: &'static Api) -> Lib {
        Lib {
            api,
            codes: api.codes(),
        }
    }

    /// Ok for 0; WT_ROLLBACK (a write conflict, or cache pressure) and WT_PREPARE_CONFLICT
    /// are errors that ask the caller to run the transaction again.
    fn check(self, code: c_int, what: &str) -> anyhow::Result<()> {
        if code == 0 {
            return Ok(());
        }
        let retryable = code == self.codes.rollback || code == self.codes.prepare_conflict;
        Err(EngineError::classified(
            retryable,
            format!("WiredTiger {what}: {} ({code})", self.api.message(code)),
        ))
    }

    /// Ok(false) for WT_NOTFOUND, else as `check`.
    fn found(self, code: c_int, what: &str) -> anyhow::Result<bool> {
        if code == self.codes.notfound {
            return Ok(false);
        }
        self.check(code, what).map(|_| true)
    }
}

/// The release a setup names: Debian's linked one, or a fetched one's interface (its path in
/// `api.path`) and where it came from.
fn chosen(version: &str) -> anyhow::Result<(Lib, Option<Option<String>>)> {
    if version.trim().is_empty() {
        return Ok((Lib::new(api::linked()), None));
    }
    let release = crate::fetched::release("wiredtiger", version.trim(), "lib/libfathom_wt.so")?;
    let lib = Lib::new(api::load(&release.join("lib/libfathom_wt.so"))?);
    Ok((lib, Some(crate::fetched::source(&release))))
}

pub struct WiredTiger {
    lib: Lib,
    conn: Conn,
    id: Identity,
    uri: CString,
    effective: BTreeMap<String, String>,
    /// A session of the engine's own, for checkpoints and statistics.
    admin: std::sync::Mutex<SessionHandle>,
    /// Whether it writes the statistics log its events are read from.
    stats_log: bool,
    /// Each client session's statistics, read after every operation (`session_stats`).
    work: Option<work::SessionWork>,
}

/// Whether a release writes its statistics log as JSON (`statistics_log=(json)`, 3.x on; the
/// 2.x releases of 2015 are left without events).
fn keeps_stats_log(version: &str) -> bool {
    version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok())
        .is_some_and(|major| major >= 3)
}

// SAFETY: a WT_CONNECTION is thread-safe; the admin session is behind a mutex.
unsafe impl Send for WiredTiger {}
unsafe impl Sync for WiredTiger {}

struct SessionHandle(Sess);
// SAFETY: a WT_SESSION may move between threads as long as one thread uses it at a time.
unsafe impl Send for SessionHandle {}

/// The connection configuration: fathom's settings, the statistics log events are read from
/// (`stats_log`), then the setup's string, which wins.
fn connection_config(
    s: &WiredTigerSettings,
    linked: bool,
    stats_log: bool,
    options: &str,
) -> String {
    let cache = s.cache_size.value;
    let (wal, sync) = (s.wal.value, s.sync.value);
    let direct = match s.o_direct {
        Direct::None => "",
        Direct::All => ",direct_io=[data,log,checkpoint]",
    };
    // Debian's snappy is an extension; a fetched release has it built in.
    let extensions = if linked {
        format!(",extensions=[{SNAPPY}]")
    } else {
        String::new()
    };
    let mut config = format!(
        "create,cache_size={cache},statistics=(fast){extensions},log=(enabled={wal}),\
         transaction_sync=(enabled={sync},method=fsync){direct}"
    );
    if stats_log {
        config.push_str(",statistics_log=(wait=1,json=true)");
    }
    if !options.trim().is_empty() {
        config = format!("{config},{}", options.trim());
    }
    config
}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let s: WiredTigerSettings = settings::read(&config.settings)?;
    let (lib, fetched) = chosen(&s.version)?;
    let stats_log = keeps_stats_log(&lib.api.version());
    let conn_config = connection_config(&s, fetched.is_none(), stats_log, &config.options);
    let home = CString::new(config.data_dir.to_string_lossy().as_bytes())?;
    let cfg = CString::new(conn_config.clone())?;
    let mut conn: Conn = ptr::null_mut();
    // SAFETY: all pointers are valid for the call; conn receives the new connection.
    let rc = unsafe { (lib.api.fwt_open)(home.as_ptr(), cfg.as_ptr(), &mut conn) };
    lib.check(rc, &format!("rejected the configuration `{conn_config}`"))?;
    let table = format!("key_format=u,value_format=u,{}", s.table);
    let mut effective = BTreeMap::from([(
        "config".to_string(),
        format!("{conn_config} | table: {table}"),
    )]);
    if let Some(source) = fetched {
        let shim = lib.api.path.display().to_string();
        effective.insert("fathom.library".into(), shim);
        if let Some(source) = source {
            effective.insert("fathom.library_source".into(), source);
        }
    }
    let mut engine = WiredTiger {
        lib,
        conn,
        id: Identity::new(ENTRY.name, lib.api.version(), vec![config.data_dir.clone()]),
        uri: CString::new("table:fathom")?,
        effective,
        admin: std::sync::Mutex::new(SessionHandle(ptr::null_mut())),
        stats_log,
        work: s.session_stats.value.then_some(work::SessionWork { lib }),
    };
    let admin = engine.open_session()?;
    engine.admin = std::sync::Mutex::new(SessionHandle(admin));
    let table_cfg = CString::new(table.clone())?;
    // SAFETY: admin is a live session.
    let rc = unsafe { (lib.api.fwt_create)(admin, engine.uri.as_ptr(), table_cfg.as_ptr()) };
    lib.check(rc, &format!("rejected the table configuration `{table}`"))?;
    Ok(Box::new(engine))
}

impl WiredTiger {
    fn open_session(&self) -> anyhow::Result<Sess> {
        let mut session: Sess = ptr::null_mut();
        // SAFETY: conn is live until Drop; session receives the new session.
        let rc = unsafe { (self.lib.api.fwt_open_session)(self.conn, &mut session) };
        self.lib.check(rc, "open_session")?;
        Ok(session)
    }
}

impl Drop for WiredTiger {
    fn drop(&mut self) {
        // SAFETY: closing the connection closes every session and cursor still open.
        unsafe { (self.lib.api.fwt_close)(self.conn) };
    }
}

impl Target for WiredTiger {
    fn identity(&self) -> &Identity {
        &self.id
    }

    fn counters(&self) -> Counters {
        stats::counters(self)
    }

    fn step_stats(&self, before: &Counters, after: &Counters, _seconds: f64) -> EngineStats {
        stats::step_stats(before, after)
    }

    fn maintain(&self, action: Maintenance) -> anyhow::Result<()> {
        match action {
            // A B-tree has no compaction debt; both mean "make the data durable".
            Maintenance::Flush | Maintenance::WaitForCompaction => {
                let admin = self.admin.lock().unwrap_or_else(|e| e.into_inner());
                // SAFETY: the admin session is live and used under the mutex.
                let rc = unsafe { (self.lib.api.fwt_checkpoint)(admin.0) };
                self.lib.check(rc, "checkpoint")
            }
            Maintenance::CompactLevel0 => Ok(()),
        }
    }

    fn events(&self, from_us: u64, to_us: u64) -> Vec<fathom_api::events::EngineEvent> {
        if !self.stats_log {
            return Vec::new();
        }
        events::read(&self.id.data_dirs[0], from_us, to_us)
    }

    fn keeps_events(&self) -> bool {
        self.stats_log
    }

    fn work_meter(&self) -> Option<&dyn fathom_api::work::WorkMeter> {
        self.work.as_ref().map(|w| w as _)
    }

    fn effective_options(&self) -> BTreeMap<String, String> {
        self.effective.clone()
    }
}

impl KvEngine for WiredTiger {
    fn session(&self, _options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        // WiredTiger's log is per connection: a step's `disable_wal` cannot be honoured.
        Ok(Box::new(Session::open(
            self.lib,
            self.open_session()?,
            &self.uri,
        )?))
    }
}
