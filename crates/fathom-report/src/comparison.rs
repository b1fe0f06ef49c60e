//! The comparison table, shared by `fathom compare` and a report's relative throughput
//! against a base (seed 004's "QPS for my version / QPS for the base"): per step and client
//! count, the ratio of throughputs, the change in cpu/o, wKB/o and r/o, and with repeats a
//! t interval and a verdict that accounts for noise (`fathom_core::verdict`), and how to
//! read it.

use fathom_core::group::median;
use fathom_core::table::{Cell, Style, Table};
use fathom_core::verdict::costs::cost_text;
use fathom_core::verdict::Row;
use fathom_core::verdict::{Adjust, Against, MIN_REPEATS};

pub const COLUMNS: &[&str] = &[
    "step",
    "clients",
    "base ops/s",
    "new ops/s",
    "±",
    "new/base",
    "95% CI",
    "verdict",
    "costs",
    "cpu/o",
    "wKB/o",
    "r/o",
    "n",
    "new",
    "ver",
];

/// The comparison table; figure columns are NEW/BASE ratios of the medians.
pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(COLUMNS);
    let ratio = |x: Option<f64>| Cell::fixed(x, 2);
    for r in rows {
        t.push(vec![
            Cell::text(&r.step),
            Cell::count(r.clients as f64),
            Cell::num(median(&r.base_ops_per_sec)),
            Cell::num(median(&r.new_ops_per_sec)),
            match (r.base_cv, r.new_cv) {
                (Some(b), Some(n)) => Cell::Pair(b, n, Style::Spread, '/'),
                _ => Cell::Missing,
            },
            Cell::Number(r.ratio, Style::Fixed(3)),
            r.ci95.map_or(Cell::Missing, |(lo, hi)| {
                Cell::Pair(lo, hi, Style::Fixed(3), '-')
            }),
            Cell::text(r.verdict_text()),
            Cell::text(costs_text(r)),
            ratio(r.cpu_ratio),
            ratio(r.write_kb_ratio),
            ratio(r.reads_ratio),
            Cell::Pair(
                r.base_ops_per_sec.len() as f64,
                r.new_ops_per_sec.len() as f64,
                Style::Fixed(0),
                '/',
            ),
            Cell::text(&r.new),
            Cell::text(&r.new_version),
        ]);
    }
    t
}

/// The cost verdicts that are decided, as `cpu/o more, wKB/o same`; `-` for none.
fn costs_text(r: &Row) -> String {
    let decided: Vec<String> = r
        .costs
        .iter()
        .filter(|c| c.verdict.decided())
        .map(|c| format!("{} {}", c.figure, cost_text(c.verdict)))
        .collect();
    if decided.is_empty() {
        "-".into()
    } else {
        decided.join(", ")
    }
}

/// How to read the table of `against`, judged with the band ±`threshold`.
pub fn legend(against: &Against, threshold: f64) -> String {
    let base = against.bases.join(", ");
    let t = threshold * 100.0;
    let mut text = format!(
        "base: {base}. ±: coefficient of variation of ops/s over the runs, base/new. new/base: \
         ratio of the geometric means of ops/s; 95% CI: Welch's t interval of that ratio, on the \
         logarithms. verdict: faster or slower when the ratio is beyond ±{t:.1}%, same when it \
         is within ±{t:.1}% (two one-sided tests), each at 2.5% error; else undecided (\"at \
         max\": after an experiment's most rounds, whose verdicts share their 2.5% among the \
         rounds that could decide them); fewer than {MIN_REPEATS} runs on a side, no verdict. \
         costs: cpu/o, wKB/o, r/o and rKB/o judged the same way, more or less per operation \
         beyond ±{t:.1}% or the same within it (only the decided ones are listed). cpu/o, \
         wKB/o, r/o: new/base of the medians. n: runs base/new.\n"
    );
    let n = against.verdicts;
    text += &match against.adjust {
        Adjust::None if n > 1 => format!(
            "{n} verdicts, each wrong at most 2.5% of the time on its own: among many, some \
             may be wrong by chance (--adjust holm bounds the chance of any, --adjust bh the \
             share).\n"
        ),
        Adjust::None => String::new(),
        Adjust::Holm => format!(
            "{n} verdicts adjusted by Holm's method: the chance that any of them is wrong is at \
             most 2.5%.\n"
        ),
        Adjust::Bh => format!(
            "{n} verdicts adjusted by Benjamini-Hochberg: wrong ones are at most 2.5% of those \
             decided, in expectation.\n"
        ),
    };
    text
}
