//! Names the addresses of the program's stacks as the CPU profiles' folded stacks name frames:
//! the kernel's from `/proc/kallsyms` (`name_[k]`), a process's from the symbol tables of the
//! ELF files its `/proc/PID/maps` maps at them, demangled (Rust and C++), `[unknown]` where no
//! symbol covers the address; and keeps the sections that say how to walk each file's frames
//! (`unwind`).

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

/// Everything read so far: the kernel's symbols, each process's mappings, each file's symbols
/// (and its call frame information, for `unwind`).
#[derive(Default)]
pub struct Symbols {
    kernel: Option<Vec<(u64, String)>>,
    maps: HashMap<u32, Vec<Mapping>>,
    files: HashMap<PathBuf, Option<Elf>>,
}

/// One executable mapping of a process.
pub(crate) struct Mapping {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    pub path: PathBuf,
}

/// One ELF file's loadable segments (file offset, size, address), its functions (address,
/// size, name), sorted, and the sections that say how to walk its stack frames.
pub(crate) struct Elf {
    pub segments: Vec<(u64, u64, u64)>,
    functions: Vec<(u64, u64, String)>,
    pub frames: FrameSections,
}

impl Symbols {
    /// A kernel address's function, `name_[k]`.
    pub fn kernel(&mut self, addr: u64) -> String {
        let table = self.kernel.get_or_insert_with(kallsyms);
        let i = table.partition_point(|s| s.0 <= addr);
        match i.checked_sub(1).and_then(|i| table.get(i)) {
            Some((_, name)) => format!("{name}_[k]"),
            None => "[unknown]_[k]".into(),
        }
    }

    /// A user address's function in process `tgid` (its mappings read the first time asked,
    /// so ask while it lives).
    pub fn user(&mut self, tgid: u32, addr: u64) -> String {
        self.user_at(tgid, addr)
            .map(|(name, _)| name)
            .unwrap_or_else(|| "[unknown]".into())
    }

    /// A user address's function in process `tgid`, and the file it is in.
    pub fn user_at(&mut self, tgid: u32, addr: u64) -> Option<(String, PathBuf)> {
        let maps = self.maps.entry(tgid).or_insert_with(|| mappings(tgid));
        let m = maps.iter().find(|m| (m.start..m.end).contains(&addr))?;
        let name = read_once(&mut self.files, &m.path)?.function(addr - m.start + m.offset)?;
        Some((name, m.path.clone()))
    }

    /// Process `tgid`'s executable mappings, each with its file read (once).
    pub(crate) fn mapped(&mut self, tgid: u32) -> Vec<(&Mapping, Option<&Elf>)> {
        let maps = self.maps.entry(tgid).or_insert_with(|| mappings(tgid));
        for m in maps.iter() {
            read_once(&mut self.files, &m.path);
        }
        maps.iter()
            .map(|m| (m, self.files.get(&m.path).and_then(Option::as_ref)))
            .collect()
    }
}

/// File `path`, read the first time asked.
fn read_once<'a>(
    files: &'a mut HashMap<PathBuf, Option<Elf>>,
    path: &std::path::Path,
) -> Option<&'a Elf> {
    (files.entry(path.to_path_buf()))
        .or_insert_with(|| Elf::read(path))
        .as_ref()
}

/// The kernel's text symbols, sorted (all at 0 without root: every name then unknown).
fn kallsyms() -> Vec<(u64, String)> {
    let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    let mut out: Vec<(u64, String)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let addr = u64::from_str_radix(f.next()?, 16).ok()?;
            let kind = f.next()?;
            let name = f.next()?;
            (addr != 0 && matches!(kind, "t" | "T" | "w" | "W")).then(|| (addr, name.to_string()))
        })
        .collect();
    out.sort_unstable();
    out
}

/// A process's executable mappings of files.
fn mappings(tgid: u32) -> Vec<Mapping> {
    let text = std::fs::read_to_string(format!("/proc/{tgid}/maps")).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (start, end) = f.next()?.split_once('-')?;
            let perms = f.next()?;
            let offset = u64::from_str_radix(f.next()?, 16).ok()?;
            let path = f.nth(2)?;
            (perms.contains('x') && path.starts_with('/')).then(|| Mapping {
                start: u64::from_str_radix(start, 16).ok().unwrap_or(0),
                end: u64::from_str_radix(end, 16).ok().unwrap_or(0),
                offset,
                path: PathBuf::from(path),
            })
        })
        .collect()
}

impl Elf {
    fn read(path: &std::path::Path) -> Option<Elf> {
        use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
        let data = Mapped::open(path)?;
        let file = object::File::parse(data.bytes()).ok()?;
        let segments = file
            .segments()
            .map(|s| {
                let (off, size) = s.file_range();
                (off, size, s.address())
            })
            .collect();
        let mut functions: Vec<(u64, u64, String)> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
            .filter_map(|s| Some((s.address(), s.size(), demangle(s.name().ok()?))))
            .collect();
        functions.sort_unstable_by_key(|f| f.0);
        functions.dedup_by_key(|f| f.0);
        Some(Elf {
            segments,
            functions,
            frames: FrameSections::of(&file),
        })
    }

    /// The function at file offset `offset`.
    fn function(&self, offset: u64) -> Option<String> {
        let &(off, _, addr) = self
            .segments
            .iter()
            .find(|&&(off, size, _)| (off..off + size).contains(&offset))?;
        let at = offset - off + addr;
        let i = self
            .functions
            .partition_point(|f| f.0 <= at)
            .checked_sub(1)?;
        let (start, size, name) = &self.functions[i];
        // A symbol without a size covers up to the next one.
        (*size == 0 || at < start + size).then(|| name.clone())
    }
}

/// A file's sections that say how to walk its frames: their addresses and bytes (shared with
/// each unwinder that knows the file, not copied).
#[derive(Clone, Default)]
pub struct FrameSections {
    pub(crate) text: Option<Range<u64>>,
    pub(crate) got: Option<Range<u64>>,
    pub(crate) eh_frame: Option<(Range<u64>, Arc<[u8]>)>,
    pub(crate) eh_frame_hdr: Option<(Range<u64>, Arc<[u8]>)>,
}

impl FrameSections {
    /// The sections of `file` (none where it has no `.eh_frame`).
    pub(crate) fn of(file: &object::File) -> FrameSections {
        use object::{Object, ObjectSection};
        let range = |name: &str| {
            let s = file.section_by_name(name)?;
            Some(s.address()..s.address() + s.size())
        };
        let with_data = |name: &str| {
            let s = file.section_by_name(name)?;
            Some((
                s.address()..s.address() + s.size(),
                Arc::from(s.data().ok()?),
            ))
        };
        FrameSections {
            text: range(".text"),
            got: range(".got"),
            eh_frame: with_data(".eh_frame"),
            eh_frame_hdr: with_data(".eh_frame_hdr"),
        }
    }
}

/// A file mapped read-only: its pages are the page cache's, which a memory limit can reclaim,
/// where reading fathom's own 100 MB executable into the heap would count against it whole.
struct Mapped {
    at: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    fn open(path: &std::path::Path) -> Option<Mapped> {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(path).ok()?;
        let len = usize::try_from(f.metadata().ok()?.len()).ok()?;
        if len == 0 {
            return None;
        }
        // SAFETY: a new private read-only mapping of an open file, checked below; the file
        // may close once mapped.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
                0,
            )
        };
        (at != libc::MAP_FAILED).then_some(Mapped { at, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `at` while mapped, which lasts as long as `self`.
        // (A file rewritten while mapped could change under it: executables being run are
        // not rewritten, the kernel refuses writes to them.)
        unsafe { std::slice::from_raw_parts(self.at.cast::<u8>(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, unmapped once.
        unsafe { libc::munmap(self.at, self.len) };
    }
}

/// A Rust or C++ symbol's readable name (C++ without its parameters), else the symbol.
fn demangle(name: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z") {
        let options = cpp_demangle::DemangleOptions::new()
            .no_params()
            .no_return_type();
        if let Ok(d) = cpp_demangle::Symbol::new(name).and_then(|s| {
            s.demangle(&options)
                .map_err(|_| cpp_demangle::error::Error::Overflow)
        }) {
            return d;
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_this_process_functions() {
        let mut s = Symbols::default();
        let here = names_this_process_functions as fn() as usize as u64;
        let name = s.user(std::process::id(), here);
        assert!(name.contains("names_this_process_functions"), "{name}");
        assert_eq!(s.user(std::process::id(), 8), "[unknown]");
    }

    #[test]
    fn demangles_rust_and_cpp() {
        assert_eq!(
            demangle("_ZN4core3ptr4drop17h0123456789abcdefE"),
            "core::ptr::drop"
        );
        assert_eq!(
            demangle("_ZN7rocksdb6DBImpl9WriteImplERKNS_12WriteOptionsEPNS_10WriteBatchE"),
            "rocksdb::DBImpl::WriteImpl"
        );
        assert_eq!(demangle("pthread_mutex_lock"), "pthread_mutex_lock");
    }
}
