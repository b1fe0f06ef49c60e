//! db_bench's `compact0`: the files of L0 compacted into the next level that holds data, through
//! RocksDB's CompactFiles, whichever build runs it (`Lsm`: the bundled one, or a library).

use std::ffi::CString;

/// What one attempt finds to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// L0 holds no files.
    NoFiles,
    /// No level below L0 holds data, so there is nowhere to compact into.
    NothingBeyond,
    /// These L0 files go to `to`.
    Compact { files: Vec<String>, to: i32 },
}

/// Chooses as db_bench's CompactLevelHelper(0) does: every L0 file, into the shallowest
/// non-empty level below (with dynamic level sizes that need not be L1).
pub fn plan(files: &[(i32, String)]) -> Plan {
    let l0: Vec<String> = files
        .iter()
        .filter(|(level, _)| *level == 0)
        .map(|(_, name)| name.clone())
        .collect();
    let next = files.iter().map(|(l, _)| *l).filter(|l| *l > 0).min();
    match (l0.is_empty(), next) {
        (true, _) => Plan::NoFiles,
        (false, None) => Plan::NothingBeyond,
        (false, Some(to)) => Plan::Compact { files: l0, to },
    }
}

/// Attempts db_bench makes before giving up: it retries after a compaction wait when
/// CompactFiles fails (a background compaction took one of the files).
const ATTEMPTS: usize = 10;

/// What compact0 needs of an open RocksDB, whichever way it is reached.
pub trait Lsm {
    /// Every live table file's level and name.
    fn files(&self) -> anyhow::Result<Vec<(i32, String)>>;
    /// CompactFiles of `files` into level `to`, output files of `target_file_size`.
    fn compact_files(&self, files: &[String], to: i32, target_file_size: u64)
        -> Result<(), String>;
    /// Waits until no flush or compaction is pending or running.
    fn wait(&self) -> anyhow::Result<()>;
}

/// Compacts L0 into the next level, as db_bench's `compact0`.
pub fn level0(db: &dyn Lsm, target_file_size: u64) -> anyhow::Result<()> {
    let mut last_error = String::new();
    for _ in 0..ATTEMPTS {
        let Plan::Compact { files, to } = plan(&db.files()?) else {
            return Ok(());
        };
        match db.compact_files(&files, to, target_file_size) {
            Ok(()) => return Ok(()),
            Err(e) => last_error = e,
        }
        db.wait()?;
    }
    anyhow::bail!("compact0: CompactFiles failed {ATTEMPTS} times, last: {last_error}")
}

/// File names as C strings.
pub fn c_names(files: &[String]) -> Result<Vec<CString>, String> {
    files
        .iter()
        .map(|f| CString::new(f.as_str()).map_err(|e| e.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(levels: &[i32]) -> Vec<(i32, String)> {
        levels
            .iter()
            .enumerate()
            .map(|(i, l)| (*l, format!("/{i}.sst")))
            .collect()
    }

    #[test]
    fn l0_goes_to_the_shallowest_level_with_data() {
        let plan = plan(&files(&[0, 6, 0, 4, 5]));
        assert_eq!(
            plan,
            Plan::Compact {
                files: vec!["/0.sst".into(), "/2.sst".into()],
                to: 4
            }
        );
    }

    #[test]
    fn nothing_to_do_without_l0_files_or_a_level_below() {
        assert_eq!(plan(&files(&[6, 6])), Plan::NoFiles);
        assert_eq!(plan(&files(&[0, 0])), Plan::NothingBeyond);
    }
}
