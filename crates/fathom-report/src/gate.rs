//! What an experiment's CI gate (`fail_on`) judges: the verdicts of one results directory's
//! setups against its base, as `fathom report` judges them.

use crate::options::Judging;
use fathom_schema::store::LoadedRun;
use fathom_stats::verdict::{self, Row};

/// The comparisons of `runs`' setups against their base, judged as `judging` says (none when
/// the runs hold one setup).
pub fn verdicts(runs: &[LoadedRun], judging: &Judging) -> anyhow::Result<Vec<Row>> {
    let operands = [(String::new(), runs)];
    let sides = verdict::sides(&operands);
    if sides.len() < 2 {
        return Ok(Vec::new());
    }
    let against =
        verdict::against_bases(&sides, judging.base.as_deref(), &judging.judge(), |_, _| {})?;
    Ok(against.rows)
}
