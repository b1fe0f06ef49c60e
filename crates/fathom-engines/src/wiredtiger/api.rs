//! fathom's flat interface to WiredTiger (`shim.c`): linked into fathom against Debian's
//! release, or loaded from a fetched release's `libfathom_wt.so`. Every release is driven
//! through the same functions, so one engine measures them all.

use crate::dynlib::Loaded;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;
use std::sync::OnceLock;

/// WT_CONNECTION, WT_SESSION and WT_CURSOR are opaque here.
pub type Conn = *mut c_void;
pub type Sess = *mut c_void;
pub type Cur = *mut c_void;

crate::c_api! {
    /// The shim's functions, by their C names.
    pub struct Api;
    linked linked_table;
    required {
        fwt_version: fn(*mut c_int, *mut c_int, *mut c_int);
        fwt_strerror: fn(c_int) -> *const c_char;
        fwt_codes: fn(*mut c_int, *mut c_int, *mut c_int);
        fwt_open: fn(*const c_char, *const c_char, *mut Conn) -> c_int;
        fwt_close: fn(Conn) -> c_int;
        fwt_open_session: fn(Conn, *mut Sess) -> c_int;
        fwt_session_close: fn(Sess) -> c_int;
        fwt_create: fn(Sess, *const c_char, *const c_char) -> c_int;
        fwt_checkpoint: fn(Sess) -> c_int;
        fwt_begin: fn(Sess, *const c_char) -> c_int;
        fwt_commit: fn(Sess) -> c_int;
        fwt_rollback: fn(Sess) -> c_int;
        fwt_open_cursor: fn(Sess, *const c_char, *mut Cur) -> c_int;
        fwt_cursor_close: fn(Cur) -> c_int;
        fwt_search_near: fn(Cur, *const c_void, usize, *mut c_int) -> c_int;
        fwt_insert: fn(Cur, *const c_void, usize, *const c_void, usize) -> c_int;
        fwt_remove: fn(Cur, *const c_void, usize) -> c_int;
        fwt_next: fn(Cur) -> c_int;
        fwt_reset: fn(Cur) -> c_int;
        fwt_entry: fn(Cur, *mut *const c_void, *mut usize, *mut *const c_void, *mut usize)
            -> c_int;
        fwt_step: fn(Cur, c_int, *mut *const c_void, *mut usize, *mut *const c_void, *mut usize)
            -> c_int;
        fwt_get: fn(Cur, *const c_void, usize, *mut *const c_void, *mut usize) -> c_int;
        fwt_stat: fn(Cur, *mut *const c_char, *mut i64) -> c_int;
        fwt_session_work: fn(Sess, *mut Cur, *mut i64) -> c_int;
    }
    optional {}
}

/// The release linked into fathom (Debian's).
pub fn linked() -> &'static Api {
    static LINKED: OnceLock<Api> = OnceLock::new();
    LINKED.get_or_init(linked_table)
}

/// Shims loaded so far, by path.
static LOADED: Loaded<Api> = Loaded::new();

/// The shim at `path` (a fetched release's `lib/libfathom_wt.so`), loaded on first use.
pub fn load(path: &Path) -> anyhow::Result<&'static Api> {
    const WHAT: &str = "fathom's WiredTiger interface; `scripts/fetch-engine.sh wiredtiger \
                        VERSION` builds it again";
    // SAFETY: the handle is live and never closed; the signatures are shim.c's.
    LOADED.get(path, "WiredTiger interface", |lib| unsafe {
        Api::resolve(lib, path, WHAT)
    })
}

/// A release's return codes that fathom acts on.
#[derive(Clone, Copy)]
pub struct Codes {
    pub notfound: c_int,
    pub rollback: c_int,
    pub prepare_conflict: c_int,
}

impl Api {
    pub fn codes(&self) -> Codes {
        let mut c = Codes {
            notfound: 0,
            rollback: 0,
            prepare_conflict: 0,
        };
        // SAFETY: three valid out-pointers.
        unsafe { (self.fwt_codes)(&mut c.notfound, &mut c.rollback, &mut c.prepare_conflict) };
        c
    }

    /// "major.minor.patch" of the release.
    pub fn version(&self) -> String {
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: three valid out-pointers.
        unsafe { (self.fwt_version)(&mut major, &mut minor, &mut patch) };
        format!("{major}.{minor}.{patch}")
    }

    /// WiredTiger's message for a return code.
    pub fn message(&self, code: c_int) -> String {
        // SAFETY: wiredtiger_strerror returns a static, NUL-terminated string for any code.
        unsafe { CStr::from_ptr((self.fwt_strerror)(code)) }
            .to_string_lossy()
            .into_owned()
    }
}
