//! An experiment run as concurrent shards, each with the variables a Kubernetes Indexed Job or
//! a Slurm array sets, holds the cells of the unsharded run, each once; reports read the
//! shards' directories as one experiment and refuse directories of different definitions.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const EXPERIMENT: &str = r#"
name = "sharded"
clients = [1, 2]
repeats = 3
duration = "300ms"
interval = "100ms"

[[setup]]
name = "one"
engine = "null"

[[setup]]
name = "two"
engine = "null"

[[workload]]
name = "dbbench"
params = { num_keys = 2000, steps = "fillseq,readrandom" }
"#;

/// Starts `fathom run FILE --shard auto --results DIR` with the scheduler's variables.
fn shard(file: &Path, results: &Path, vars: &[(&str, String)]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--shard",
            "auto",
            "--no-calibrate",
        ])
        .arg("--results")
        .arg(results)
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fathom runs")
}

/// Runs the shards at once and waits for all; their results directories.
fn run_shards(
    file: &Path,
    root: &Path,
    name: &str,
    vars: Vec<Vec<(&str, String)>>,
) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = (0..vars.len())
        .map(|i| root.join(format!("{name}-{i}")))
        .collect();
    let children: Vec<_> = vars
        .iter()
        .zip(&dirs)
        .map(|(v, d)| shard(file, d, v))
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dirs
}

#[test]
fn shards_hold_the_unsharded_cells_once_and_report_as_one() {
    let dir = scratch();
    let file = dir.path().join("e.toml");
    std::fs::write(&file, EXPERIMENT).unwrap();
    let all = dir.path().join("all");
    ok(&run(&format!("{} --no-calibrate", file.display()), &all));
    let whole = run_dirs(&all);
    assert_eq!(whole.len(), 12);

    let k8s = (0..3)
        .map(|i| {
            vec![
                ("JOB_COMPLETION_INDEX", i.to_string()),
                ("JOB_COMPLETIONS", "3".into()),
            ]
        })
        .collect();
    let slurm = (1..=2)
        .map(|i| {
            vec![
                ("SLURM_ARRAY_TASK_ID", i.to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".into()),
                ("SLURM_ARRAY_TASK_COUNT", "2".into()),
            ]
        })
        .collect();
    for (name, vars) in [("k8s", k8s), ("slurm", slurm)] {
        let dirs = run_shards(&file, dir.path(), name, vars);
        let mut union: Vec<String> = dirs.iter().flat_map(|d| run_dirs(d)).collect();
        union.sort();
        assert_eq!(union, whole, "{name}: the shards' cells, each once");
        for d in &dirs {
            // Every setup of a (repeat, client count) on one shard: compared cells share a host.
            let cells = run_dirs(d);
            for c in &cells {
                let pair = match c.strip_prefix("one.") {
                    Some(rest) => format!("two.{rest}"),
                    None => format!("one.{}", c.trim_start_matches("two.")),
                };
                assert!(
                    cells.contains(&pair),
                    "{name}: {c} without {pair} in {}",
                    d.display()
                );
            }
        }
        let mut args = vec!["report".to_string()];
        args.extend(dirs.iter().map(|d| d.display().to_string()));
        args.extend(["--format".into(), "json".into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let report: Value = serde_json::from_str(&ok(&fathom(&args))).unwrap();
        assert_eq!(report["runs"].as_array().unwrap().len(), 12, "{name}");
    }

    // A shard of another definition is refused, naming the line that differs.
    let changed = dir.path().join("changed.toml");
    std::fs::write(
        &changed,
        EXPERIMENT.replace("num_keys = 2000", "num_keys = 3000"),
    )
    .unwrap();
    let other = dir.path().join("other");
    let out = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args([
            "run",
            changed.to_str().unwrap(),
            "--shard",
            "2/3",
            "--no-calibrate",
        ])
        .arg("--results")
        .arg(&other)
        .output()
        .unwrap();
    ok(&out);
    let first = dir.path().join("k8s-0");
    let e = err(&fathom(&[
        "report",
        first.to_str().unwrap(),
        other.to_str().unwrap(),
    ]));
    assert!(
        e.contains("differently defined")
            && e.contains("num_keys = 2000")
            && e.contains("num_keys = 3000"),
        "{e}"
    );
    // The whole run beside one of its shards holds cells twice.
    let e = err(&fathom(&[
        "report",
        all.to_str().unwrap(),
        first.to_str().unwrap(),
    ]));
    assert!(e.contains("both hold cell"), "{e}");
}
