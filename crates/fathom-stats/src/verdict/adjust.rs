//! Many verdicts at once: a comparison of ten steps at three client counts makes thirty, and at
//! 2.5% a side each, some are wrong by chance alone. `--adjust holm` holds the chance of any
//! false verdict in a family at 2.5% (Holm's step-down, family-wise); `--adjust bh` holds the
//! expected share of false ones among those decided (Benjamini–Hochberg, false discovery rate).
//! A family is one setup against its base in one figure (ops/s, or one cost): its steps and
//! client counts. Each verdict enters with a p-value valid for the claim it makes: a direction's
//! is twice its one-sided p (either direction could have been claimed), the same's its own.

use super::log_ratio::ALPHA;
use super::{Row, Verdict};
use serde::Serialize;

/// How the verdicts of one comparison are adjusted for their number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Adjust {
    /// Each verdict at its own 2.5% a side.
    #[default]
    None,
    /// Holm: the chance of any false verdict in the comparison is at most 2.5%.
    Holm,
    /// Benjamini–Hochberg: false verdicts are at most 2.5% of those decided, in expectation.
    Bh,
}

impl Adjust {
    pub const NAMES: &'static str = "none, holm or bh";

    pub fn text(&self) -> &'static str {
        match self {
            Adjust::None => "none",
            Adjust::Holm => "Holm",
            Adjust::Bh => "Benjamini-Hochberg",
        }
    }
}

impl std::str::FromStr for Adjust {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Adjust::None),
            "holm" => Ok(Adjust::Holm),
            "bh" => Ok(Adjust::Bh),
            other => Err(format!("`{other}`: expected {}", Adjust::NAMES)),
        }
    }
}

/// The p-values adjusted for their number, in their order.
pub fn adjusted(p: &[f64], how: Adjust) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = p.to_vec();
    match how {
        Adjust::None => {}
        Adjust::Holm => {
            let mut running: f64 = 0.0;
            for (rank, &i) in order.iter().enumerate() {
                running = running.max((p[i] * (m - rank) as f64).min(1.0));
                out[i] = running;
            }
        }
        Adjust::Bh => {
            let mut running: f64 = 1.0;
            for (rank, &i) in order.iter().enumerate().rev() {
                running = running.min((p[i] * m as f64 / (rank + 1) as f64).min(1.0));
                out[i] = running;
            }
        }
    }
    out
}

/// Adjusts the verdicts of `rows` (throughput's and the costs', those that have a test) for
/// their number, family by family (a pair of setups and a figure): a verdict whose adjusted p
/// passes 2.5% becomes undecided, and each row says how it was judged and the size of its
/// family. Returns the number of tests.
pub fn apply(rows: &mut [Row], how: Adjust) -> usize {
    /// One test: its row, its cost (`None`: throughput), its family p and its family.
    struct Test {
        row: usize,
        cost: Option<usize>,
        p: f64,
        family: (String, String, &'static str),
    }
    let mut at: Vec<Test> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let test = |cost, p, figure| Test {
            row: r,
            cost,
            p,
            family: (row.base.clone(), row.new.clone(), figure),
        };
        at.extend(row.p_family.map(|p| test(None, p, "ops/s")));
        for (i, c) in row.costs.iter().enumerate() {
            at.extend(c.p_family.map(|p| test(Some(i), p, c.figure)));
        }
    }
    let tests = at.len();
    if how == Adjust::None {
        return tests;
    }
    let mut families: Vec<&(String, String, &'static str)> = Vec::new();
    for a in &at {
        if !families.contains(&&a.family) {
            families.push(&a.family);
        }
    }
    let mut adjusted_at: Vec<(usize, Option<usize>, f64, usize)> = Vec::new();
    for f in families {
        let members: Vec<&Test> = at.iter().filter(|a| &a.family == f).collect();
        let p: Vec<f64> = members.iter().map(|a| a.p).collect();
        for (a, q) in members.iter().zip(adjusted(&p, how)) {
            adjusted_at.push((a.row, a.cost, q, p.len()));
        }
    }
    for (r, cost, q, of) in adjusted_at {
        let row = &mut rows[r];
        if cost.is_none() {
            // The row's verdict is its throughput's: its family is the one it names.
            row.adjusted = Some((how, of));
        }
        let (verdict, slot) = match cost {
            None => (&mut row.verdict, &mut row.p),
            Some(i) => {
                let c = &mut row.costs[i];
                (&mut c.verdict, &mut c.p)
            }
        };
        *slot = Some(q);
        if q > ALPHA && verdict.decided() {
            *verdict = Verdict::Undecided;
        }
    }
    tests
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_and_bh_against_worked_values() {
        let p = [0.01, 0.04, 0.03, 0.005];
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
        // Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, kept increasing.
        let h = adjusted(&p, Adjust::Holm);
        assert!(close(&h, &[0.03, 0.06, 0.06, 0.02]), "{h:?}");
        // BH: times 4/1, 4/2, 4/3, 4/4 from the top, kept decreasing.
        let b = adjusted(&p, Adjust::Bh);
        assert!(close(&b, &[0.02, 0.04, 0.04, 0.02]), "{b:?}");
        assert_eq!(adjusted(&p, Adjust::None), p);
        assert_eq!("bh".parse::<Adjust>(), Ok(Adjust::Bh));
        assert!("bonf".parse::<Adjust>().unwrap_err().contains("holm"));
    }
}
