//! What the session and its transactions share of the C API: byte slices crossing it, and a
//! library iterator as a scan's cursor (a leaf, so `session` and `txn` import one way).

use super::api::{Api, Obj};
use crate::rocksdb::scan::Cursor;
use std::ffi::c_char;

/// A byte slice as the C API takes it.
pub(super) fn c(b: &[u8]) -> (*const c_char, usize) {
    (b.as_ptr().cast(), b.len())
}

/// Bytes the C API handed out, valid until the object they came from changes.
///
/// # Safety
/// `p` points at `n` readable bytes (or is NULL with `n` 0).
pub(super) unsafe fn bytes<'a>(p: *const c_char, n: usize) -> &'a [u8] {
    if p.is_null() {
        &[]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(p.cast(), n) }
    }
}

/// An iterator of a library, released when dropped.
pub(super) struct LibraryCursor<'a> {
    api: &'a Api,
    it: Obj,
}

impl<'a> LibraryCursor<'a> {
    /// Takes `it`, an iterator `api`'s library just made, to release it once.
    pub(super) fn new(api: &'a Api, it: Obj) -> Self {
        LibraryCursor { api, it }
    }
}

impl Drop for LibraryCursor<'_> {
    fn drop(&mut self) {
        // SAFETY: made by this library, released once.
        unsafe { (self.api.rocksdb_iter_destroy)(self.it) }
    }
}

impl Cursor for LibraryCursor<'_> {
    fn seek(&mut self, key: &[u8]) {
        let (k, n) = c(key);
        // SAFETY: a live iterator; the key is copied by RocksDB.
        unsafe { (self.api.rocksdb_iter_seek)(self.it, k, n) }
    }
    fn seek_for_prev(&mut self, key: &[u8]) {
        let (k, n) = c(key);
        // SAFETY: as `seek`.
        unsafe { (self.api.rocksdb_iter_seek_for_prev)(self.it, k, n) }
    }
    /// Key and value borrowed from the iterator until it moves.
    fn entry(&self) -> Option<(&[u8], &[u8])> {
        let a = self.api;
        // SAFETY: a live iterator; the slices live until it moves, which needs `&mut self`.
        unsafe {
            if (a.rocksdb_iter_valid)(self.it) == 0 {
                return None;
            }
            let (mut kn, mut vn) = (0, 0);
            let k = (a.rocksdb_iter_key)(self.it, &mut kn);
            let v = (a.rocksdb_iter_value)(self.it, &mut vn);
            Some((bytes(k, kn), bytes(v, vn)))
        }
    }
    fn next(&mut self) {
        // SAFETY: a live iterator.
        unsafe { (self.api.rocksdb_iter_next)(self.it) }
    }
    fn prev(&mut self) {
        // SAFETY: a live iterator.
        unsafe { (self.api.rocksdb_iter_prev)(self.it) }
    }
    fn status(&self) -> anyhow::Result<()> {
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: a live iterator.
        unsafe { (self.api.rocksdb_iter_get_error)(self.it, &mut err) };
        self.api.check(err, "iterator")
    }
}
