//! Seed 004's iostat table: one step's device figures per setup (a release, a configuration),
//! as iostat names them, the median over the setup's repeats, so a change in read request
//! size or merges between releases shows beside the relative throughput.

use crate::section::Titled;
use fathom_schema::group::{median_step, series_of};
use fathom_schema::table::{Cell, Table};
use fathom_stats::verdict::Side;

pub const COLUMNS: &[&str] = &[
    "rps", "rmbps", "rrqmps", "rawait", "rareqsz", "wps", "wmbps", "wrqmps", "wawait", "wareqsz",
    "ver", "clients", "setup",
];

/// Decimals of each figure, as seed 004 prints them.
const DECIMALS: [u8; 10] = [0, 1, 2, 2, 1, 0, 1, 2, 2, 1];

/// One setup's figures during the step at one client count.
struct Figures {
    values: [Option<f64>; 10],
    version: String,
    clients: usize,
}

/// Per client count that ran the step, the median of the side's figures.
fn figures(side: &Side, step: &str) -> Vec<Figures> {
    series_of(&side.runs)
        .iter()
        .filter_map(|series| {
            let steps = series.step(step);
            if steps.is_empty() {
                return None;
            }
            let h = median_step(&steps).host;
            Some(Figures {
                values: [
                    h.rps,
                    h.rmbps,
                    h.rrqmps,
                    h.rawait_ms,
                    h.rareqsz_kb,
                    h.wps,
                    h.wmbps,
                    h.wrqmps,
                    h.wawait_ms,
                    h.wareqsz_kb,
                ],
                version: series
                    .runs
                    .first()
                    .map(|r| r.manifest.setup.engine_version.clone())
                    .unwrap_or_default(),
                clients: series.clients,
            })
        })
        .collect()
}

/// The table for `step`: a row per side and client count that ran it; `None` when none did.
pub fn table(sides: &[Side], step: &str) -> Option<Table> {
    let mut t = Table::new(COLUMNS);
    for side in sides {
        for f in figures(side, step) {
            let mut row: Vec<Cell> = f
                .values
                .iter()
                .zip(DECIMALS)
                .map(|(v, d)| Cell::fixed(*v, d))
                .collect();
            row.extend([
                Cell::Text(f.version),
                Cell::count(f.clients as f64),
                Cell::text(&side.label),
            ]);
            t.push(row);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// Each compared setup's figures over its base's at the same client count (`pairs` as
/// `compare::pairs` gives them): a change in request size or merges between releases reads as
/// a ratio, as the comparison's throughput does. `None` when no pair ran the step.
pub fn relative(sides: &[Side], pairs: &[(usize, usize)], step: &str) -> Option<Table> {
    let mut header: Vec<&str> = COLUMNS.to_vec();
    header.push("base");
    let mut t = Table::new(&header);
    for &(b, n) in pairs {
        let base = figures(&sides[b], step);
        for f in figures(&sides[n], step) {
            let Some(against) = base.iter().find(|x| x.clients == f.clients) else {
                continue;
            };
            let mut row: Vec<Cell> = f
                .values
                .iter()
                .zip(&against.values)
                .map(|(v, w)| Cell::fixed(v.zip(w.filter(|w| *w > 0.0)).map(|(v, w)| v / w), 2))
                .collect();
            row.extend([
                Cell::Text(f.version),
                Cell::count(f.clients as f64),
                Cell::text(&sides[n].label),
                Cell::text(&sides[b].label),
            ]);
            t.push(row);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// How to read it.
pub fn legend(step: &str, device: Option<&str>) -> String {
    format!(
        "iostat during {step}{}: r/w requests per second (rps, wps), MB/s, merged requests per \
         second (rrqmps, wrqmps), ms per request (rawait, wawait), KB per request (rareqsz, \
         wareqsz); medians over repeats; ver: the engine's exact version. Relative to the base: \
         each figure over the base's at the same client count.\n",
        device.map_or(String::new(), |d| format!(" on {d}"))
    )
}

/// The iostat tables of `--iostat STEP` (each setup's figures, then each against its base)
/// and their legend.
pub fn tables(
    sides: &[Side],
    pairs: &[(usize, usize)],
    step: &str,
) -> anyhow::Result<(Vec<Titled>, String)> {
    let table = table(sides, step)
        .ok_or_else(|| anyhow::anyhow!("--iostat: no setup ran a step `{step}`"))?;
    let mut tables = vec![Titled {
        title: format!("iostat during {step}"),
        table,
    }];
    if let Some(table) = relative(sides, pairs, step) {
        tables.push(Titled {
            title: format!("iostat during {step}, relative to the base"),
            table,
        });
    }
    let device = sides
        .iter()
        .flat_map(|s| s.runs.iter().flat_map(|r| r.steps.iter()))
        .find_map(|s| s.host.device.clone());
    Ok((tables, legend(step, device.as_deref())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::result::{HostRates, RunManifest, SetupRecord, StepSummary};
    use fathom_schema::store::LoadedRun;

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
        let at = |r: usize, c: &str| t.rows[r][col(c)].to_string();
        assert_eq!(at(0, "rareqsz"), "28.3");
        assert_eq!(at(0, "rrqmps"), "1.50");
        assert_eq!(at(0, "ver"), "8.5.4");
        assert_eq!(at(1, "rareqsz"), "9.0");
        assert_eq!(at(1, "wps"), "-");
        assert!(table(&sides, "fillseq").is_none());
        // Relative to a: b's request size is 9.0 / 28.3 of a's; a figure a lacks is unknown.
        let r = relative(&sides, &[(0, 1)], "overwriteandwait").unwrap();
        assert_eq!(r.rows.len(), 1);
        let at = |c: &str| r.rows[0][r.header.iter().position(|h| h == c).unwrap()].clone();
        assert_eq!(at("rareqsz").to_string(), "0.32");
        assert_eq!(at("rps").to_string(), "1.00");
        assert_eq!(at("wps"), Cell::Missing);
        assert_eq!(at("base").to_string(), "a");
        assert!(relative(&sides, &[(0, 1)], "fillseq").is_none());
    }
}
