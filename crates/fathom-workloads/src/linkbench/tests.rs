//! LinkBench on real engines of both families: the load writes the documented graph, the
//! request mix runs every operation, and the consistency check passes — and fails when a
//! count row is made wrong; and, on a fake store, what the check does with drifted counts.

use super::*;
use crate::testing::{assert_refused, build_from, drive, open};
use fathom_api::family::Engine;
use fathom_api::pace::Spacing;
use fathom_api::step::{Client, LatencyFrom};

const SMALL: &[&str] = &["maxid1=3001", "requests=1500", "seed=11"];

/// Where a request step records the kind named `name`.
fn kind(name: &str) -> usize {
    kinds::REQUEST
        .iter()
        .position(|k| k.name() == name)
        .unwrap()
}

/// Links the loader writes for ids [1, 3001): the out-degree split across 2 types as the
/// original splits it.
fn expected_links() -> i64 {
    let d = degree::Degrees::new(1, 3001).unwrap();
    (1..3001)
        .map(|id| {
            let t = d.total(id);
            degree::per_type(t, 0, 2, false) + degree::per_type(t, 1, 2, false)
        })
        .sum()
}

fn run_on(engine: &Engine) -> Vec<Vec<usize>> {
    let w = build_from(build, SMALL, 2).unwrap();
    let done = drive(w.as_ref(), engine.db(), 0);
    // load, request, check.
    assert_eq!(done.len(), 3);
    let load = &done[0];
    assert_eq!(load[0], 3, "3000 nodes in batches of 1024");
    let request = &done[1];
    assert_eq!(
        request.iter().sum::<usize>(),
        3000,
        "1500 requests per client"
    );
    for op in [
        "GET_LINKS_LIST",
        "GET_NODE",
        "ADD_LINK",
        "UPDATE_LINK",
        "UPDATE_NODE",
    ] {
        assert!(request[kind(op)] > 0, "no {op}");
    }
    // GET_LINKS_LIST is about half the mix.
    let lists = request[kind("GET_LINKS_LIST")] as f64 / 3000.0;
    assert!((0.45..0.57).contains(&lists), "{lists}");
    assert_eq!(
        done[2],
        vec![1, 0],
        "the check ran and passed, no count drifted"
    );
    done
}

#[test]
fn on_sqlite_sql_the_graph_loads_the_mix_runs_and_counts_stay_right() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open("sqlite-sql", dir.path(), &[]);
    run_on(&engine);
    let Engine::Sql(sql) = &engine else {
        panic!("sqlite-sql is a sql engine")
    };
    let mut conn = sql.connect().unwrap();
    let mut one = |q: &str| {
        let s = conn.prepare(q).unwrap();
        conn.scalar(s, &[]).unwrap().unwrap()
    };
    // The load's links, plus what ADD_LINK and UPDATE_LINK inserted.
    let links = one("SELECT count(*) FROM linktable");
    assert!(links >= expected_links(), "{links} < {}", expected_links());
    assert!(
        one("SELECT count(*) FROM linktable WHERE visibility = 0") > 0,
        "DELETE_LINK hides"
    );
    // A wrong count row fails the check.
    let mut bad = sql.connect().unwrap();
    bad.exec(
        "UPDATE counttable SET count = count + 1 WHERE rowid = (SELECT min(rowid) FROM counttable)",
    )
    .unwrap();
    let w = build_from(build, &["maxid1=3001", "steps=check"], 1).unwrap();
    let mut check = w
        .step(engine.db(), 0, &Default::default())
        .unwrap()
        .clients()
        .unwrap()
        .remove(0);
    let e = check.next().unwrap_err().to_string();
    assert!(e.contains("consistency check failed: 1 of"), "{e}");
}

#[test]
fn on_kv_engines_counts_stay_right_through_transactions() {
    for (name, settings) in [
        ("rocksdb", &[("transactions", "optimistic")][..]),
        ("wiredtiger", &[][..]),
        ("lmdb", &[][..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(name, dir.path(), settings);
        let done = run_on(&engine);
        assert!(done[0][1] > 0, "{name}: link batches");
    }
}

/// Each original quirk `fix` names is corrected, and only the one named.
#[test]
fn each_fix_corrects_its_own_quirk() {
    // What is corrected: (motif length, type split, updateLink, write blend).
    let corrected = |fix: &str| {
        let p: LinkBenchParams = crate::testing::params(&["motif_length=64", fix])
            .unwrap()
            .read("linkbench")
            .unwrap();
        let g = graph(&p).unwrap();
        let s = request_shape(&p, &g).unwrap();
        // The original blends link writes by read_uncorr_blend (99.5), the fix by its own (95).
        [
            g.motif_bytes == 64,
            g.fixed_split,
            s.fixed_update,
            s.link_writes.blend == 0.95,
        ]
    };
    assert_eq!(corrected("fix="), [false; 4]);
    assert_eq!(corrected("fix=motif_length"), [true, false, false, false]);
    assert_eq!(corrected("fix=type_split"), [false, true, false, false]);
    assert_eq!(corrected("fix=update_link"), [false, false, true, false]);
    assert_eq!(corrected("fix=write_blend"), [false, false, false, true]);
    assert_eq!(
        corrected("fix=update_link, write_blend,type_split,motif_length"),
        [true; 4]
    );
}

#[test]
fn bad_parameters_say_what_is_expected() {
    assert_refused(
        build,
        &[
            (
                &["fix=everything"],
                "`everything` is not update_link, write_blend",
            ),
            (&["getnode=50"], "sum to"),
            (&["maxid1=1"], "startid1 < maxid1"),
            (&["read_shape=0"], "read_shape"),
            (&["steps=load,nap"], "`nap` is not load, request or check"),
            (&["requestrate=-5"], "requestrate"),
            (&["statements=binary"], "original, text or prepared"),
        ],
    );
}

#[test]
fn requestrate_throttles_the_request_steps_only() {
    let w = build_from(build, &["requestrate=50", "request_steps=2"], 3).unwrap();
    let rated: Vec<_> = w
        .steps()
        .iter()
        .map(|s| (s.name.as_str(), s.open_loop))
        .collect();
    assert_eq!(rated[0], ("load", None));
    for (name, open) in &rated[1..3] {
        let o = open.unwrap_or_else(|| panic!("{name} is throttled"));
        assert_eq!(o.ops_per_sec, 150.0, "50/s for each of 3 clients");
        assert_eq!((o.spacing, o.shared), (Spacing::Poisson, false));
        assert_eq!(o.latency_from, LatencyFrom::Start);
    }
    assert_eq!(rated[3], ("check", None));
    let flat_out = build_from(build, &[], 3).unwrap();
    assert!(flat_out.steps().iter().all(|s| s.open_loop.is_none()));
}

/// Runs a requester for 400 requests (the driver counts failed ones too, as LinkBench's
/// requestsDone) or until it fails; returns its failed requests and its error.
fn failures_of(w: &dyn Workload, engine: &Engine) -> (usize, Option<String>) {
    let step = w.step(engine.db(), 0, &Default::default()).unwrap();
    let mut requester = step.clients().unwrap().remove(0);
    let mut failed = 0;
    for _ in 0..400 {
        match requester.next() {
            Ok(Some(done)) => failed += usize::from(done.failed),
            Ok(None) => panic!("a requester without `requests` goes on"),
            Err(e) => return (failed, Some(format!("{e:#}"))),
        }
    }
    (failed, None)
}

/// A request that fails (its table dropped under it) is counted, not timed, the store is
/// reopened and the requester goes on, as LinkBench's does, until more than
/// `max_failed_requests` failed; -1 tolerates any number.
#[test]
fn failed_requests_are_tolerated_up_to_max_failed_requests() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open("sqlite-sql", dir.path(), &[]);
    let load = build_from(build, &["maxid1=301", "seed=3", "steps=load"], 1).unwrap();
    drive(load.as_ref(), engine.db(), 0);
    let Engine::Sql(sql) = &engine else {
        panic!("sqlite-sql is a sql engine")
    };
    sql.connect()
        .unwrap()
        .exec("DROP TABLE counttable")
        .unwrap();
    let requests = |max: &str| {
        let max = format!("max_failed_requests={max}");
        let p = ["maxid1=301", "seed=3", "steps=request", &max];
        build_from(build, &p, 1).unwrap()
    };
    let (failed, e) = failures_of(requests("5").as_ref(), &engine);
    let e = e.expect("the sixth failure ends the requester");
    assert_eq!(failed, 5);
    assert!(
        e.contains("6 failed requests") && e.contains("max_failed_requests=5"),
        "{e}"
    );
    assert!(
        e.contains("counttable"),
        "the engine's message is kept: {e}"
    );
    let (failed, e) = failures_of(requests("-1").as_ref(), &engine);
    assert_eq!(e, None, "-1 tolerates any number");
    assert!(failed > 20, "count and link writes fail: {failed} of 400");
}

/// A store whose check finds `wrong` of 10 pairs drifted, with or without transactions: the
/// other operations are never called by the check.
struct Drifted {
    wrong: u64,
    may_drift: bool,
}

impl Store for Drifted {
    fn reset_nodes(&mut self, _: i64) -> anyhow::Result<()> {
        unreachable!()
    }
    fn add_nodes(&mut self, _: &[model::Node]) -> anyhow::Result<Vec<i64>> {
        unreachable!()
    }
    fn add_links_bulk(&mut self, _: &[model::Link]) -> anyhow::Result<()> {
        unreachable!()
    }
    fn add_counts_bulk(&mut self, _: &[model::Count]) -> anyhow::Result<()> {
        unreachable!()
    }
    fn add_link(&mut self, _: &model::Link) -> anyhow::Result<bool> {
        unreachable!()
    }
    fn delete_link(&mut self, _: i64, _: i64, _: i64) -> anyhow::Result<bool> {
        unreachable!()
    }
    fn update_link(&mut self, _: &model::Link) -> anyhow::Result<bool> {
        unreachable!()
    }
    fn count_links(&mut self, _: i64, _: i64) -> anyhow::Result<i64> {
        unreachable!()
    }
    fn multiget_links(&mut self, _: i64, _: i64, _: &[i64]) -> anyhow::Result<u64> {
        unreachable!()
    }
    fn get_link_list(&mut self, _: &model::ListPage) -> anyhow::Result<(i64, Option<i64>)> {
        unreachable!()
    }
    fn add_node(&mut self, _: &model::Node) -> anyhow::Result<Option<i64>> {
        unreachable!()
    }
    fn update_node(&mut self, _: &model::Node) -> anyhow::Result<bool> {
        unreachable!()
    }
    fn delete_node(&mut self, _: i64, _: i64) -> anyhow::Result<bool> {
        unreachable!()
    }
    fn get_node(&mut self, _: i64, _: i64) -> anyhow::Result<Option<usize>> {
        unreachable!()
    }
    fn check_counts(&mut self) -> anyhow::Result<(u64, u64)> {
        Ok((self.wrong, 10))
    }
    fn counts_may_drift(&self) -> bool {
        self.may_drift
    }
}

/// Without transactions the check records each drifted pair as a failed DRIFTED_COUNT and
/// passes; with them a drifted count fails the step.
#[test]
fn the_check_reports_drift_without_transactions_and_fails_with_them() {
    let check = |wrong, may_drift| Check::new(Box::new(Drifted { wrong, may_drift }));
    let mut c = check(3, true);
    let mut seen = Vec::new();
    while let Some(d) = c.next().unwrap() {
        seen.push((d.is(LinkBenchKind::DriftedCount), d.failed));
    }
    assert_eq!(
        seen,
        [(false, false), (true, true), (true, true), (true, true)]
    );
    assert_eq!(LinkBenchKind::DriftedCount.name(), "DRIFTED_COUNT");
    let e = check(3, false).next().unwrap_err().to_string();
    assert!(e.contains("3 of 10"), "{e}");
    let mut clean = check(0, true);
    assert_eq!(clean.next().unwrap().map(|d| d.failed), Some(false));
    assert!(clean.next().unwrap().is_none());
}
