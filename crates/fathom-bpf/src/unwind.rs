//! Walks a long sleep's user stack as the program sent it (registers and the stack's bytes)
//! by each mapped file's DWARF call frame information (`.eh_frame`), where frame pointers stop
//! at the first C library function; and picks the frame that says where a sleep was.

use crate::symbols::Symbols;
use crate::UserStack;
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};
use std::collections::HashMap;
use std::sync::Arc;

/// The most frames walked.
const MAX_FRAMES: usize = 64;

/// Each process's unwinder, made from its mappings the first time one of its stacks is walked.
#[derive(Default)]
pub struct Walker {
    unwinders: HashMap<u32, UnwinderX86_64<Arc<[u8]>>>,
    cache: Option<CacheX86_64>,
}

impl Walker {
    /// Reads process `tgid`'s files now, ahead of its first walk.
    pub fn know(&mut self, names: &mut Symbols, tgid: u32) {
        self.unwinders
            .entry(tgid)
            .or_insert_with(|| unwinder(names, tgid));
    }

    /// The return addresses of `stack` (each less one, inside its call), innermost first,
    /// starting with the address it slept at; as far as the bytes sent and the files' call
    /// frame information go.
    pub fn walk(&mut self, names: &mut Symbols, stack: &UserStack) -> Vec<u64> {
        let unwinder = self
            .unwinders
            .entry(stack.tgid)
            .or_insert_with(|| unwinder(names, stack.tgid));
        let cache = self.cache.get_or_insert_with(CacheX86_64::new);
        let (sp, bytes) = (stack.sp, stack.stack());
        let mut read = |addr: u64| {
            let at = usize::try_from(addr.checked_sub(sp).ok_or(())?).map_err(|_| ())?;
            let word = bytes.get(at..at + 8).ok_or(())?;
            Ok(u64::from_le_bytes(word.try_into().map_err(|_| ())?))
        };
        let regs = UnwindRegsX86_64::new(stack.ip, stack.sp, stack.bp);
        let mut frames = Vec::new();
        let mut it = unwinder.iter_frames(stack.ip, regs, cache, &mut read);
        while let Ok(Some(frame)) = it.next() {
            frames.push(frame.address_for_lookup());
            if frames.len() >= MAX_FRAMES {
                break;
            }
        }
        frames
    }
}

/// An unwinder knowing every executable mapping of process `tgid` that has call frame
/// information.
fn unwinder(names: &mut Symbols, tgid: u32) -> UnwinderX86_64<Arc<[u8]>> {
    let mut unwinder = UnwinderX86_64::new();
    for (m, elf) in names.mapped(tgid) {
        let Some(elf) = elf else { continue };
        let f = &elf.frames;
        let Some((eh_range, eh)) = f.eh_frame.clone() else {
            continue;
        };
        // The segment mapped here (a mapping starts at its segment's offset rounded down to
        // a page, where the segment before may end too: the later one): its file offset
        // against its address gives the load bias.
        let Some(&(off, _, addr)) = (elf.segments.iter())
            .filter(|&&(off, size, _)| (off & !0xfff..off + size.max(1)).contains(&m.offset))
            .max_by_key(|s| s.0)
        else {
            continue;
        };
        let base = (m.start + off).wrapping_sub(m.offset).wrapping_sub(addr);
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: f.text.clone(),
            got_svma: f.got.clone(),
            eh_frame_svma: Some(eh_range),
            eh_frame: Some(eh),
            eh_frame_hdr_svma: f.eh_frame_hdr.as_ref().map(|h| h.0.clone()),
            eh_frame_hdr: f.eh_frame_hdr.as_ref().map(|h| h.1.clone()),
            ..Default::default()
        };
        let name = m.path.display().to_string();
        unwinder.add_module(Module::new(name, m.start..m.end, base, info));
    }
    unwinder
}

/// The frame that says where a sleep was: the innermost outside the C and C++ runtimes and
/// Rust's standard library, with its caller (`rocksdb::WriteThread::AwaitState <
/// rocksdb::WriteThread::JoinBatchGroup`); `None` when every frame is theirs or unnamed.
pub fn place(names: &mut Symbols, tgid: u32, frames: &[u64]) -> Option<String> {
    let named: Vec<(String, bool)> = frames
        .iter()
        .filter_map(|&a| names.user_at(tgid, a))
        .map(|(name, file)| {
            let runtime = file.starts_with("/lib")
                || file.starts_with("/usr/lib")
                || is_std(&name)
                || name.starts_with('_')
                || name == "[unknown]";
            (name, runtime)
        })
        .collect();
    let first = named.iter().position(|(_, runtime)| !runtime)?;
    let mut place = named[first].0.clone();
    if let Some((caller, false)) = named.get(first + 1) {
        place = format!("{place} < {caller}");
    }
    Some(place)
}

/// A function of Rust's standard library or of the locks and channels every client uses.
fn is_std(name: &str) -> bool {
    [
        "std::",
        "core::",
        "alloc::",
        "parking_lot",
        "crossbeam",
        "<std::",
        "<core::",
        "<alloc::",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are picked past the runtimes', with their caller.
    #[test]
    fn a_place_skips_the_runtimes() {
        assert!(is_std("std::sys::pal::unix::futex::futex_wait"));
        assert!(is_std("<std::sync::mpsc::Receiver<T>>::recv"));
        assert!(!is_std("rocksdb::WriteThread::AwaitState"));
    }
}
