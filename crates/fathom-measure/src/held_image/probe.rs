//! Where and how the service-time layer measures itself: 4 KiB direct reads at queue depth 1
//! from the loop device, at pages of the image that hold data. A fresh image is sparse, and a
//! read of a hole is answered by the file system below without touching its disk, so a probe
//! there measures less than the run's reads will meet; a fresh image gets its probe pages
//! written first, a kept one is probed where its data is.

use super::Why;
use rand::Rng;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Instant;

/// One page, aligned for direct IO.
#[repr(C, align(4096))]
struct Page([u8; 4096]);

const PAGE: u64 = 4096;

/// The probe's pages, byte offsets: on a `fresh` image `count` random pages of its first GiB
/// written through `node` (the loop device: the writes go through the layer, and the file
/// system made next overwrites what it uses of them); on a kept one, `count` random pages of
/// its data extents (none written), or its first `count` pages if it holds no whole page of
/// data.
pub fn pages(image: &Path, node: &Path, fresh: bool, count: usize) -> Result<Vec<u64>, Why> {
    let size = std::fs::metadata(image)
        .map_err(|e| format!("cannot read {}: {e}", image.display()))?
        .len();
    let mut rng = rand::thread_rng();
    if fresh {
        let span = (size.min(1 << 30) / PAGE).max(1);
        let offsets: Vec<u64> = (0..count).map(|_| rng.gen_range(0..span) * PAGE).collect();
        write(node, &offsets)?;
        return Ok(offsets);
    }
    let extents = data_extents(image, 4096);
    let total: u64 = extents.iter().map(|(a, b)| (b - a) / PAGE).sum();
    if total == 0 {
        return Ok((0..count as u64).map(|p| p * PAGE).collect());
    }
    let pick = |n: u64| {
        let mut n = n;
        for (start, end) in &extents {
            let here = (end - start) / PAGE;
            if n < here {
                return start + n * PAGE;
            }
            n -= here;
        }
        extents[0].0
    };
    Ok((0..count).map(|_| pick(rng.gen_range(0..total))).collect())
}

/// `node` opened with direct IO, for writing or for reading.
fn open_direct(node: &Path, write: bool) -> Result<std::fs::File, Why> {
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(libc::O_DIRECT)
        .open(node)
        .map_err(|e| format!("cannot open {} for direct IO: {e}", node.display()))
}

/// Writes a page of random bytes at each offset of `node` with direct IO, then syncs.
fn write(node: &Path, offsets: &[u64]) -> Result<(), Why> {
    let file = open_direct(node, true)?;
    let mut page = Page([0; 4096]);
    rand::thread_rng().fill(&mut page.0[..]);
    for &offset in offsets {
        file.write_at(&page.0, offset)
            .map_err(|e| format!("cannot write {}: {e}", node.display()))?;
    }
    file.sync_all()
        .map_err(|e| format!("cannot sync {}: {e}", node.display()))
}

/// Up to `most` data extents of `file` (start, end), whole pages only, from SEEK_DATA and
/// SEEK_HOLE.
fn data_extents(file: &Path, most: usize) -> Vec<(u64, u64)> {
    let Ok(f) = std::fs::File::open(file) else {
        return Vec::new();
    };
    let fd = f.as_raw_fd();
    let mut extents = Vec::new();
    let mut at: libc::off_t = 0;
    while extents.len() < most {
        // SAFETY: lseek on a descriptor this function owns; no memory is passed.
        let start = unsafe { libc::lseek(fd, at, libc::SEEK_DATA) };
        if start < 0 {
            break;
        }
        // SAFETY: as above.
        let end = unsafe { libc::lseek(fd, start, libc::SEEK_HOLE) };
        if end <= start {
            break;
        }
        let first = (start as u64).div_ceil(PAGE) * PAGE;
        let last = end as u64 / PAGE * PAGE;
        if last > first {
            extents.push((first, last));
        }
        at = end;
    }
    extents
}

/// The median of direct 4 KiB reads at queue depth 1 from `node`, one at each offset, µs.
pub fn qd1_read_us(node: &Path, offsets: &[u64]) -> Result<f64, Why> {
    let file = open_direct(node, false)?;
    let mut page = Page([0; 4096]);
    let mut took = Vec::with_capacity(offsets.len());
    for &offset in offsets {
        let start = Instant::now();
        file.read_at(&mut page.0, offset)
            .map_err(|e| format!("cannot read {}: {e}", node.display()))?;
        took.push(start.elapsed().as_secs_f64() * 1e6);
    }
    took.sort_by(f64::total_cmp);
    Ok(took.get(took.len() / 2).copied().unwrap_or(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sparse file's data extents are where it was written, in whole pages.
    #[test]
    fn data_extents_are_where_a_sparse_file_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(64 << 20).unwrap();
        file.write_at(&[7u8; 8192], 16 << 20).unwrap();
        file.sync_all().unwrap();
        let extents = data_extents(&path, 16);
        assert_eq!(extents.len(), 1, "{extents:?}");
        let (start, end) = extents[0];
        assert!(start <= 16 << 20 && end >= (16 << 20) + 8192, "{extents:?}");
        assert!(end - start < 4 << 20, "{extents:?}");
        let none = dir.path().join("holes");
        std::fs::File::create(&none)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        assert!(data_extents(&none, 16).is_empty());
    }
}
