//! `fathom history` over runs made for the test: 30 nights of null-engine runs at an arrival
//! rate with 3% noise, at 1 and at 2 clients, 10% lower from night 20 on, and 30 without the
//! shift. The history splits the shifted setup's runs by client count and finds one change, at
//! night 20, in each series, and none in the steady one; its HTML trend page renders in
//! Chromium.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// Standard normal draws from a fixed seed (Box-Muller over a 64-bit LCG).
fn normals(n: usize) -> Vec<f64> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut u = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| (-2.0 * u().ln()).sqrt() * (2.0 * std::f64::consts::PI * u()).cos())
        .collect()
}

/// A load: clients, ops/s, and the thirty nights' standard normal draws.
type Load<'a> = (usize, f64, &'a [f64]);

/// Thirty nights of setup `name`, a run each night at each load of `loads` with 3% noise,
/// times `shift` from night 20 on.
fn series(results: &Path, name: &str, shift: f64, loads: &[Load]) {
    for night in 0..30 {
        let factor = if night >= 19 { shift } else { 1.0 };
        for (clients, rate, noise) in loads {
            let rate = rate * (1.0 + 0.03 * noise[night]) * factor;
            ok(&run(
                &format!(
                    "--engine null --name {name} --workload dbbench --param num_keys=1000 \
                     --param steps=fillseq,readrandom --duration 500ms --clients {clients} \
                     --rate {rate:.0} --no-calibrate"
                ),
                results,
            ));
        }
    }
}

/// The nights at which `text` (a history) says a change came, in its order.
fn changes_at(text: &str) -> Vec<usize> {
    text.lines()
        .filter_map(|l| l.strip_prefix("change at run "))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

/// `fathom history` of readrandom on the null engine in `db`, with more arguments.
fn history_of(db: &Path, more: &[&str]) -> std::process::Output {
    null_history(db.to_str().unwrap(), more)
}

fn history(db: &Path, setup: &str, format: &str) -> String {
    ok(&history_of(db, &["--setup", setup, "--format", format]))
}

/// The shifted setup ran at two client counts: two series, a change in each at night 20; one
/// client count is one series with one change; a filter nothing matches is named.
fn each_client_count_is_a_series_with_its_change(db: &Path) {
    let text = history(db, "shifted", "text");
    assert_holds(
        &text,
        &["2 series", "differ in clients", "series 2: clients 2"],
    );
    let at = changes_at(&text);
    assert_eq!(at.len(), 2, "{text}");
    assert!(at.iter().all(|n| n.abs_diff(20) <= 1), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("change at run") && l.contains("(-"))
            .count(),
        2,
        "drops: {text}"
    );
    // One client count is one series, one change.
    let one = ok(&history_of(db, &["--setup", "shifted", "--clients", "2"]));
    assert!(!one.contains("series 1"), "{one}");
    assert_eq!(changes_at(&one).len(), 1, "{one}");
    assert!(
        one.contains("p <= 0.001") || one.contains("p = 0.0"),
        "{one}"
    );
    let e = err(&history_of(db, &["--param", "num_keys=5"]));
    assert_holds(&e, &["no finished run", "with num_keys=5"]);
    let e = err(&history_of(db, &["--param", "num_keys"]));
    assert_holds(&e, &["--param", "expected KEY=VALUE"]);
}

#[test]
fn history_finds_the_shift_at_run_20_and_none_without_it() {
    let dir = scratch();
    let results = dir.path().join("results");
    // The first 60 draws are the ones this test has used since it had one client count; the
    // second client count's come after them.
    let noise = normals(90);
    let (one, steady, two) = (&noise[..30], &noise[30..60], &noise[60..]);
    series(
        &results,
        "shifted",
        0.9,
        &[(1, 20_000.0, one), (2, 36_000.0, two)],
    );
    series(&results, "steady", 1.0, &[(1, 20_000.0, steady)]);
    let db = results.join("fathom.db");

    each_client_count_is_a_series_with_its_change(&db);
    let text = history(&db, "steady", "text");
    assert!(text.contains("no change found"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("change at")).count(),
        0
    );

    // As a gate: each series' newest segment (from run 20) is 10% below the one before, ten
    // nights after the change as on the night it was found; a regression that large passes
    // only a gate that asks for more; the steady setup never fails.
    let gate = ["--setup", "shifted", "--fail-on", "regression"];
    let out = history_of(&db, &gate);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("2 series' newest levels failed the gate"), "{e}");
    assert!(
        e.contains("series 1: since run 20") && e.contains("series 2: since run 20"),
        "{e}"
    );
    ok(&history_of(
        &db,
        &[&gate[..], &["--min-change", "15%"]].concat(),
    ));
    ok(&history_of(
        &db,
        &["--setup", "steady", "--fail-on", "change"],
    ));

    let page = dir.path().join("history.html");
    std::fs::write(&page, history(&db, "shifted", "html")).unwrap();
    let out = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium is installed by scripts/setup.sh --test");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert_holds(&dom, &["<svg", "readrandom on null"]);

    let e = err(&history_of(&db, &["--figure", "speed"]));
    assert_holds(&e, &["--figure", "speed", "ops_per_sec, p50"]);
    // A figure under another column's name (p99_us), and --since as a time, not as text.
    let p99 = ok(&history_of(&db, &["--setup", "steady", "--figure", "p99"]));
    // A row per run (a change point found in p99's noise adds a line naming the setup too).
    let rows = |text: &str| {
        text.lines()
            .filter(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .filter(|l| l.contains("steady"))
            .count()
    };
    assert_eq!(rows(&p99), 30, "{p99}");
    let all = ok(&history_of(
        &db,
        &["--setup", "steady", "--since", "946684800"],
    ));
    assert_eq!(
        all.lines().filter(|l| l.contains("steady")).count(),
        30,
        "{all}"
    );
    let e = err(&history_of(&db, &["--since", "2100-01-01T00:00:00Z"]));
    assert_holds(&e, &["no finished run of step `readrandom`"]);
    let e = err(&history_of(&db, &["--since", "2026-11-01"]));
    assert_holds(&e, &["--since", "expected an RFC 3339 UTC time"]);
}
