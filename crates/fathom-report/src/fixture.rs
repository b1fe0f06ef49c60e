//! Summaries the report tests build their runs from.

use fathom_core::result::{OpSummary, StepSummary};

/// A step whose only operation kind is LinkBench's GET_NODE, with this p99 and count.
pub fn step_with_get_node(p99: f64, ops: u64) -> StepSummary {
    let mut get = OpSummary {
        ops,
        ..OpSummary::default()
    };
    get.latency_us.p99 = p99;
    let mut s = StepSummary {
        ops,
        ..StepSummary::default()
    };
    s.by_op.insert("GET_NODE".into(), get);
    s
}
