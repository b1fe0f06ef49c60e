//! fathom under a real Slurm: `scripts/slurm.sh` starts a one-node cluster of Debian's slurmctld,
//! slurmd and munge (as root), and docs/multi-host.md's job script, as it stands there, is
//! submitted as job arrays of every form Slurm takes — a range, a stepped range, a list, a
//! throttled range, a mixed list — each task running its shard with `--shard auto`: the union
//! of the shards' cells is the unsharded run's, each cell once. Client hosts that are the tasks
//! of an array meet at a barrier and start each step together.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A one-node Slurm under `dir`, stopped when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

/// `scripts/slurm.sh ARGS`, on ports of the test's own (a cluster of the default ports may run).
fn slurm_sh(args: &[&str]) -> std::process::Output {
    Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/slurm.sh"))
        .args(args)
        .env("FATHOM_SLURMCTLD_PORT", "16817")
        .output()
        .expect("scripts/slurm.sh runs")
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let dir = dir.join("slurm");
        ok(&slurm_sh(&["start", dir.to_str().unwrap()]));
        Cluster {
            conf: dir.join("slurm.conf"),
            dir,
        }
    }

    /// `sbatch --wait --array=ARRAY` of `script`, with `env` and fathom first on the PATH.
    fn array(&self, array: &str, script: &Path, log: &Path, env: &[(&str, &Path)]) {
        let fathom_dir = Path::new(env!("CARGO_BIN_EXE_fathom")).parent().unwrap();
        let path = format!(
            "{}:{}",
            fathom_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = Command::new("sbatch")
            .args(["--wait", "--parsable", "--export=ALL"])
            .arg(format!("--array={array}"))
            .arg(format!("--output={}/task-%a.out", log.display()))
            .arg(script)
            .env("SLURM_CONF", &self.conf)
            .env("PATH", path)
            .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
            .output()
            .expect("sbatch runs");
        if !out.status.success() {
            let logs: String = std::fs::read_dir(log)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect();
            panic!(
                "--array={array}: {}\n{logs}\nslurmctld: {}",
                String::from_utf8_lossy(&out.stderr),
                self.dir.join("slurmctld.log").display()
            );
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = slurm_sh(&["stop", self.dir.to_str().unwrap()]);
    }
}

/// docs/multi-host.md's Slurm job script, the block after its marker.
fn documented_job() -> String {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/multi-host.md"),
    )
    .unwrap();
    let after = doc
        .split_once("<!-- The Slurm job:")
        .expect("docs/multi-host.md marks its Slurm job")
        .1;
    let block = after.split_once("```sh\n").unwrap().1;
    block.split_once("```").unwrap().0.to_string()
}

#[test]
fn fathom_under_a_real_slurm() {
    if !needs_root("fathom_under_a_real_slurm") {
        return;
    }
    let dir = scratch();
    let cluster = Cluster::start(dir.path());
    let file = dir.path().join("e.toml");
    std::fs::write(&file, null_pair("sharded", "200ms", "100ms", 1000)).unwrap();
    let all = dir.path().join("all");
    ok(&run(&format!("{} --no-calibrate", file.display()), &all));
    let whole = run_dirs(&all);
    assert_eq!(whole.len(), 12);

    let job = dir.path().join("job.sh");
    std::fs::write(&job, documented_job()).unwrap();
    for (n, array) in ["0-3", "1-7:2", "0,2,5", "2,5,9", "0-5%2", "3,4-6,10"]
        .iter()
        .enumerate()
    {
        let results = dir.path().join(format!("array-{n}"));
        let logs = dir.path().join(format!("logs-{n}"));
        std::fs::create_dir_all(&logs).unwrap();
        cluster.array(
            array,
            &job,
            &logs,
            &[("EXPERIMENT", &file), ("RESULTS", &results)],
        );
        let mut union: Vec<String> = std::fs::read_dir(&results)
            .unwrap()
            .flatten()
            // Each task's results directory (the results database beside them is a file).
            .filter(|e| e.path().is_dir())
            .flat_map(|shard| run_dirs(&shard.path()))
            .collect();
        union.sort();
        assert_eq!(
            union, whole,
            "--array={array}: the shards' cells, each once"
        );
    }

    // Three client hosts, the tasks of one array, meet at a barrier before each step.
    let barrier = dir.path().join("barrier");
    let hosts = dir.path().join("hosts");
    let script = dir.path().join("host.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nfathom run --engine null --workload dbbench --no-calibrate \
         --param num_keys=2000 --param steps=fillseq,readrandom --duration 300ms \
         --barrier \"$BARRIER\" --barrier-hosts 3 --barrier-timeout 60s \
         --results \"$HOSTS/host-$SLURM_ARRAY_TASK_ID\"\n",
    )
    .unwrap();
    let logs = dir.path().join("logs-barrier");
    std::fs::create_dir_all(&logs).unwrap();
    cluster.array(
        "0-2",
        &script,
        &logs,
        &[("BARRIER", &barrier), ("HOSTS", &hosts)],
    );
    let run_of = |i: usize| {
        let h = hosts.join(format!("host-{i}"));
        h.join(&run_dirs(&h)[0])
    };
    let merged = dir.path().join("merged");
    ok(&fathom_at(
        "merge {} {} {} --out {}",
        &[&run_of(0), &run_of(1), &run_of(2), &merged],
    ));
    started_together(&merged, &["fillseq", "readrandom"]);
    drop(cluster);
}
