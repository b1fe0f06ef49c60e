//! What the workloads' tests share: opening a real engine in a scratch directory, and running a
//! workload's steps the way the driver would, without its clock.

use crate::params::Params;
use crate::Workload;
use fathom_api::family::{Db, Engine};

/// A workload's `build`.
type Build = fn(&Params, usize) -> anyhow::Result<Box<dyn Workload>>;

/// `KEY=VALUE` pairs as `--param` gives them.
pub fn params(pairs: &[&str]) -> anyhow::Result<Params> {
    Params::parse(&pairs.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

/// The workload `build` makes of `KEY=VALUE` parameters for `clients` clients.
pub fn build_from(
    build: Build,
    pairs: &[&str],
    clients: usize,
) -> anyhow::Result<Box<dyn Workload>> {
    build(&params(pairs)?, clients)
}

/// Asserts that `build` refuses each set of parameters with an error holding its text.
pub fn assert_refused(build: Build, cases: &[(&[&str], &str)]) {
    for (pairs, wanted) in cases {
        match build_from(build, pairs, 1) {
            Ok(_) => panic!("{pairs:?} was accepted"),
            Err(e) => assert!(e.to_string().contains(wanted), "{pairs:?}: {e}"),
        }
    }
}

/// Engine `name` with fathom's `settings` in a scratch directory (keep the directory while
/// the engine is open).
pub fn scratch(name: &str, settings: &[(&str, &str)]) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(name, dir.path(), settings);
    (dir, engine)
}

/// Opens engine `name` in `dir` with fathom's `settings` (`KEY=VALUE`).
pub fn open(name: &str, dir: &std::path::Path, settings: &[(&str, &str)]) -> Engine {
    let entry = fathom_engines::find(name).unwrap();
    let config = fathom_engines::EngineConfig {
        data_dir: dir.to_path_buf(),
        settings: settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    };
    fathom_engines::open(entry, &config).unwrap()
}

/// Runs every step: each round, every background client still going does one operation,
/// then every client and helper still going does one; a client that ends is told it stopped.
/// A step ends when its clients are done, after `ops_per_client` operations each, or — for a
/// step that runs for a duration or until its background clients end it — after `rounds`
/// rounds (or when the background clients that end it are done). Returns, per step, how many
/// operations of each of its kinds the clients did.
pub fn drive(w: &dyn Workload, db: Db<'_>, rounds: usize) -> Vec<Vec<usize>> {
    let mut kinds_per_step = Vec::new();
    for (i, plan) in w.steps().iter().enumerate() {
        let step = w.step(db, i, &Default::default()).unwrap();
        let crew = step.crew().unwrap();
        let mut clients: Vec<_> = crew.clients.into_iter().chain(crew.helpers).collect();
        let ending: Vec<bool> = crew.background.iter().map(|b| b.ends_step).collect();
        let mut background: Vec<_> = crew.background.into_iter().map(|b| b.client).collect();
        let until_background = ending.contains(&true);
        let mut live = vec![true; clients.len()];
        let mut bg_live = vec![true; background.len()];
        let mut kinds = vec![0; plan.kinds.len()];
        let limit = match (plan.ops_per_client, plan.duration) {
            (Some(n), _) => n as usize,
            (None, Some(_)) => rounds,
            (None, None) if until_background => rounds,
            (None, None) => usize::MAX,
        };
        let mut round = 0;
        while live.iter().any(|l| *l) && round < limit {
            one_round(&mut background, &mut bg_live, &mut |_| {});
            let ended = bg_live
                .iter()
                .zip(&ending)
                .all(|(live, ends)| !live || !ends);
            if until_background && ended {
                break;
            }
            round += 1;
            one_round(&mut clients, &mut live, &mut |op| {
                kinds[plan.kinds.slot(op.kind).expect("a kind the step records")] += 1
            });
        }
        kinds_per_step.push(kinds);
    }
    kinds_per_step
}

/// One operation of every client still `live`; `done` is told of each.
fn one_round(
    clients: &mut [Box<dyn fathom_api::step::Client + '_>],
    live: &mut [bool],
    done: &mut dyn FnMut(&fathom_api::kind::Done),
) {
    for (c, l) in clients.iter_mut().zip(live.iter_mut()) {
        if !*l {
            continue;
        }
        match c.next().unwrap() {
            Some(d) => done(&d),
            None => {
                *l = false;
                c.stopped();
            }
        }
    }
}
