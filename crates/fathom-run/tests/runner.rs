//! The run library end to end, without the command: specs resolved from inputs, run on real
//! engines into results directories that reports read back.

use fathom_run::{resolve, DriveInput, Keys, Place, Quiet, RunSpec, SetupInput, WorkloadInput};
use fathom_schema::result::RunStatus;
use fathom_schema::store::LoadedRun;
use std::collections::BTreeMap;
use std::path::Path;

fn input(engine: &str, workload: &str, params: &[(&str, &str)]) -> (SetupInput, WorkloadInput) {
    let params: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (
        SetupInput {
            engine: engine.into(),
            ..SetupInput::default()
        },
        WorkloadInput {
            name: workload.into(),
            params,
        },
    )
}

/// Resolves a spec for two clients as the command's flags would.
fn resolve_flags(
    setup: &SetupInput,
    workload: &WorkloadInput,
    drive: &DriveInput,
) -> anyhow::Result<RunSpec> {
    resolve(setup, workload, drive, 2, &Keys::Flags, Path::new("."))
}

/// dbbench's fillseq and readrandom on `engine` over `num_keys` keys, readrandom `duration`
/// long, resolved for two clients.
fn fill_and_read(engine: &str, num_keys: &str, duration: &str) -> RunSpec {
    let steps = ("steps", "fillseq,readrandom");
    let (setup, workload) = input(engine, "dbbench", &[("num_keys", num_keys), steps]);
    let drive = DriveInput {
        duration: Some(fathom_api::knobs::Span::new(duration)),
        ..DriveInput::default()
    };
    resolve_flags(&setup, &workload, &drive).unwrap()
}

/// A scratch directory on the real disk (not a tmpfs), so device counters move.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

#[test]
fn a_spec_runs_into_a_directory_reports_read() {
    let spec = fill_and_read("rocksdb", "20000", "1s");
    let results = scratch();
    let place = Place {
        results: results.path().to_path_buf(),
        ..Place::default()
    };
    let dir = fathom_run::run(&spec, &place, &mut Quiet).unwrap();
    let run = LoadedRun::load(&dir).unwrap();
    assert_eq!(run.manifest.status, RunStatus::Finished);
    let steps: Vec<&str> = run.steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(steps, ["fillseq", "readrandom"]);
    assert_eq!(run.steps[0].ops, 20000);
    assert!(
        run.steps[1].seconds >= 0.9,
        "--duration is readrandom's length"
    );
    assert!(
        !results
            .path()
            .join(".data")
            .read_dir()
            .unwrap()
            .any(|_| true),
        "the data directory is removed after the run"
    );
}

#[test]
fn what_a_workload_needs_is_met_or_refused_before_anything_runs() {
    let (mut setup, workload) = input(
        "rocksdb",
        "linkbench",
        &[("maxid1", "2001"), ("requests", "200")],
    );
    let spec = resolve_flags(&setup, &workload, &DriveInput::default()).unwrap();
    assert_eq!(spec.setup.settings["transactions"], "optimistic");
    assert_eq!(spec.implied.len(), 1, "{:?}", spec.implied);
    let results = scratch();
    let place = Place {
        results: results.path().to_path_buf(),
        ..Place::default()
    };
    let run = LoadedRun::load(&fathom_run::run(&spec, &place, &mut Quiet).unwrap()).unwrap();
    assert_eq!(run.manifest.setup.settings["transactions"], "optimistic");
    assert_eq!(
        run.manifest.status,
        RunStatus::Finished,
        "{:?}",
        run.manifest.error
    );

    setup.settings.insert("transactions".into(), "none".into());
    let e = resolve_flags(&setup, &workload, &DriveInput::default())
        .unwrap_err()
        .to_string();
    for wanted in ["needs transactions", "transactions=none"] {
        assert!(e.contains(wanted), "{e}");
    }
}

/// Every experiment the repository ships loads and resolves: its keys, engines, settings,
/// options, workloads and parameters are all accepted (none is run here).
#[test]
fn every_bundled_experiment_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut loaded = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Err(e) =
                fathom_run::experiment::Experiment::load(&path, &fathom_run::DriveInput::default())
            {
                panic!("{}: {e:#}", path.display());
            }
            loaded += 1;
        }
    }
    assert!(
        loaded >= 9,
        "only {loaded} experiments in {}",
        dir.display()
    );
}

/// A run's stop token stops that run and no other: two runs at once in one process, one
/// stopped a second into its timed step, which ends interrupted with its earlier step saved,
/// while the other runs its step's whole length.
#[test]
fn a_stop_token_stops_its_own_run() {
    let spec = fill_and_read("null", "1000", "4s");
    let results = scratch();
    let place = |name: &str| Place {
        results: results.path().to_path_buf(),
        dir_name: Some(name.into()),
        ..Place::default()
    };
    let (stopped, other) = (place("stopped"), place("other"));
    let asker = stopped.stop.clone();
    let (mine, theirs) = std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            asker.request();
        });
        let mine = s.spawn(|| fathom_run::run(&spec, &stopped, &mut Quiet));
        let theirs = s.spawn(|| fathom_run::run(&spec, &other, &mut Quiet));
        (
            mine.join().unwrap().unwrap(),
            theirs.join().unwrap().unwrap(),
        )
    });
    let (mine, theirs) = (
        LoadedRun::load(&mine).unwrap(),
        LoadedRun::load(&theirs).unwrap(),
    );
    assert_eq!(mine.manifest.status, RunStatus::Interrupted);
    let last = mine.steps.last().unwrap();
    assert!(last.interrupted && last.seconds < 3.5, "{}", last.seconds);
    assert_eq!(theirs.manifest.status, RunStatus::Finished);
    assert!(theirs.steps.iter().all(|s| !s.interrupted));
    assert!(
        theirs.steps[1].seconds >= 3.9,
        "{}",
        theirs.steps[1].seconds
    );
}

/// A memory limit below the engine's cache and write buffer is said before anything runs, with
/// the setting to change; one above them says nothing. A workload file a family cannot run, and
/// a findmax target naming an operation no step runs, are refused as the spec resolves.
#[test]
fn what_cannot_work_is_said_before_anything_runs() {
    let (setup, workload) = input("rocksdb", "dbbench", &[("num_keys", "1000")]);
    let limited = |size: &str| DriveInput {
        memory_limit: Some(fathom_api::knobs::Size::new(size)),
        ..DriveInput::default()
    };
    let spec = resolve_flags(&setup, &workload, &limited("64m")).unwrap();
    let w = spec.warnings.join("\n");
    assert!(
        w.contains("cache_size 256 MiB") && w.contains("write_buffer_size 64 MiB"),
        "{w}"
    );
    assert!(w.contains("--set cache_size=16m"), "{w}");
    let spec = resolve_flags(&setup, &workload, &limited("1g")).unwrap();
    assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);

    let (kv, file) = input("null", "pgbench/tpcb-like", &[]);
    let e = format!(
        "{:#}",
        resolve_flags(&kv, &file, &DriveInput::default()).unwrap_err()
    );
    assert!(
        e.contains("SQL tables or scripts") && e.contains("kv engine"),
        "{e}"
    );

    let (null, reads) = input("null", "ycsb/workloadc", &[]);
    let mut search = DriveInput {
        find_max: Some("NOSUCH:p99<=5ms".into()),
        ..DriveInput::default()
    };
    // YCSB's run phase counts operations unless given a duration: nothing to search.
    let e = format!("{:#}", resolve_flags(&null, &reads, &search).unwrap_err());
    assert!(e.contains("timed step") && e.contains("--duration"), "{e}");
    search.duration = Some("2s".parse().unwrap());
    let e = format!("{:#}", resolve_flags(&null, &reads, &search).unwrap_err());
    assert!(e.contains("NOSUCH") && e.contains("READ"), "{e}");
}
