//! One conformance suite for every kv engine: the same checks, run against each kv engine in
//! the registry (sql engines have `sql_conformance.rs`). A new engine gets the suite by adding one `conformance!` line below (and a test
//! fails until it does).

use fathom_api::family::{Engine, Family};
use fathom_api::kv::{BatchOp, Direction, KvEngine, KvSession, Seek, SessionOptions, TxnEnd};
use fathom_api::target::Maintenance;
use fathom_engines::EngineConfig;
use std::path::Path;

mod common;

fn open(name: &str, dir: &Path, settings: &[(&str, &str)]) -> Box<dyn KvEngine> {
    let entry = fathom_engines::find(name).unwrap();
    let settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let config = EngineConfig {
        data_dir: dir.to_path_buf(),
        settings,
        ..Default::default()
    };
    match fathom_engines::open(entry, &config).unwrap_or_else(|e| panic!("{name}: open: {e:#}")) {
        Engine::Kv(e) => e,
        _ => panic!("{name} is not a kv engine"),
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32, round: u32) -> Vec<u8> {
    format!("value-{i}-{round}-{}", "x".repeat((i % 7) as usize * 10)).into_bytes()
}

fn scan_keys(s: &mut dyn KvSession, start: &[u8], d: Direction, limit: usize) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    s.scan(Seek::new(start, d, limit), &mut |k, _| {
        keys.push(k.to_vec());
        true
    })
    .unwrap();
    keys
}

fn check_engine(name: &str, settings: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(name, dir.path(), settings);
    assert!(
        !engine.version().is_empty() && engine.version() != "unknown",
        "{name}: version"
    );
    let mut s = engine.session(SessionOptions::default()).unwrap();
    check_points(name, s.as_mut());
    check_scans(name, s.as_mut());
    check_batches(name, s.as_mut());
    check_transactions(name, s.as_mut());
    check_concurrency(name, engine.as_ref(), s.as_mut());
    check_conflict(name, engine.as_ref(), s.as_mut());
    check_maintenance(name, engine.as_ref());
    drop(s);
    drop(engine);
    check_reopen(name, open(name, dir.path(), settings).as_ref());
}

/// An empty database, then point writes and reads, values checked byte for byte.
fn check_points(name: &str, s: &mut dyn KvSession) {
    let mut buf = Vec::new();
    // An empty database.
    assert_eq!(s.get(&key(1)).unwrap(), None, "{name}: get on empty");
    assert!(
        scan_keys(s, b"", Direction::Forward, 10).is_empty(),
        "{name}: scan on empty"
    );

    // Point writes and reads, values checked byte for byte.
    for i in (0..200).step_by(2) {
        s.put(&key(i), &value(i, 0)).unwrap();
    }
    for i in 0..200 {
        let expect = (i % 2 == 0).then(|| value(i, 0));
        assert_eq!(
            s.get(&key(i)).unwrap(),
            expect.as_ref().map(Vec::len),
            "{name}: get {i}"
        );
        assert_eq!(
            s.read(&key(i), &mut buf).unwrap(),
            expect.is_some(),
            "{name}: read {i}"
        );
        if let Some(v) = expect {
            assert_eq!(buf, v, "{name}: value of {i}");
        }
    }
    s.put(&key(10), &value(10, 1)).unwrap();
    assert!(s.read(&key(10), &mut buf).unwrap());
    assert_eq!(buf, value(10, 1), "{name}: overwrite");
    s.delete(&key(12)).unwrap();
    assert_eq!(s.get(&key(12)).unwrap(), None, "{name}: delete");
    s.delete(&key(13)).unwrap(); // deleting an absent key is not an error
    let (k10, k12, k13, k14) = (key(10), key(12), key(13), key(14));
    assert_eq!(
        s.multi_get(&[&k14, &k12, &k10, &k13]).unwrap(),
        (2, (value(10, 1).len() + value(14, 0).len()) as u64),
        "{name}: multi_get finds what is there, in any order"
    );
}

/// Ordered scans: bounds, limits, direction, early stop.
fn check_scans(name: &str, s: &mut dyn KvSession) {
    let (fwd, rev) = (Direction::Forward, Direction::Reverse);
    let back = Direction::PrevFromSeek;
    for (start, direction, limit, want, what) in [
        (8, fwd, 3, vec![8, 10, 14], "forward"),
        (9, fwd, 2, vec![10, 14], "forward from a gap"),
        (14, rev, 3, vec![14, 10, 8], "reverse"),
        (13, rev, 2, vec![10, 8], "reverse from a gap"),
        (14, back, 3, vec![14, 10, 8], "back from a seek"),
        (13, back, 3, vec![14, 10, 8], "back from a seek in a gap"),
        (0, back, 3, vec![0], "back from the first key"),
    ] {
        let want: Vec<Vec<u8>> = want.into_iter().map(key).collect();
        let got = scan_keys(s, &key(start), direction, limit);
        assert_eq!(got, want, "{name}: {what}");
    }
    assert!(
        scan_keys(s, &key(999), Direction::Forward, 5).is_empty(),
        "{name}: past the end"
    );
    assert!(
        scan_keys(s, b"a", Direction::Reverse, 5).is_empty(),
        "{name}: before the start"
    );
    assert!(
        scan_keys(s, &key(999), Direction::PrevFromSeek, 5).is_empty(),
        "{name}: a seek past the end finds nothing to step back from"
    );
    assert_eq!(
        scan_keys(s, &key(190), Direction::Forward, 100).len(),
        5,
        "{name}: limit beyond the end"
    );
    let mut seen = 0;
    let n = s
        .scan(Seek::new(&key(0), Direction::Forward, 50), &mut |_, _| {
            seen += 1;
            seen < 4
        })
        .unwrap();
    assert_eq!(
        (seen, n),
        (4, 4),
        "{name}: visit returning false stops the scan"
    );
    let mut pairs = Vec::new();
    s.scan(Seek::new(&key(20), Direction::Forward, 1), &mut |k, v| {
        pairs.push((k.to_vec(), v.to_vec()));
        true
    })
    .unwrap();
    assert_eq!(
        pairs,
        [(key(20), value(20, 0))],
        "{name}: scan yields values"
    );
}

/// Atomic batches.
fn check_batches(name: &str, s: &mut dyn KvSession) {
    let (k1, k2, v1) = (key(1001), key(1002), value(1001, 0));
    s.write_batch(&[
        BatchOp::Put(&k1, &v1),
        BatchOp::Put(&k2, &v1),
        BatchOp::Delete(&key(14)),
    ])
    .unwrap();
    assert_eq!(s.get(&k1).unwrap(), Some(v1.len()), "{name}: batch put");
    assert_eq!(s.get(&k2).unwrap(), Some(v1.len()), "{name}: batch put");
    assert_eq!(s.get(&key(14)).unwrap(), None, "{name}: batch delete");
}

/// Transactions: reads see their own writes; commit, rollback and a failing body.
fn check_transactions(name: &str, s: &mut dyn KvSession) {
    let mut buf = Vec::new();
    // Transactions: reads see the transaction's own writes; commit applies them together;
    // rollback, or an error in the body, applies none.
    let (t1, t2, t3) = (key(2001), key(2002), key(2003));
    let end = s
        .transaction(&mut |t| {
            t.put(&t1, b"one")?;
            t.put(&t2, b"two")?;
            t.delete(&key(16))?;
            let mut v = Vec::new();
            assert!(
                t.read(&t1, &mut v)?,
                "{name}: a transaction reads its own write"
            );
            assert_eq!(v, b"one");
            assert!(
                !t.read(&key(16), &mut v)?,
                "{name}: a transaction sees its own delete"
            );
            assert_eq!(
                t.get(&t2)?,
                Some(3),
                "{name}: a plain read sees its own write"
            );
            assert_eq!(t.get(&key(16))?, None, "{name}: and its own delete");
            let mut seen = Vec::new();
            t.scan(Seek::new(&key(15), Direction::Forward, 2), &mut |k, _| {
                seen.push(k.to_vec());
                true
            })?;
            assert_eq!(
                seen,
                [key(18), key(20)],
                "{name}: a scan skips its own delete"
            );
            Ok(TxnEnd::Commit)
        })
        .unwrap();
    assert_eq!(end, TxnEnd::Commit);
    assert!(
        s.read(&t2, &mut buf).unwrap() && buf == b"two",
        "{name}: committed write"
    );
    assert_eq!(s.get(&key(16)).unwrap(), None, "{name}: committed delete");
    let end = s
        .transaction(&mut |t| {
            t.put(&t3, b"three")?;
            t.delete(&t1)?;
            Ok(TxnEnd::Rollback)
        })
        .unwrap();
    assert_eq!(end, TxnEnd::Rollback);
    assert_eq!(s.get(&t3).unwrap(), None, "{name}: rolled-back put");
    assert!(s.get(&t1).unwrap().is_some(), "{name}: rolled-back delete");
    let failed = s.transaction(&mut |t| {
        t.put(&t3, b"three")?;
        anyhow::bail!("the body failed")
    });
    assert!(failed.is_err(), "{name}: a failing body is an error");
    assert_eq!(
        s.get(&t3).unwrap(),
        None,
        "{name}: a failing body writes nothing"
    );
    s.put(&key(2004), b"after").unwrap();
    assert!(
        s.get(&key(2004)).unwrap().is_some(),
        "{name}: the session works after a failed transaction"
    );
}

/// Concurrent sessions, each writing its own range.
fn check_concurrency(name: &str, engine: &dyn KvEngine, s: &mut dyn KvSession) {
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            scope.spawn(move || {
                let mut s = engine.session(SessionOptions::default()).unwrap();
                for i in 0..500 {
                    let k = key(10_000 + t * 1000 + i);
                    s.put(&k, &value(i, t)).unwrap();
                }
            });
        }
    });
    assert_eq!(
        scan_keys(s, &key(10_000), Direction::Forward, 5000).len(),
        2000,
        "{name}: concurrent writes"
    );
}

/// Two transactions write one key at once. An engine of one writer at a time holds the second
/// until the first ends, and both commit one after the other; an engine of concurrent writers
/// must fail one of them — with a failure its type says is retryable (`Failure::Retryable`),
/// because callers retry only that: a conflict the engine leaves unclassified ends a step.
fn check_conflict(name: &str, engine: &dyn KvEngine, s: &mut dyn KvSession) {
    use fathom_api::retry::{failure_of, Failure};
    use std::sync::mpsc;
    use std::time::Duration;
    let k = key(3001);
    let (written, go) = mpsc::channel::<()>();
    let (finished, second) = mpsc::channel::<anyhow::Result<TxnEnd>>();
    let (first, during) = std::thread::scope(|scope| {
        let k = &k;
        scope.spawn(move || {
            go.recv().unwrap();
            let mut other = engine.session(SessionOptions::default()).unwrap();
            let end = other.transaction(&mut |t| {
                t.put(k, b"second")?;
                Ok(TxnEnd::Commit)
            });
            finished.send(end).unwrap();
        });
        let mut during = None;
        let first = s.transaction(&mut |t| {
            t.put(k, b"first")?;
            written.send(()).unwrap();
            // An engine of one writer at a time keeps the second waiting: it ends after this.
            during = second.recv_timeout(Duration::from_secs(2)).ok();
            Ok(TxnEnd::Commit)
        });
        let during = during.map(|r| (r, true));
        (
            first,
            during.unwrap_or_else(|| (second.recv().unwrap(), false)),
        )
    });
    let (second, overlapped) = during;
    let loser = match (&first, &second) {
        (Ok(_), Ok(_)) => {
            assert!(
                !overlapped,
                "{name}: two transactions wrote one key at once and both committed"
            );
            return;
        }
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => e,
        (Err(a), Err(b)) => panic!("{name}: both conflicting transactions failed: {a:#}; {b:#}"),
    };
    assert_eq!(
        loser.chain().find_map(failure_of),
        Some(Failure::Retryable),
        "{name}: the conflict's loser must be retryable by its type: {loser:#}"
    );
    let winner = if first.is_ok() { "first" } else { "second" };
    assert!(
        s.read(&k, &mut Vec::new()).unwrap(),
        "{name}: the {winner} transaction's write is there"
    );
}

/// Statistics and maintenance.
fn check_maintenance(name: &str, engine: &dyn KvEngine) {
    engine.maintain(Maintenance::Flush).unwrap();
    engine.maintain(Maintenance::WaitForCompaction).unwrap();
    let counters = engine.counters();
    assert!(!counters.is_empty(), "{name}: no statistics");
    let stats = engine.step_stats(&Default::default(), &counters, 1.0);
    assert!(!stats.is_empty(), "{name}: no step statistics");
}

/// Everything written is still there after close and reopen.
fn check_reopen(name: &str, engine: &dyn KvEngine) {
    let mut s = engine.session(SessionOptions::default()).unwrap();
    let mut buf = Vec::new();
    assert!(s.read(&key(10), &mut buf).unwrap());
    assert_eq!(buf, value(10, 1), "{name}: after reopen");
    assert_eq!(
        s.get(&key(12)).unwrap(),
        None,
        "{name}: delete survives reopen"
    );
    assert_eq!(
        scan_keys(s.as_mut(), &key(10_000), Direction::Forward, 5000).len(),
        2000,
        "{name}: reopen"
    );
}

/// `conformance!(engine)`, or `conformance!(engine, setting = value, ...)` for the settings
/// the engine needs to offer everything the suite checks.
macro_rules! conformance {
    ($engine:ident $(, $key:ident = $value:ident)*) => {
        #[test]
        fn $engine() {
            check_engine(stringify!($engine), &[$((stringify!($key), stringify!($value))),*]);
        }
    };
}

conformance!(rocksdb, transactions = optimistic);

/// Debian's RocksDB release (7.8.3, `librocksdb7.8`, installed by `scripts/setup.sh --test`),
/// run through its C API (`--set library=PATH`): the same suite. `FATHOM_TEST_ROCKSDB_LIBRARY`
/// (a path, a colon and the version it holds) runs it on another release instead.
#[test]
fn rocksdb_from_a_library() {
    let (library, version) = test_library();
    let settings = [
        ("transactions", "optimistic"),
        ("library", library.as_str()),
    ];
    check_engine("rocksdb", &settings);
    let dir = tempfile::tempdir().unwrap();
    let engine = open("rocksdb", dir.path(), &settings);
    assert_eq!(engine.identity().version, version);
}

/// The library the C-API tests run on, and its version.
fn test_library() -> (String, String) {
    let given = std::env::var("FATHOM_TEST_ROCKSDB_LIBRARY")
        .unwrap_or_else(|_| "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8:7.8.3".into());
    let (path, version) = given
        .rsplit_once(':')
        .expect("FATHOM_TEST_ROCKSDB_LIBRARY is PATH:VERSION");
    (path.to_string(), version.to_string())
}

conformance!(wiredtiger);

/// A WiredTiger release built from PyPI's source (11.3.1, fetched by scripts/test.sh; another
/// with `FATHOM_TEST_WIREDTIGER_VERSION`), run through fathom's interface loaded at run time:
/// the same suite, and the release's own version.
#[test]
fn wiredtiger_fetched_release() {
    let version =
        std::env::var("FATHOM_TEST_WIREDTIGER_VERSION").unwrap_or_else(|_| "11.3.1".into());
    let settings = [("version", version.as_str())];
    check_engine("wiredtiger", &settings);
    let dir = tempfile::tempdir().unwrap();
    let engine = open("wiredtiger", dir.path(), &settings);
    assert_eq!(engine.identity().version, version);
    let library = &engine.effective_options()["fathom.library"];
    assert!(library.ends_with("libfathom_wt.so"), "{library}");
}
conformance!(lmdb);
conformance!(sqlite);

/// A transaction's plain reads see its snapshot, taken at its first read: a write another
/// session commits afterwards is not seen, by `get` or by `scan`, until the next transaction.
/// (LMDB and SQLite run one writing transaction at a time, so nothing commits meanwhile.)
fn check_snapshot_reads(name: &str, settings: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(name, dir.path(), settings);
    let mut s = engine.session(SessionOptions::default()).unwrap();
    let mut other = engine.session(SessionOptions::default()).unwrap();
    s.put(&key(1), b"before").unwrap();
    s.transaction(&mut |t| {
        assert_eq!(t.get(&key(1))?, Some(6));
        other.put(&key(2), b"meanwhile")?;
        assert_eq!(t.get(&key(2))?, None, "{name}: a later commit is not seen");
        let mut n = 0;
        t.scan(Seek::new(&key(0), Direction::Forward, 10), &mut |_, _| {
            n += 1;
            true
        })?;
        assert_eq!(n, 1, "{name}: nor scanned");
        Ok(TxnEnd::Commit)
    })
    .unwrap();
    s.transaction(&mut |t| {
        assert_eq!(
            t.get(&key(2))?,
            Some(9),
            "{name}: the next transaction sees it"
        );
        Ok(TxnEnd::Commit)
    })
    .unwrap();
}

#[test]
fn rocksdb_snapshot_reads() {
    check_snapshot_reads("rocksdb", &[("transactions", "optimistic")]);
}

#[test]
fn rocksdb_library_snapshot_reads() {
    let library = test_library().0;
    check_snapshot_reads(
        "rocksdb",
        &[
            ("transactions", "optimistic"),
            ("library", library.as_str()),
        ],
    );
}

#[test]
fn wiredtiger_snapshot_reads() {
    check_snapshot_reads("wiredtiger", &[]);
}

/// Every engine in the registry (but null, which stores nothing) has its line above.
#[test]
fn every_engine_is_covered() {
    common::every_engine_has_its_line(include_str!("conformance.rs"), Family::Kv, &["null"]);
}

/// Plain RocksDB (the default) is not an OptimisticTransactionDB: a transaction is refused
/// with an error that says which setting gives one.
#[test]
fn rocksdb_without_the_setting_refuses_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open("rocksdb", dir.path(), &[]);
    let mut s = engine.session(SessionOptions::default()).unwrap();
    let e = s
        .transaction(&mut |_| Ok(TxnEnd::Commit))
        .unwrap_err()
        .to_string();
    assert!(e.contains("transactions=optimistic"), "{e}");
}
