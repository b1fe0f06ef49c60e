//! Whether an executable keeps frame pointers (how `--profile` unwinds it, how far
//! `--waits=bpf-stacks` trusts its user stacks), read from its code: compiled with them, nearly
//! every function starts `push %rbp; mov %rsp,%rbp`, hundreds per MiB of `.text`; compiled
//! without, a handful remain (functions with variable-size frames). Debian's mariadbd and
//! postgres and Go programs keep them; Rust release builds, libc and most C libraries do not.

use fathom_schema::profile::Unwinding;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The x86-64 frame-pointer prologue: `push %rbp; mov %rsp,%rbp`.
const PROLOGUE: [u8; 4] = [0x55, 0x48, 0x89, 0xe5];

/// Prologues per MiB of code above which the executable is taken to keep frame pointers
/// (with them: 1,100–2,200 seen; without: under 70; fathom itself, Rust without them and C++
/// partly with them, about 380: DWARF, which unwinds through both).
const PER_MIB: f64 = 700.0;

/// How to unwind `exe`'s stacks: frame pointers when its code has them, DWARF otherwise
/// (also when it cannot be read).
pub fn unwinding(exe: &Path) -> Unwinding {
    match prologues_per_mib(exe) {
        Some(d) if d >= PER_MIB => Unwinding::FramePointers,
        _ => Unwinding::Dwarf,
    }
}

fn prologues_per_mib(exe: &Path) -> Option<f64> {
    let mut f = std::fs::File::open(exe).ok()?;
    let (offset, size) = text_section(&mut f)?;
    f.seek(SeekFrom::Start(offset)).ok()?;
    let mut code = vec![0u8; usize::try_from(size).ok()?];
    f.read_exact(&mut code).ok()?;
    let found = code.windows(4).filter(|w| *w == PROLOGUE).count();
    Some(found as f64 / (size.max(1) as f64 / 1048576.0))
}

/// The file offset and size of an x86-64 ELF's `.text`.
fn text_section(f: &mut std::fs::File) -> Option<(u64, u64)> {
    let mut head = [0u8; 64];
    f.read_exact(&mut head).ok()?;
    // 64-bit little-endian ELF for x86-64.
    if &head[..4] != b"\x7fELF" || head[4] != 2 || head[5] != 1 || u16le(&head, 18) != 62 {
        return None;
    }
    let shoff = u64le(&head, 0x28);
    let entsize = u64::from(u16le(&head, 0x3a));
    let count = u64::from(u16le(&head, 0x3c));
    let names_at = u64::from(u16le(&head, 0x3e));
    let mut table = vec![0u8; usize::try_from(entsize * count).ok()?];
    f.seek(SeekFrom::Start(shoff)).ok()?;
    f.read_exact(&mut table).ok()?;
    let header = |i: u64| {
        let at = usize::try_from(i * entsize).ok()?;
        table.get(at..at + usize::try_from(entsize).ok()?)
    };
    let names = header(names_at)?;
    let (names_off, names_size) = (u64le(names, 24), u64le(names, 32));
    let mut strings = vec![0u8; usize::try_from(names_size).ok()?];
    f.seek(SeekFrom::Start(names_off)).ok()?;
    f.read_exact(&mut strings).ok()?;
    (0..count).find_map(|i| {
        let h = header(i)?;
        let name = usize::try_from(u32le(h, 0)).ok()?;
        strings
            .get(name..)?
            .starts_with(b".text\0")
            .then(|| (u64le(h, 24), u64le(h, 32)))
    })
}

fn u16le(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32le(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64le(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_release_build_has_no_frame_pointers() {
        // This test's own executable: the release profile, no frame pointers asked for.
        let me = std::env::current_exe().unwrap();
        assert!(prologues_per_mib(&me).unwrap() < PER_MIB);
        assert_eq!(unwinding(&me), Unwinding::Dwarf);
    }

    #[test]
    fn not_an_executable_is_unwound_by_dwarf() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        std::fs::write(&f, b"#!/bin/sh\n").unwrap();
        assert_eq!(prologues_per_mib(&f), None);
        assert_eq!(unwinding(&f), Unwinding::Dwarf);
    }
}
