//! `fathom compare` of profiled runs: per step and client count, each setup against its base,
//! the functions whose CPU per operation changed most, and on the page a differential flame
//! graph; with `--waits=bpf-stacks` on both sides, a differential graph of the time off a CPU
//! too. Both sides are normalised per operation, so a setup that does twice the operations in
//! the same time does not show as costing twice as much.

use crate::section::{Chart, Section, Titled};
use crate::sections::profiles::{of_series, Profiled};
use fathom_schema::profile::{us_per_op, Stacks};
use fathom_schema::table::{Cell, Style, Table};
use fathom_stats::verdict::Side;
use std::collections::BTreeMap;

/// Functions listed per step and pair.
pub const TOP: usize = 15;

const COLUMNS: &[&str] = &[
    "step",
    "function",
    "self base",
    "self new",
    "self diff",
    "total base",
    "total new",
    "setup",
];

/// Each function's CPU per operation in µs: (self, total).
fn per_op(p: &Profiled) -> BTreeMap<String, (f64, f64)> {
    let us = |ns: u64| us_per_op(ns as f64, p.ops);
    p.stacks
        .functions()
        .into_iter()
        .map(|(f, s)| (f.to_string(), (us(s.own), us(s.total))))
        .collect()
}

/// The differential graph's lines: every stack of either side (its stacks, in ns, and its
/// operations), `STACK BASE NEW` in picoseconds per operation.
fn diff_lines(base: (&Stacks, u64), new: (&Stacks, u64)) -> Vec<String> {
    let mut both: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for ((stacks, ops), side) in [(base, 0), (new, 1)] {
        for (stack, count) in &stacks.lines {
            let ps = us_per_op(*count as f64, ops) * 1e6;
            let e = both.entry(stack.join(";")).or_default();
            if side == 0 {
                e.0 += ps;
            } else {
                e.1 += ps;
            }
        }
    }
    both.into_iter()
        .filter(|(_, (a, b))| a.round() > 0.0 || b.round() > 0.0)
        .map(|(s, (a, b))| format!("{s} {} {}", a.round() as u64, b.round() as u64))
        .collect()
}

/// One function's CPU per operation on each side, µs: (self, total).
struct Change<'a> {
    function: &'a str,
    base: (f64, f64),
    new: (f64, f64),
}

fn rows(base: &Profiled, new: &Profiled, t: &mut Table) {
    let (b, n) = (per_op(base), per_op(new));
    let names: std::collections::BTreeSet<&String> = b.keys().chain(n.keys()).collect();
    let mut changed: Vec<Change> = names
        .into_iter()
        .map(|f| Change {
            function: f,
            base: b.get(f).copied().unwrap_or_default(),
            new: n.get(f).copied().unwrap_or_default(),
        })
        .collect();
    let diff = |c: &Change| (c.new.0 - c.base.0).abs();
    changed.sort_by(|x, y| {
        diff(y)
            .total_cmp(&diff(x))
            .then_with(|| x.function.cmp(y.function))
    });
    for Change {
        function,
        base: (bs, bt),
        new: (ns, nt),
    } in changed.into_iter().take(TOP)
    {
        let us = |x: f64| Cell::Number(x, Style::Fixed(3));
        t.push(vec![
            Cell::text(&new.step),
            Cell::text(crate::sections::profiles::short_name(function)),
            us(bs),
            us(ns),
            us(ns - bs),
            us(bt),
            us(nt),
            Cell::text(format!("{} vs {}", new.label, base.label)),
        ]);
    }
}

/// The section, when both sides of some pair profiled a step they share.
pub fn section(sides: &[Side], pairs: &[(usize, usize)]) -> anyhow::Result<Option<Section>> {
    let mut table = Table::new(COLUMNS);
    let mut charts = Vec::new();
    super::each_paired_series(sides, pairs, |b, n, bs, ns| {
        for step in ns.step_names() {
            let label = |side: &Side| format!("{}.c{}", side.label, ns.clients);
            let (bl, nl) = (label(&sides[b]), label(&sides[n]));
            if let (Some(base), Some(new)) = (
                crate::sections::offcpu::of_series(bs, &bl, step),
                crate::sections::offcpu::of_series(ns, &nl, step),
            ) {
                let title = format!("{nl} vs {bl} {step}: time off a CPU");
                charts.push(Chart::Flame(crate::draw::flame::differential(
                    &crate::sections::profiles::anchor(&title, step),
                    &format!("{title}, red longer per operation in the new, blue shorter"),
                    &diff_lines((&base.stacks, base.ops), (&new.stacks, new.ops)),
                )?));
            }
            let (Some(base), Some(new)) = (of_series(bs, &bl, step), of_series(ns, &nl, step))
            else {
                continue;
            };
            rows(&base, &new, &mut table);
            let title = format!("{} vs {} {step}", new.label, base.label);
            charts.push(Chart::Flame(crate::draw::flame::differential(
                &crate::sections::profiles::anchor(&title, step),
                &format!("{title}: red costs more per operation in the new, blue less"),
                &diff_lines((&base.stacks, base.ops), (&new.stacks, new.ops)),
            )?));
        }
        Ok(())
    })?;
    if table.rows.is_empty() && charts.is_empty() {
        return Ok(None);
    }
    let mut section = if table.rows.is_empty() {
        Section::new("Time off a CPU per operation by stack")
    } else {
        let mut s = Section::new("CPU per operation by function");
        s.tables = vec![Titled {
            title: "functions whose CPU per operation changed most".into(),
            table,
        }];
        s
    };
    section.charts = charts;
    section.legend = Some(LEGEND);
    // Each side's repeats' samples together, per operation: not a median.
    section.over = Some("each side's repeats together");
    Ok(Some(section))
}

const LEGEND: &str = "\nCPU per operation by function: µs of CPU per operation from each side's \
profile (the CPU time its samples stand for ÷ operations, repeats together); self is where the CPU was \
running, total where the function was on the stack; diff is new − base. The differential \
flame graphs (HTML) have the new side's shape, coloured by the change per operation; with \
--waits=bpf-stacks on both sides, a second graph per step does the same for the time asleep.";
