//! One scan for both ways RocksDB is reached (the bundled build's iterators, a library's
//! through its C API): position as the seek asks, then visit entries one way up to its limit.

use fathom_api::kv::{Direction, Seek, Visit};

/// What a scan needs of a RocksDB iterator.
pub trait Cursor {
    fn seek(&mut self, key: &[u8]);
    fn seek_for_prev(&mut self, key: &[u8]);
    /// The entry the cursor is at; `None` when it is not valid.
    fn entry(&self) -> Option<(&[u8], &[u8])>;
    fn next(&mut self);
    fn prev(&mut self);
    /// The error that ended the iteration, if one did.
    fn status(&self) -> anyhow::Result<()>;
}

/// Positions `it` at `seek.start` and visits up to `seek.limit` entries in its direction;
/// returns how many it visited.
pub fn walk(it: &mut impl Cursor, seek: Seek, visit: &mut Visit) -> anyhow::Result<usize> {
    match seek.direction {
        Direction::Forward | Direction::PrevFromSeek => it.seek(seek.start),
        Direction::Reverse => it.seek_for_prev(seek.start),
    }
    let mut n = 0;
    while n < seek.limit {
        let Some((k, v)) = it.entry() else {
            break;
        };
        n += 1;
        if !visit(k, v) {
            break;
        }
        if seek.direction.backwards() {
            it.prev()
        } else {
            it.next()
        }
    }
    it.status()?;
    Ok(n)
}
