//! `fathom compare`'s "The slowest operations, new against base": per pair of setups, step and
//! kind whose slowest operations both kept (every repeat, pooled), the kind's p99.9 on each
//! side and which of what the slowest operations spent their time in or did grew
//! (`fathom_stats::tail::grew`): "GET_LINKS_LIST grew with tombstones skipped, not with io".

use crate::section::{Section, Titled};
use fathom_schema::group::{median, Series};
use fathom_schema::result::tail::Tail;
use fathom_schema::result::StepSummary;
use fathom_schema::table::{Cell, Style, Table};
use fathom_stats::tail::grew::{figures, Figure, Unit};
use fathom_stats::verdict::Side;

const COLUMNS: &[&str] = &[
    "step",
    "kind",
    "base p99.9",
    "new p99.9",
    "new/base",
    "grew with",
    "base",
    "new",
    "chance",
    "confidence",
    "setup",
];

const LEGEND: &str = "\
the slowest operations, new against base: per step and kind whose slowest operations both sides\n\
kept (every repeat of each, pooled), its p99.9 on each side (the repeats' median), ms, and which\n\
figure of the slowest operations grew: their time asleep in each kind of wait, waiting for a CPU\n\
and on one (with --waits=bpf, ms), inside each kind of engine event (ms), or their count of each\n\
kind of work (RocksDB's perf context); base, new: the figure's median over each side's slowest\n\
operations, one an episode of a repeat (up to 96 a side); chance: how likely the new side's would\n\
rank this far above the base's with no difference between them (one-sided Mann-Whitney, exact);\n\
confidence: high under 0.001, medium under 0.01, - not grown (the likeliest is shown). Five\n\
episodes a side at least can name one (docs/tail.md gives the simulation's error rates).\n";

/// Each repeat's summary of `step` that kept its slowest operations.
fn kept<'a>(s: &Series<'a>, step: &str) -> Vec<(&'a StepSummary, &'a Tail)> {
    (s.step(step).into_iter())
        .filter_map(|m| Some((m, m.tail.as_ref()?)))
        .collect()
}

/// The median of the repeats' p99.9 of `kind`, ms.
fn p99_9(side: &[(&StepSummary, &Tail)], kind: &str) -> Option<f64> {
    let v: Vec<f64> = (side.iter())
        .filter_map(|(m, _)| m.by_op.get(kind).map(|o| o.latency_us.p99_9 / 1e3))
        .collect();
    Some(median(&v)).filter(|m| !m.is_nan())
}

/// A figure's value as shown: ms for time, the count for work.
fn value(f: &Figure, v: f64) -> Cell {
    match f.unit {
        Unit::Us => Cell::num(v / 1e3),
        Unit::Count => Cell::num(v),
    }
}

type Kept<'a> = [(&'a StepSummary, &'a Tail)];

/// The tails of a side's repeats.
fn tails<'a>(side: &Kept<'a>) -> Vec<&'a Tail> {
    side.iter().map(|(_, t)| *t).collect()
}

fn rows(t: &mut Table, step: &str, (base, new): (&Kept<'_>, &Kept<'_>), setup: &str) {
    let (bt, nt) = (tails(base), tails(new));
    let mut kinds: Vec<&str> = (nt.iter())
        .flat_map(|t| t.slowest.iter().map(|o| o.kind.as_str()))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        let all = figures(&bt, &nt, kind);
        let mut shown: Vec<&Figure> = all.iter().filter(|f| f.confidence.is_some()).collect();
        if shown.is_empty() {
            shown.extend(all.first());
        }
        let (b, n) = (p99_9(base, kind), p99_9(new, kind));
        for (i, f) in shown.iter().enumerate() {
            let head = if i == 0 {
                vec![
                    Cell::text(step),
                    Cell::text(kind),
                    Cell::opt(b),
                    Cell::opt(n),
                    Cell::fixed(b.zip(n).map(|(b, n)| n / b), 2),
                ]
            } else {
                vec![Cell::text(""); 5]
            };
            let mut row = head;
            row.extend([
                Cell::text(f.what.as_str()),
                value(f, f.base),
                value(f, f.new),
                Cell::styled(Some(f.chance), Style::Auto),
                Cell::text(f.confidence.map_or("-", |c| c.name())),
                Cell::text(setup),
            ]);
            t.push(row);
        }
    }
}

/// The section, when both sides of some pair kept the slowest operations of a step they share.
pub fn section(sides: &[Side], pairs: &[(usize, usize)]) -> anyhow::Result<Option<Section>> {
    let mut t = Table::new(COLUMNS);
    super::each_paired_series(sides, pairs, |b, n, bs, ns| {
        for step in ns.step_names() {
            let (base, new) = (kept(bs, step), kept(ns, step));
            if base.is_empty() || new.is_empty() {
                continue;
            }
            let setup = format!("{}.c{} vs {}", sides[n].label, ns.clients, sides[b].label);
            rows(&mut t, step, (&base, &new), &setup);
        }
        Ok(())
    })?;
    if t.rows.is_empty() {
        return Ok(None);
    }
    let mut section = Section::new("The slowest operations, new against base");
    section.tables = vec![Titled {
        title: "what the slowest operations spent their time in or did, new against base".into(),
        table: t,
    }];
    section.legend = Some(LEGEND);
    section.over = Some("every repeat of each side that kept them, pooled");
    Ok(Some(section))
}
