//! What a workload file adds to reports: the end-of-run lines of the tools its files come from,
//! YCSB's (`--format ycsb`) and pgbench's (`--format pgbench`).

use super::{pgbench_format, ycsb_format};
use crate::report::ReportHooks;

/// A workload file's additions to reports.
pub const HOOKS: ReportHooks = ReportHooks {
    originals: &[ycsb_format::ORIGINAL, pgbench_format::ORIGINAL],
    ..ReportHooks::NONE
};
