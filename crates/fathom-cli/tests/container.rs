//! fathom in its container image: `scripts/container.sh build` makes the Containerfile's image
//! with podman (runc) on a Debian 12 base made from Debian's mirror (no registry is reachable
//! here), with this build's fathom; in it the default experiment runs (two repeats: two groups
//! of compared cells), and so do its shards: two whose cells together are the unsharded run's,
//! each once, and a third with nothing to run, which says so and succeeds. The results, written
//! through the volume, read on the host.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn container_sh(cwd: &Path, args: &[&str]) -> std::process::Output {
    Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/container.sh"))
        .args(args)
        .current_dir(cwd)
        .env("FATHOM_BIN", env!("CARGO_BIN_EXE_fathom"))
        .output()
        .expect("scripts/container.sh runs")
}

#[test]
fn the_default_experiment_and_its_shards_run_in_the_image() {
    if !needs_root("the_default_experiment_and_its_shards_run_in_the_image") {
        return;
    }
    let dir = scratch();
    let built = container_sh(dir.path(), &["build"]);
    if built.status.code() == Some(3) {
        // No container runtime can run here: said by name, as a skip.
        eprintln!(
            "skipped the_default_experiment_and_its_shards_run_in_the_image: {}",
            String::from_utf8_lossy(&built.stderr).trim()
        );
        return;
    }
    ok(&built);
    let run_in = |results: &str, more: &[&str]| {
        let mut args = vec![
            "run",
            "run",
            "experiments/default.toml",
            "--results",
            results,
            "--duration",
            "1s",
            "--repeats",
            "2",
            "--no-calibrate",
        ];
        args.extend(more);
        ok(&container_sh(dir.path(), &args))
    };
    let out = run_in("/results/all", &[]);
    // The seed-style table, the setup column among it.
    assert!(
        out.contains("rocksdb.snappy") && out.contains("wiredtiger.snappy"),
        "{out}"
    );
    let results = dir.path().join("results");
    let whole = run_dirs(&results.join("all"));
    assert_eq!(whole.len(), 4, "{whole:?}");
    run_in("/results/shard-1", &["--shard", "1/3"]);
    run_in("/results/shard-2", &["--shard", "2/3"]);
    let empty = container_sh(
        dir.path(),
        &[
            "run",
            "run",
            "experiments/default.toml",
            "--results",
            "/results/shard-3",
            "--duration",
            "1s",
            "--repeats",
            "2",
            "--no-calibrate",
            "--shard",
            "3/3",
        ],
    );
    let said = ok(&empty) + &String::from_utf8_lossy(&empty.stderr);
    assert!(
        said.contains("shard 3/3: no cells of the experiment fall to this shard"),
        "{said}"
    );
    let mut union: Vec<String> = ["shard-1", "shard-2"]
        .iter()
        .flat_map(|s| run_dirs(&results.join(s)))
        .collect();
    union.sort();
    assert_eq!(union, whole, "the shards' cells, each once");
    // What the image wrote reads on the host.
    let report = report_json(&results.join("all"));
    assert_eq!(report["runs"].as_array().unwrap().len(), 4);
}
