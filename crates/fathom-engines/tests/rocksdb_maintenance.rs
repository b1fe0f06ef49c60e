//! RocksDB's part of db_bench's flush_mt_l0 (compact0 empties L0 into the level below) and
//! the per-step options fillseq opens with, on the real engine.

use fathom_api::family::Engine;
use fathom_api::kv::{KvEngine, SessionOptions};
use fathom_api::target::Maintenance;
use fathom_engines::EngineConfig;
use std::path::Path;

fn open(dir: &Path, options: &str) -> Box<dyn KvEngine> {
    let entry = fathom_engines::find("rocksdb").unwrap();
    let config = EngineConfig {
        data_dir: dir.to_path_buf(),
        options: options.into(),
        ..Default::default()
    };
    match fathom_engines::open(entry, &config).unwrap_or_else(|e| panic!("open: {e:#}")) {
        Engine::Kv(e) => e,
        _ => unreachable!("rocksdb is a kv engine"),
    }
}

fn write(engine: &dyn KvEngine, from: u32, to: u32) {
    let mut s = engine.session(SessionOptions::default()).unwrap();
    for i in from..to {
        s.put(format!("key{i:06}").as_bytes(), &[b'v'; 100])
            .unwrap();
    }
}

fn l0_files(engine: &dyn KvEngine) -> f64 {
    engine.counters()["l0_files"]
}

#[test]
fn compact0_moves_every_l0_file_into_the_level_below() {
    let dir = tempfile::tempdir().unwrap();
    {
        // The first data goes below L0 (one L0 file is enough to start a compaction).
        let engine = open(dir.path(), "level0_file_num_compaction_trigger=1");
        write(&*engine, 0, 5_000);
        engine.maintain(Maintenance::Flush).unwrap();
        engine.maintain(Maintenance::WaitForCompaction).unwrap();
        assert_eq!(l0_files(&*engine), 0.0);
    }
    let engine = open(dir.path(), "disable_auto_compactions=true");
    for part in 0..3 {
        write(&*engine, part * 2_000, part * 2_000 + 3_000);
        engine.maintain(Maintenance::Flush).unwrap();
    }
    assert_eq!(l0_files(&*engine), 3.0, "three flushes, no compaction");
    engine.maintain(Maintenance::CompactLevel0).unwrap();
    assert_eq!(l0_files(&*engine), 0.0, "compact0 left files in L0");
    let mut s = engine.session(SessionOptions::default()).unwrap();
    let mut out = Vec::new();
    for i in [0, 4_999, 6_999] {
        assert!(s.read(format!("key{i:06}").as_bytes(), &mut out).unwrap());
    }
    // Nothing in L0 any more: a second compact0 has nothing to do and says so by succeeding.
    engine.maintain(Maintenance::CompactLevel0).unwrap();
}

#[test]
fn fillseqs_own_options_open_a_vector_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(
        dir.path(),
        "memtable_factory=vector;allow_concurrent_memtable_write=false",
    );
    let used = engine.effective_options();
    assert!(
        used["CFOptions.memtable_factory"].contains("Vector"),
        "{:?}",
        used.get("CFOptions.memtable_factory")
    );
    assert_eq!(used["DBOptions.allow_concurrent_memtable_write"], "false");
    write(&*engine, 0, 1_000);
}
