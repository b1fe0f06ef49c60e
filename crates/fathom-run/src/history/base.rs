//! The base's history for a comparison across sessions (`fathom_stats::verdict::history`): the
//! runs the results store holds of the base's series, before NEW's first run, one point per
//! session. A session is a stretch of runs into one results directory with no gap of more than
//! `SESSION_GAP` between them; its point is the geometric mean of its runs, since several runs
//! of one night are not several nights.

use super::SeriesKey;
use crate::records::{Store, Value};
use fathom_schema::result::{parse_utc_timestamp, RunManifest};
use fathom_stats::verdict::history::BaseHistory;

/// Runs further apart than this are of different sessions.
const SESSION_GAP: u64 = 6 * 3600;

impl BaseHistory for Store {
    fn before(&self, base: &RunManifest, step: &str, before: u64) -> Vec<f64> {
        self.sessions(base, step, before).unwrap_or_else(|e| {
            eprintln!(
                "fathom: {self}: the base's history could not be read ({e:#}); judging without it"
            );
            Vec::new()
        })
    }
}

impl Store {
    /// One point per session of `base`'s series, oldest first.
    fn sessions(&self, base: &RunManifest, step: &str, before: u64) -> anyhow::Result<Vec<f64>> {
        let Some(mut db) = self.connect(false)? else {
            return Ok(Vec::new());
        };
        let rows = db.query(
            "SELECT runs.started_at, runs.path, steps.ops_per_sec, runs.manifest FROM runs \
             JOIN steps ON steps.run_id = runs.id WHERE runs.engine = ? AND runs.workload = ? \
             AND runs.setup = ? AND steps.step = ? ORDER BY runs.started_at, runs.id",
            &[
                Value::Text(Some(base.setup.engine.clone())),
                Value::Text(Some(base.workload.clone())),
                Value::Text(Some(base.setup.name.clone())),
                Value::Text(Some(step.to_string())),
            ],
        )?;
        let key = SeriesKey::of(base, false, false);
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        // (start, results directory, ln ops/s) of the series' runs before `before`.
        let mut runs: Vec<(u64, String, f64)> = Vec::new();
        for r in rows {
            let Some(start) = parse_utc_timestamp(&text(&r[0])) else {
                continue;
            };
            let ops = r[2].as_f64().unwrap_or(0.0);
            let Ok(m) = serde_json::from_str::<RunManifest>(&text(&r[3])) else {
                continue;
            };
            if start >= before || ops <= 0.0 || SeriesKey::of(&m, false, false) != key {
                continue;
            }
            let dir = std::path::Path::new(&text(&r[1]))
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            runs.push((start, dir, ops.ln()));
        }
        Ok(sessions(&runs))
    }
}

/// One point per session of runs (start, directory, ln figure) in time order: the geometric
/// mean of each stretch of runs into one directory without a gap of `SESSION_GAP`.
fn sessions(runs: &[(u64, String, f64)]) -> Vec<f64> {
    let mut out: Vec<Vec<f64>> = Vec::new();
    let mut last: Option<(u64, &str)> = None;
    for (start, dir, x) in runs {
        let same = last.is_some_and(|(t, d)| d == dir && start.saturating_sub(t) <= SESSION_GAP);
        match out.last_mut() {
            Some(s) if same => s.push(*x),
            _ => out.push(vec![*x]),
        }
        last = Some((*start, dir));
    }
    out.iter()
        .map(|s| (s.iter().sum::<f64>() / s.len() as f64).exp())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three runs of one night in one directory are one point; the next night, or another
    /// directory, another.
    #[test]
    fn a_session_is_a_stretch_of_runs_in_one_directory() {
        let ln = |x: f64| x.ln();
        let night = 86_400;
        let runs = vec![
            (0, "a".to_string(), ln(100.0)),
            (60, "a".into(), ln(400.0)),
            (120, "a".into(), ln(100.0) + ln(400.0) - ln(200.0)),
            (night, "a".into(), ln(300.0)),
            (night + 60, "b".into(), ln(50.0)),
        ];
        let s = sessions(&runs);
        assert_eq!(s.len(), 3);
        assert!((s[0] - 200.0).abs() < 1e-9, "{s:?}");
        assert!((s[1] - 300.0).abs() < 1e-9 && (s[2] - 50.0).abs() < 1e-9);
    }
}
