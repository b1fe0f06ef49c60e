//! Embedded WiredTiger (Debian's libwiredtiger, 3.2.1), through bindings generated from its
//! header. A setup is WiredTiger's own connection configuration string; the table's
//! configuration is the `table` setting. Sessions and cursors are per client thread; batches
//! are transactions; statistics come from WiredTiger's statistics cursor.

use crate::settings::{self, specs, Size, Switch};
use crate::{EngineConfig, EngineEntry};
use fathom_core::kv::{
    BatchOp, Direction, KvEngine, KvSession, KvTxn, Seek, SessionOptions, TxnBody, TxnEnd, Visit,
};
use fathom_core::result::EngineStats;
use fathom_core::retry::EngineError;
use fathom_core::target::{Counters, Identity, Maintenance, Target};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void, CStr, CString};
use std::ptr;

#[allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code,
    clippy::all
)]
mod ffi {
    include!(concat!(env!("OUT_DIR"), "/wiredtiger.rs"));
}

mod stats;

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
}

impl Default for WiredTigerSettings {
    fn default() -> Self {
        WiredTigerSettings {
            cache_size: Size::new("256m"),
            table: "block_compressor=snappy".into(),
            wal: Switch::new("true"),
            sync: Switch::new("false"),
            o_direct: Direct::None,
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
    about: "embedded WiredTiger from Debian's libwiredtiger (snappy extension loaded)",
    options_doc: "WiredTiger's connection configuration string, e.g. `cache_size=1G,checkpoint=(wait=60),eviction_target=80` \
                  (WiredTiger docs: wiredtiger_open); applied after fathom's settings, so it wins",
    separator: ",",
    settings: specs::<WiredTigerSettings>,
    version,
    ..EngineEntry::embedded_kv(open)
};

fn version() -> anyhow::Result<String> {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: the out-pointers are valid.
    unsafe { ffi::wiredtiger_version(&mut major, &mut minor, &mut patch) };
    Ok(format!("{major}.{minor}.{patch}"))
}

/// WiredTiger's "not found" return code.
const NOTFOUND: c_int = ffi::WT_NOTFOUND;

fn check(code: c_int, what: &str) -> anyhow::Result<()> {
    if code == 0 {
        return Ok(());
    }
    // SAFETY: wiredtiger_strerror returns a static, NUL-terminated string for any code.
    let msg = unsafe { CStr::from_ptr(ffi::wiredtiger_strerror(code)) }.to_string_lossy();
    // WT_ROLLBACK (a write conflict, or cache pressure) and WT_PREPARE_CONFLICT ask the caller
    // to run the transaction again.
    let retryable = code == ffi::WT_ROLLBACK || code == ffi::WT_PREPARE_CONFLICT;
    Err(EngineError::classified(
        retryable,
        format!("WiredTiger {what}: {msg} ({code})"),
    ))
}

pub struct WiredTiger {
    conn: *mut ffi::WT_CONNECTION,
    id: Identity,
    uri: CString,
    config: String,
    /// A session of the engine's own, for checkpoints and statistics.
    admin: std::sync::Mutex<SessionHandle>,
}

// SAFETY: a WT_CONNECTION is thread-safe; the admin session is behind a mutex.
unsafe impl Send for WiredTiger {}
unsafe impl Sync for WiredTiger {}

struct SessionHandle(*mut ffi::WT_SESSION);
// SAFETY: a WT_SESSION may move between threads as long as one thread uses it at a time.
unsafe impl Send for SessionHandle {}

fn open(config: &EngineConfig) -> anyhow::Result<Box<dyn KvEngine>> {
    let s: WiredTigerSettings = settings::read(&config.settings)?;
    let cache = s.cache_size.value;
    let (wal, sync) = (s.wal.value, s.sync.value);
    let direct = match s.o_direct {
        Direct::None => "",
        Direct::All => ",direct_io=[data,log,checkpoint]",
    };
    let mut conn_config = format!(
        "create,cache_size={cache},statistics=(fast),extensions=[{SNAPPY}],log=(enabled={wal}),\
         transaction_sync=(enabled={sync},method=fsync){direct}"
    );
    if !config.options.trim().is_empty() {
        conn_config = format!("{conn_config},{}", config.options.trim());
    }
    let home = CString::new(config.data_dir.to_string_lossy().as_bytes())?;
    let cfg = CString::new(conn_config.clone())?;
    let mut conn: *mut ffi::WT_CONNECTION = ptr::null_mut();
    // SAFETY: all pointers are valid for the call; conn receives the new connection.
    let rc =
        unsafe { ffi::wiredtiger_open(home.as_ptr(), ptr::null_mut(), cfg.as_ptr(), &mut conn) };
    check(rc, &format!("rejected the configuration `{conn_config}`"))?;
    let uri = CString::new("table:fathom")?;
    let table = format!("key_format=u,value_format=u,{}", s.table);
    let mut engine = WiredTiger {
        conn,
        id: Identity::new("wiredtiger", version()?, vec![config.data_dir.clone()]),
        uri,
        config: format!("{conn_config} | table: {table}"),
        admin: std::sync::Mutex::new(SessionHandle(ptr::null_mut())),
    };
    let admin = engine.open_session()?;
    let table_cfg = CString::new(table.clone())?;
    // SAFETY: admin is a live session; create is in its function table.
    let rc = unsafe { ((*admin).create.unwrap())(admin, engine.uri.as_ptr(), table_cfg.as_ptr()) };
    check(rc, &format!("rejected the table configuration `{table}`"))?;
    engine.admin = std::sync::Mutex::new(SessionHandle(admin));
    Ok(Box::new(engine))
}

impl WiredTiger {
    fn open_session(&self) -> anyhow::Result<*mut ffi::WT_SESSION> {
        let mut session: *mut ffi::WT_SESSION = ptr::null_mut();
        // SAFETY: conn is live until Drop; session receives the new session.
        let rc = unsafe {
            ((*self.conn).open_session.unwrap())(
                self.conn,
                ptr::null_mut(),
                ptr::null(),
                &mut session,
            )
        };
        check(rc, "open_session")?;
        Ok(session)
    }
}

impl Drop for WiredTiger {
    fn drop(&mut self) {
        // SAFETY: closing the connection closes every session and cursor still open.
        unsafe {
            ((*self.conn).close.unwrap())(self.conn, ptr::null());
        }
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
                let rc = unsafe { ((*admin.0).checkpoint.unwrap())(admin.0, ptr::null()) };
                check(rc, "checkpoint")
            }
            Maintenance::CompactLevel0 => Ok(()),
        }
    }

    fn effective_options(&self) -> BTreeMap<String, String> {
        BTreeMap::from([("config".to_string(), self.config.clone())])
    }
}

struct Session {
    session: *mut ffi::WT_SESSION,
    cursor: *mut ffi::WT_CURSOR,
}

// SAFETY: the session and its cursor are used by one thread at a time.
unsafe impl Send for Session {}

fn item(bytes: &[u8]) -> ffi::WT_ITEM {
    // SAFETY: WT_ITEM is plain data; all-zero is its empty value.
    let mut it: ffi::WT_ITEM = unsafe { std::mem::zeroed() };
    it.data = bytes.as_ptr() as *const c_void;
    it.size = bytes.len();
    it
}

fn slice<'a>(it: &ffi::WT_ITEM) -> &'a [u8] {
    if it.size == 0 {
        return &[];
    }
    // SAFETY: WiredTiger returns items valid until the cursor moves or resets.
    unsafe { std::slice::from_raw_parts(it.data as *const u8, it.size) }
}

impl Session {
    /// Calls a cursor method through its function table.
    fn cursor_fn(
        &self,
        f: Option<unsafe extern "C" fn(*mut ffi::WT_CURSOR) -> c_int>,
        what: &str,
    ) -> anyhow::Result<bool> {
        // SAFETY: the cursor is live; every method called this way takes only the cursor.
        let rc = unsafe { (f.unwrap())(self.cursor) };
        if rc == NOTFOUND {
            return Ok(false);
        }
        check(rc, what)?;
        Ok(true)
    }

    fn set_key(&self, key: &[u8]) -> ffi::WT_ITEM {
        let k = item(key);
        // SAFETY: key_format=u takes a WT_ITEM pointer, read during the next operation, while
        // `k` (returned to the caller) and `key` are alive.
        unsafe { ((*self.cursor).set_key.unwrap())(self.cursor, &k as *const ffi::WT_ITEM) };
        k
    }

    fn value(&self) -> anyhow::Result<&[u8]> {
        let mut v = item(&[]);
        // SAFETY: the cursor is positioned; value_format=u fills a WT_ITEM.
        check(
            unsafe {
                ((*self.cursor).get_value.unwrap())(self.cursor, &mut v as *mut ffi::WT_ITEM)
            },
            "get_value",
        )?;
        Ok(slice(&v))
    }

    fn key(&self) -> anyhow::Result<&[u8]> {
        let mut k = item(&[]);
        // SAFETY: as for `value`.
        check(
            unsafe { ((*self.cursor).get_key.unwrap())(self.cursor, &mut k as *mut ffi::WT_ITEM) },
            "get_key",
        )?;
        Ok(slice(&k))
    }

    fn read_into(&self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        let _k = self.set_key(key);
        let found = self.cursor_fn(unsafe { (*self.cursor).search }, "search")?;
        if found {
            out.clear();
            out.extend_from_slice(self.value()?);
        }
        self.reset()?;
        Ok(found)
    }

    fn reset(&self) -> anyhow::Result<()> {
        self.cursor_fn(unsafe { (*self.cursor).reset }, "reset")
            .map(|_| ())
    }

    fn write(&self, op: &BatchOp<'_>) -> anyhow::Result<()> {
        match op {
            BatchOp::Put(k, v) => {
                let _k = self.set_key(k);
                let val = item(v);
                // SAFETY: value_format=u takes a WT_ITEM pointer, alive for the insert.
                unsafe {
                    ((*self.cursor).set_value.unwrap())(self.cursor, &val as *const ffi::WT_ITEM)
                };
                self.cursor_fn(unsafe { (*self.cursor).insert }, "insert")?;
            }
            BatchOp::Delete(k) => {
                let _k = self.set_key(k);
                // An absent key is not an error (NOTFOUND maps to false).
                self.cursor_fn(unsafe { (*self.cursor).remove }, "remove")?;
            }
        }
        Ok(())
    }

    fn begin(&self, config: &CStr) -> anyhow::Result<()> {
        // SAFETY: the session is live.
        check(
            unsafe { ((*self.session).begin_transaction.unwrap())(self.session, config.as_ptr()) },
            "begin_transaction",
        )
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: closing the session closes its cursor.
        unsafe {
            ((*self.session).close.unwrap())(self.session, ptr::null());
        }
    }
}

impl KvSession for Session {
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        self.value_len(key)
    }

    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.read_into(key, out)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.write(&BatchOp::Put(key, value))
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.write(&BatchOp::Delete(key))
    }

    fn transaction(&mut self, body: &mut TxnBody) -> anyhow::Result<TxnEnd> {
        // Snapshot isolation: WiredTiger detects write-write conflicts only there (a session's
        // default, read-committed, lets two transactions update one key and lose an update).
        self.begin(c"isolation=snapshot")?;
        let outcome = body(&mut WtTxn { session: self });
        // SAFETY: the session is live and in a transaction.
        let rc = unsafe {
            match outcome {
                Ok(TxnEnd::Commit) => {
                    ((*self.session).commit_transaction.unwrap())(self.session, ptr::null())
                }
                _ => ((*self.session).rollback_transaction.unwrap())(self.session, ptr::null()),
            }
        };
        let end = outcome?;
        check(rc, "ending a transaction")?;
        Ok(end)
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        self.seek_and_walk(seek, visit)
    }
}

impl Session {
    /// A key's value length, or None when absent.
    fn value_len(&self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        let _k = self.set_key(key);
        let found = self.cursor_fn(unsafe { (*self.cursor).search }, "search")?;
        let len = if found {
            Some(self.value()?.len())
        } else {
            None
        };
        self.reset()?;
        Ok(len)
    }

    /// Positions the cursor at the seek's start and visits from there.
    fn seek_and_walk(&self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        let (start, direction, limit) = (seek.start, seek.direction, seek.limit);
        // WiredTiger has no empty key: from "" a forward scan starts at the first key, and a
        // reverse one finds nothing.
        if start.is_empty() {
            return match direction {
                Direction::Reverse => Ok(0),
                Direction::Forward | Direction::PrevFromSeek => {
                    let first = self.cursor_fn(unsafe { (*self.cursor).next }, "next")?;
                    self.walk(first, direction, limit, visit)
                }
            };
        }
        let _k = self.set_key(start);
        let mut exact: c_int = 0;
        // SAFETY: the cursor is live; search_near reports where it landed in `exact`.
        let rc = unsafe { ((*self.cursor).search_near.unwrap())(self.cursor, &mut exact) };
        if rc == NOTFOUND {
            return Ok(0);
        }
        check(rc, "search_near")?;
        // search_near lands on a neighbour: step once if it is on the wrong side of `start`.
        let positioned = match direction {
            Direction::Forward | Direction::PrevFromSeek if exact < 0 => {
                self.cursor_fn(unsafe { (*self.cursor).next }, "next")?
            }
            Direction::Reverse if exact > 0 => {
                self.cursor_fn(unsafe { (*self.cursor).prev }, "prev")?
            }
            _ => true,
        };
        self.walk(positioned, direction, limit, visit)
    }

    /// Visits up to `limit` entries from the cursor's position, then releases the position.
    fn walk(
        &self,
        mut positioned: bool,
        direction: Direction,
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> anyhow::Result<usize> {
        let mut n = 0;
        while positioned && n < limit {
            n += 1;
            if !visit(self.key()?, self.value()?) {
                break;
            }
            positioned = if direction.backwards() {
                self.cursor_fn(unsafe { (*self.cursor).prev }, "prev")?
            } else {
                self.cursor_fn(unsafe { (*self.cursor).next }, "next")?
            };
        }
        self.reset()?;
        Ok(n)
    }
}

/// Reads and writes through the session's cursor while its transaction is open.
struct WtTxn<'s> {
    session: &'s Session,
}

impl KvTxn for WtTxn<'_> {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> anyhow::Result<bool> {
        self.session.read_into(key, out)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.session.write(&BatchOp::Put(key, value))
    }

    fn delete(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.session.write(&BatchOp::Delete(key))
    }

    /// The cursor reads in the transaction's snapshot (isolation=snapshot).
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Option<usize>> {
        self.session.value_len(key)
    }

    fn scan(&mut self, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
        self.session.seek_and_walk(seek, visit)
    }
}

impl KvEngine for WiredTiger {
    fn session(&self, _options: SessionOptions) -> anyhow::Result<Box<dyn KvSession + '_>> {
        // WiredTiger's log is per connection: a step's `disable_wal` cannot be honoured.
        let session = self.open_session()?;
        let mut cursor: *mut ffi::WT_CURSOR = ptr::null_mut();
        // SAFETY: the session is live; the table exists (created at open).
        let rc = unsafe {
            ((*session).open_cursor.unwrap())(
                session,
                self.uri.as_ptr(),
                ptr::null_mut(),
                ptr::null(),
                &mut cursor,
            )
        };
        if let Err(e) = check(rc, "open_cursor") {
            // SAFETY: the session is live and owned here.
            unsafe { ((*session).close.unwrap())(session, ptr::null()) };
            return Err(e);
        }
        Ok(Box::new(Session { session, cursor }))
    }
}
