//! The insert benchmark's steps and parameters, and its runs on real engines of both
//! families: the tables stay the same size, deletes take the oldest rows, and on kv engines
//! every row has exactly its index entries.

use super::*;
use crate::testing::{assert_refused, build_from, drive};
use fathom_api::step::Pace;

fn open(name: &str, dir: &std::path::Path) -> fathom_api::family::Engine {
    crate::testing::open(name, dir, &[])
}

#[test]
fn the_step_sequence_of_ra_sh() {
    let w = build_from(build, &["rows=1000", "write_rows=500", "query_secs=5s"], 2).unwrap();
    let names: Vec<_> = w.steps().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "l.i0", "l.x", "l.i1", "l.i2", "cleanup", "qr100", "qp100", "qr500", "qp500", "qr1000",
            "qp1000"
        ]
    );
    let s = w.steps();
    assert_eq!(s[0].clients, 2);
    assert_eq!(s[4].clients, 1, "cleanup is one client");
    assert_eq!(
        s[9].background,
        Some(Pace::RowsPerSec(2000.0)),
        "1000/s per client"
    );
    assert_eq!(s[0].duration, None, "load steps end on their rows");
    // The step objects, on the null engine: a deleter per client in l.i1; a query step lasts
    // until its inserters have written query_secs × rate (and their deleters followed).
    let dir = tempfile::tempdir().unwrap();
    let engine = open("null", dir.path());
    let crew = |i: usize| {
        w.step(engine.db(), i, &Default::default())
            .unwrap()
            .crew()
            .unwrap()
    };
    assert_eq!((crew(0).helpers.len(), crew(2).helpers.len()), (0, 2));
    let query = crew(9);
    assert!(s[9].duration.is_none() && query.background.len() == 4);
    assert!(query.background.iter().all(|b| b.ends_step));
}

#[test]
fn bad_parameters_say_what_is_expected() {
    assert_refused(
        build,
        &[
            (&["steps=l.i0,qz100"], "unknown step `qz100`"),
            (&["steps=qr"], "needs a rate"),
            (&["secondary_indexes=4"], "expected 0 to 3"),
            (&["index_style=new"], "current or classic"),
            (
                &["secondary_indexes=0", "steps=qr100"],
                "secondary_indexes is 0",
            ),
            (&["data_length_min=30"], "min <= max"),
        ],
    );
}

const SMALL: &[&str] = &[
    "rows=3000",
    "write_rows=1000",
    "lx_rows=100",
    "settle=0s",
    "steps=l.i0,l.x,l.i1,l.i2,cleanup,qr1000,qp1000",
    "seed=7",
];

/// Where a kind named `name` is recorded: every step records every kind, in their order.
fn kind(name: &str) -> usize {
    use fathom_api::kind::Kind;
    IbenchKind::ALL
        .iter()
        .position(|k| k.op().name == name)
        .unwrap()
}

/// A scratch SQLite through SQL: its directory (keep it while the engine is open) and engine.
fn sqlite_sql() -> (tempfile::TempDir, fathom_api::family::Engine) {
    crate::testing::scratch("sqlite-sql", &[])
}

/// The sql side of `engine`.
fn sql_of(engine: &fathom_api::family::Engine) -> &dyn fathom_api::sql::SqlEngine {
    let fathom_api::family::Engine::Sql(sql) = engine else {
        panic!("a sql engine")
    };
    sql.as_ref()
}

#[test]
fn on_sqlite_sql_the_tables_stay_the_same_size_and_lose_their_oldest_rows() {
    let (_dir, engine) = sqlite_sql();
    let sql = sql_of(&engine);
    let w = build_from(build, SMALL, 2).unwrap();
    let done = drive(w.as_ref(), engine.db(), 200);
    // l.i1: 800 rows in batches of 50 → 16 inserts over 2 clients, and their deleters' 16.
    assert_eq!((done[2][kind("insert")], done[2][kind("delete")]), (16, 16));
    // l.x: one CREATE INDEX per index on each of the 2 tables.
    assert_eq!(done[1][kind("create_index")], 6);
    assert!(done[5][kind("market")] + done[5][kind("register")] + done[5][kind("pdc")] > 0);
    assert_eq!(done[6][kind("point")], 400);
    let mut conn = sql.connect().unwrap();
    for t in [1, 2] {
        let mut one = |q: &str| {
            let s = conn.prepare(&q.replace("{t}", &t.to_string())).unwrap();
            conn.scalar(s, &[]).unwrap().unwrap()
        };
        // 1500 loaded + 50 by l.x per table; every later insert had its delete, but the
        // background writer may stop between an insert and its delete.
        let count = one("SELECT count(*) FROM pi{t}");
        assert!((1550..=1550 + 50).contains(&count), "pi{t}: {count} rows");
        // l.i1 and l.i2 deleted 500 of each table's oldest rows, the query steps more.
        assert!(one("SELECT min(transactionid) FROM pi{t}") > 500);
        let indexes =
            one("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'pi{t}'");
        assert_eq!(indexes, 3);
    }
}

/// iq.sh's query step ends when each client's inserter has written query_secs × rate rows;
/// each deleter follows its inserter to the last batch, so the tables keep their size.
#[test]
fn a_query_step_lasts_until_the_inserters_have_written_their_rows() {
    let (_dir, engine) = sqlite_sql();
    let sql = sql_of(&engine);
    let w = build_from(
        build,
        &["rows=400", "steps=l.i0,qp100", "query_secs=1s", "seed=3"],
        2,
    )
    .unwrap();
    let done = drive(w.as_ref(), engine.db(), 1000);
    // 100 rows per client in batches of 50: two rounds of background writes, two of queries.
    assert_eq!(done[1][kind("point")], 4);
    let mut conn = sql.connect().unwrap();
    for t in [1, 2] {
        let s = conn
            .prepare(&format!("SELECT count(*) FROM pi{t}"))
            .unwrap();
        let count = conn.scalar(s, &[]).unwrap().unwrap();
        assert_eq!(count, 200, "pi{t}: as many rows deleted as inserted");
    }
}

/// Every row of table `t` as (id, [index keys it should have]), and every index entry.
fn rows_and_index_entries(
    s: &mut dyn fathom_api::kv::KvSession,
    shape: &Shape,
    t: u32,
) -> (
    std::collections::BTreeSet<Vec<u8>>,
    std::collections::BTreeSet<Vec<u8>>,
    usize,
) {
    use crate::rows::{decode_row, index_id, key_int, Col as V, Key};
    use fathom_api::kv::{Direction, Seek};
    type Keys = std::collections::BTreeSet<Vec<u8>>;
    let (mut expected, mut found, mut rows) = (Keys::new(), Keys::new(), 0);
    let expected_ref = &mut expected;
    let start = Key::default().start(index_id(t, 0)).as_slice().to_vec();
    s.scan(
        Seek::new(&start, Direction::Forward, usize::MAX),
        &mut |k, v| {
            if !k.starts_with(&index_id(t, 0).to_be_bytes()) {
                return false;
            }
            rows += 1;
            let id = key_int(k, 4).unwrap();
            let cols = decode_row(v, &[true, true, true, true, true, false]).unwrap();
            let int = |i: usize| match cols[i] {
                V::Int(x) => x,
                V::Bytes(_) => panic!("column {i} is an integer"),
            };
            let row = gen::Row {
                cashregisterid: int(1),
                customerid: int(2),
                productid: int(3),
                price: int(4),
            };
            for (i, ix) in shape.indexes.iter().enumerate() {
                let mut key = Key::default();
                key.start(index_id(t, i as u32 + 1));
                for &c in ix.cols {
                    key.int(row.col(c, int(0)));
                }
                expected_ref.insert(key.int(id).as_slice().to_vec());
            }
            true
        },
    )
    .unwrap();
    for i in 1..=shape.indexes.len() as u32 {
        let start = Key::default().start(index_id(t, i)).as_slice().to_vec();
        s.scan(
            Seek::new(&start, Direction::Forward, usize::MAX),
            &mut |k, _| {
                if !k.starts_with(&index_id(t, i).to_be_bytes()) {
                    return false;
                }
                found.insert(k.to_vec());
                true
            },
        )
        .unwrap();
    }
    (expected, found, rows)
}

/// Runs the small sequence with `extra` on kv engine `name`: the database (and its directory,
/// kept while it is open), the kinds done per step and the rows' shape.
fn on_kv(
    name: &str,
    extra: &str,
    rounds: usize,
) -> (
    tempfile::TempDir,
    fathom_api::family::Engine,
    Vec<Vec<usize>>,
    Shape,
) {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(name, dir.path());
    let mut pairs = SMALL.to_vec();
    pairs.push(extra);
    let w = build_from(build, &pairs, 2).unwrap();
    let done = drive(w.as_ref(), engine.db(), rounds);
    let p = crate::testing::params(&pairs).unwrap();
    (
        dir,
        engine,
        done,
        shape(&p.read("ibench").unwrap()).unwrap(),
    )
}

fn session(engine: &fathom_api::family::Engine) -> Box<dyn fathom_api::kv::KvSession + '_> {
    let fathom_api::family::Engine::Kv(kv) = engine else {
        panic!("a kv engine")
    };
    kv.session(Default::default()).unwrap()
}

#[test]
fn on_kv_engines_every_row_has_exactly_its_index_entries() {
    for name in ["rocksdb", "wiredtiger"] {
        let (_dir, engine, done, shape) = on_kv(name, "index_style=classic", 200);
        assert_eq!(
            done[1][kind("create_index")],
            6,
            "{name}: one pass per index"
        );
        let mut s = session(&engine);
        for t in [1, 2] {
            let (expected, found, rows) = rows_and_index_entries(s.as_mut(), &shape, t);
            assert!((1550..=1600).contains(&rows), "{name} pi{t}: {rows} rows");
            assert_eq!(expected.len(), rows * 3);
            assert_eq!(
                found, expected,
                "{name} pi{t}: index entries match the rows"
            );
        }
    }
}

#[test]
fn one_shared_table_holds_every_clients_rows() {
    let (_dir, engine, done, shape) = on_kv("lmdb", "shared_table=on", 100);
    assert_eq!(done[1][kind("create_index")], 3, "one table to index");
    let mut s = session(&engine);
    let (expected, found, rows) = rows_and_index_entries(s.as_mut(), &shape, 1);
    assert!((3100..=3150).contains(&rows), "{rows} rows");
    assert_eq!(found, expected);
    let (_, _, none) = rows_and_index_entries(s.as_mut(), &shape, 2);
    assert_eq!(none, 0, "no second table");
}
