//! Seed 004's iostat table: one step's device figures per setup (a release, a configuration),
//! as iostat names them, the median over the setup's repeats, so a change in read request
//! size or merges between releases shows beside the relative throughput.

use crate::compare::Side;
use crate::group::{median_step, series_of};
use crate::table::Table;

pub const COLUMNS: &[&str] = &[
    "rps", "rmbps", "rrqmps", "rawait", "rareqsz", "wps", "wmbps", "wrqmps", "wawait", "wareqsz",
    "ver", "clients", "setup",
];

/// The table for `step`: a row per side and client count that ran it; `None` when none did.
pub fn table(sides: &[Side], step: &str) -> Option<Table> {
    let mut t = Table::new(COLUMNS);
    for side in sides {
        for series in series_of(&side.runs) {
            let steps = series.step(step);
            if steps.is_empty() {
                continue;
            }
            let h = median_step(&steps).host;
            let version = series
                .runs
                .first()
                .map(|r| r.manifest.setup.engine_version.clone())
                .unwrap_or_default();
            let cell = |x: Option<f64>, places: usize| {
                x.map_or("-".to_string(), |v| format!("{v:.places$}"))
            };
            t.push(vec![
                cell(h.rps, 0),
                cell(h.rmbps, 1),
                cell(h.rrqmps, 2),
                cell(h.rawait_ms, 2),
                cell(h.rareqsz_kb, 1),
                cell(h.wps, 0),
                cell(h.wmbps, 1),
                cell(h.wrqmps, 2),
                cell(h.wawait_ms, 2),
                cell(h.wareqsz_kb, 1),
                version,
                series.clients.to_string(),
                side.label.clone(),
            ]);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// How to read it.
pub fn legend(step: &str, device: Option<&str>) -> String {
    format!(
        "iostat during {step}{}: r/w requests per second (rps, wps), MB/s, merged requests per \
         second (rrqmps, wrqmps), ms per request (rawait, wawait), KB per request (rareqsz, \
         wareqsz); medians over repeats; ver: the engine's exact version.\n",
        device.map_or(String::new(), |d| format!(" on {d}"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_core::result::{HostRates, RunManifest, SetupRecord, StepSummary};
    use fathom_core::store::LoadedRun;

    fn run(setup: &str, version: &str, rareqsz: f64) -> LoadedRun {
        let manifest = RunManifest {
            setup: SetupRecord {
                name: setup.into(),
                engine_version: version.into(),
                ..Default::default()
            },
            workload: "dbbench".into(),
            clients: 2,
            ..Default::default()
        };
        let step = StepSummary {
            step: "overwriteandwait".into(),
            host: HostRates {
                rps: Some(4762.0),
                rareqsz_kb: Some(rareqsz),
                rrqmps: Some(1.5),
                ..HostRates::default()
            },
            ..StepSummary::default()
        };
        LoadedRun {
            path: setup.into(),
            manifest,
            steps: vec![step],
        }
    }

    /// A row per release with the median of its repeats, the merged-request columns and the
    /// version; none for a step no one ran.
    #[test]
    fn a_row_per_release_with_medians() {
        let (a1, a2, a3) = (
            run("a", "8.5.4", 28.0),
            run("a", "8.5.4", 30.0),
            run("a", "8.5.4", 28.3),
        );
        let b = run("b", "8.7.3", 9.0);
        let sides = [
            Side {
                label: "a".into(),
                runs: vec![&a1, &a2, &a3],
            },
            Side {
                label: "b".into(),
                runs: vec![&b],
            },
        ];
        let t = table(&sides, "overwriteandwait").unwrap();
        assert_eq!(t.rows.len(), 2);
        let col = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
        assert_eq!(t.rows[0][col("rareqsz")], "28.3");
        assert_eq!(t.rows[0][col("rrqmps")], "1.50");
        assert_eq!(t.rows[0][col("ver")], "8.5.4");
        assert_eq!(t.rows[1][col("rareqsz")], "9.0");
        assert_eq!(t.rows[1][col("wps")], "-");
        assert!(table(&sides, "fillseq").is_none());
    }
}
