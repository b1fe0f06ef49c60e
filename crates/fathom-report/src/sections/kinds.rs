//! Latency by operation kind: for every step that ran more than one kind of operation (YCSB's
//! READ and UPDATE, a pgbench script's statements, sysbench's), each kind's rate, share and
//! percentiles per setup — the lines a YCSB user reads first, for every workload, workload
//! files included. Workloads whose own tables show it (`ReportHooks::kinds_shown`: LinkBench,
//! TPC-C) are left to them.

use crate::section::{Input, Section, Titled};
use fathom_api::kind::Role;
use fathom_schema::group::{median_step, Series};
use fathom_schema::result::{OpSummary, StepSummary};
use fathom_schema::table::{Cell, Table};

const COLUMNS: &[&str] = &[
    "kind", "ops/s", "share%", "p50", "p95", "p99", "p99.9", "max", "setup",
];

/// Kinds that are not the step's work (an index built, a flush, a background writer): their
/// share of a step's operations says nothing.
fn aside(role: Role) -> bool {
    matches!(role, Role::Maintenance | Role::Background | Role::Check)
}

/// The kinds of the step's work that ran (none where the workload's own tables show them).
pub(crate) fn of_work<'m>(s: &Series, m: &'m StepSummary) -> Vec<(&'m String, &'m OpSummary)> {
    if fathom_workloads::find(&s.workload).is_ok_and(|w| w.report.kinds_shown) {
        return Vec::new();
    }
    (m.by_op.iter())
        .filter(|(_, o)| o.ops > 0 && !o.role.is_some_and(aside))
        .collect()
}

/// One table per step in which some setup ran two kinds or more.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut section = Section::new("Latency by operation kind");
    for step in &input.steps {
        let mut t = Table::new(COLUMNS);
        for s in &input.series {
            let reps = s.step(step);
            if reps.is_empty() {
                continue;
            }
            let m = median_step(&reps);
            let kinds = of_work(s, &m);
            if kinds.len() < 2 {
                continue;
            }
            let all: u64 = kinds.iter().map(|(_, o)| o.ops).sum();
            for (name, o) in kinds {
                let share = o.ops as f64 / all as f64;
                let l = &o.latency_us;
                t.push(vec![
                    Cell::text(name.as_str()),
                    Cell::num(m.ops_per_sec * share),
                    Cell::fixed(Some(share * 100.0), 1),
                    Cell::num(l.p50),
                    Cell::num(l.p95),
                    Cell::num(l.p99),
                    Cell::num(l.p99_9),
                    Cell::num(l.max),
                    Cell::text(s.label(&input.series)),
                ]);
            }
        }
        if !t.rows.is_empty() {
            section.tables.push(Titled {
                title: format!("{step}: latency by operation kind, µs"),
                table: t,
            });
        }
    }
    Ok(section.if_any().into_iter().collect())
}
