//! What the workloads' tests share: opening a real engine in a scratch directory, and running a
//! workload's steps the way the driver would, without its clock.

use crate::Workload;
use fathom_core::family::{Db, Engine};

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

/// Runs every step: each round, the background writer (if any) does one operation, then every
/// client still going does one. A step ends when its clients are done, after `ops_per_client`
/// operations each, or — for a step that runs for a duration — after `rounds` rounds.
/// Returns, per step, how many operations of each kind were done.
pub fn drive(w: &dyn Workload, db: Db<'_>, rounds: usize) -> Vec<Vec<usize>> {
    let mut kinds_per_step = Vec::new();
    for (i, plan) in w.steps().iter().enumerate() {
        w.prepare_step(db, i).unwrap();
        let mut clients: Vec<_> = (0..plan.clients)
            .map(|t| w.client(db, i, t).unwrap())
            .collect();
        let mut background = w.background(db, i).unwrap();
        let mut live = vec![true; clients.len()];
        let mut kinds = vec![0; plan.op_kinds.len()];
        let limit = match (plan.ops_per_client, plan.duration) {
            (Some(n), _) => n as usize,
            (None, Some(_)) => rounds,
            (None, None) => usize::MAX,
        };
        let mut round = 0;
        while live.iter().any(|l| *l) && round < limit {
            if let Some(bg) = background.as_mut() {
                bg.next().unwrap();
            }
            round += 1;
            for (c, l) in clients.iter_mut().zip(live.iter_mut()) {
                if !*l {
                    continue;
                }
                match c.next().unwrap() {
                    Some(d) => kinds[d.kind] += 1,
                    None => *l = false,
                }
            }
        }
        kinds_per_step.push(kinds);
    }
    kinds_per_step
}
