//! LinkBench's consistency check as a step of one operation: every count row must equal its
//! visible links. On a store whose writes run without transactions the counts that drifted are
//! recorded (one failed `DRIFTED_COUNT` each) rather than failing the run.

use super::kinds::LinkBenchKind;
use super::model::Store;
use fathom_api::kind::Done;
use fathom_api::step::Client;

/// The consistency check as a step's one operation: fails naming the pairs that differ.
pub struct Check<'e> {
    store: Box<dyn Store + 'e>,
    done: bool,
    /// Drifted pairs still to record, one failed operation each.
    drifted: u64,
}

impl<'e> Check<'e> {
    pub fn new(store: Box<dyn Store + 'e>) -> Check<'e> {
        Check {
            store,
            done: false,
            drifted: 0,
        }
    }
}

impl Client for Check<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if self.drifted > 0 {
            self.drifted -= 1;
            return Ok(Some(Done {
                failed: true,
                ..Done::of(LinkBenchKind::DriftedCount)
            }));
        }
        if self.done {
            return Ok(None);
        }
        self.done = true;
        let (wrong, pairs) = self.store.check_counts()?;
        if wrong > 0 && self.store.counts_may_drift() {
            // The seed's LinkbenchX on a server without transactions: counts drift, and the
            // check says by how many instead of failing the run.
            self.drifted = wrong;
        } else if wrong > 0 {
            anyhow::bail!(
                "consistency check failed: {wrong} of {pairs} (id1, link type) pairs have a count \
                 row that differs from their visible links"
            );
        }
        Ok(Some(Done::of(LinkBenchKind::Check)))
    }
}
