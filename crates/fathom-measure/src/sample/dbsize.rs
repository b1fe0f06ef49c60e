//! Database size on disk: allocated (what `du` shows) and apparent (`du --apparent-size`), the
//! two numbers of the seeds' db.gb column.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbSize {
    pub allocated_bytes: u64,
    pub apparent_bytes: u64,
}

/// Sums every regular file below `dirs`; files that vanish while walking (compaction deletes
/// them) are skipped.
pub fn measure(dirs: &[impl AsRef<Path>]) -> DbSize {
    let mut size = DbSize::default();
    let mut stack: Vec<std::path::PathBuf> =
        dirs.iter().map(|d| d.as_ref().to_path_buf()).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                size.allocated_bytes += meta.blocks() * 512;
                size.apparent_bytes += meta.len();
            }
        }
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_nested_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a"), vec![1u8; 10_000]).unwrap();
        std::fs::write(dir.path().join("sub/b"), vec![1u8; 5_000]).unwrap();
        let s = measure(&[dir.path()]);
        assert_eq!(s.apparent_bytes, 15_000);
        assert!(s.allocated_bytes >= 15_000);
    }
}
