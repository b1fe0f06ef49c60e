//! C interfaces of engine releases loaded at run time (`--set version=X`, `--set library=PATH`):
//! the `c_api!` table of an interface's functions by their C names, and loading a library once
//! per path, local and deep-bound so its symbols never meet another release's in this process.

use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A table of C functions: `required` ones an engine cannot run without, `optional` ones newer
/// releases have. `resolve` fills it from a loaded library; with `linked NAME`, `NAME()` fills
/// it from the same functions linked into fathom.
#[macro_export]
macro_rules! c_api {
    (
        $(#[$doc:meta])*
        pub struct $api:ident;
        linked $linked:ident;
        required { $($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)* }
        optional { $($opt:ident: fn($($oarg:ty),*) $(-> $oret:ty)?;)* }
    ) => {
        $crate::c_api! {
            $(#[$doc])*
            pub struct $api;
            required { $($name: fn($($arg),*) $(-> $ret)?;)* }
            optional { $($opt: fn($($oarg),*) $(-> $oret)?;)* }
        }

        #[allow(non_snake_case)]
        mod linked_symbols {
            #[allow(unused_imports)]
            use super::*;
            extern "C" {
                $(pub fn $name($(_: $arg),*) $(-> $ret)?;)*
            }
        }

        /// The table of the functions linked into fathom.
        pub fn $linked() -> $api {
            $api {
                path: std::path::PathBuf::new(),
                $($name: linked_symbols::$name,)*
                $($opt: None,)*
            }
        }
    };
    (
        $(#[$doc:meta])*
        pub struct $api:ident;
        required { $($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)* }
        optional { $($opt:ident: fn($($oarg:ty),*) $(-> $oret:ty)?;)* }
    ) => {
        $(#[$doc])*
        #[allow(non_snake_case)]
        pub struct $api {
            /// Where the library was loaded from (empty when linked).
            pub path: std::path::PathBuf,
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            $(pub $opt: Option<unsafe extern "C" fn($($oarg),*) $(-> $oret)?>,)*
        }

        // SAFETY: the table holds plain function pointers into code never unloaded.
        unsafe impl Send for $api {}
        unsafe impl Sync for $api {}

        impl $api {
            /// Resolves every function in the loaded library `lib`.
            ///
            /// # Safety
            /// `lib` is a live handle from `dynlib::open`, never closed; the signatures above
            /// are the library's.
            #[allow(clippy::missing_transmute_annotations)]
            pub unsafe fn resolve(
                lib: $crate::dynlib::Handle,
                path: &std::path::Path,
                what: &str,
            ) -> anyhow::Result<$api> {
                Ok($api {
                    path: path.to_path_buf(),
                    // SAFETY: a symbol of the declared signature, from a library kept loaded.
                    $($name: unsafe {
                        std::mem::transmute(lib.required(stringify!($name), path, what)?)
                    },)*
                    $($opt: unsafe {
                        lib.symbol(stringify!($opt)).map(|p| std::mem::transmute(p))
                    },)*
                })
            }
        }
    };
}

/// A loaded library, never closed.
#[derive(Clone, Copy)]
pub struct Handle(*mut c_void);

// SAFETY: a dlopen handle may be used from any thread.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Handle {
    /// A function the library may export.
    ///
    /// # Safety
    /// The handle is live (it always is: libraries are never closed).
    pub unsafe fn symbol(self, name: &str) -> Option<*mut c_void> {
        let c = CString::new(name).ok()?;
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.0, c.as_ptr()) };
        (!p.is_null()).then_some(p)
    }

    /// A function the engine cannot run without; `what` names the interface expected.
    ///
    /// # Safety
    /// As for `symbol`.
    pub unsafe fn required(
        self,
        name: &str,
        path: &Path,
        what: &str,
    ) -> anyhow::Result<*mut c_void> {
        // SAFETY: forwarded from the caller.
        unsafe { self.symbol(name) }
            .ok_or_else(|| anyhow::anyhow!("{} does not export {name} ({what})", path.display()))
    }
}

/// Loaded tables by path: each library is loaded once and kept for the process's life.
pub struct Loaded<T: 'static>(Mutex<Option<HashMap<PathBuf, &'static T>>>);

impl<T: Sync> Default for Loaded<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Sync> Loaded<T> {
    pub const fn new() -> Loaded<T> {
        Loaded(Mutex::new(None))
    }

    /// The table of the library at `path` (`what` it should be, for errors), loaded and
    /// resolved on first use.
    pub fn get(
        &self,
        path: &Path,
        what: &str,
        resolve: impl FnOnce(Handle) -> anyhow::Result<T>,
    ) -> anyhow::Result<&'static T> {
        let mut loaded = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let map = loaded.get_or_insert_with(HashMap::new);
        if let Some(t) = map.get(path) {
            return Ok(t);
        }
        let table: &'static T = Box::leak(Box::new(resolve(open(path, what)?)?));
        map.insert(path.to_path_buf(), table);
        Ok(table)
    }
}

/// Loads the library at `path`, local and deep-bound: its own symbols win inside it, and its
/// pieces never meet another release's (or the one linked into fathom).
fn open(path: &Path, what: &str) -> anyhow::Result<Handle> {
    let name = CString::new(path.as_os_str().as_encoded_bytes())?;
    let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND;
    // SAFETY: a NUL-terminated path; the handle is kept for the process's life.
    let lib = unsafe { libc::dlopen(name.as_ptr(), flags) };
    if lib.is_null() {
        anyhow::bail!("cannot load {what} {}: {}", path.display(), dl_error());
    }
    Ok(Handle(lib))
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libc.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-NULL, NUL-terminated.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}
