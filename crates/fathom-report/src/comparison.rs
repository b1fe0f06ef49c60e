//! The comparison table, shared by `fathom compare` and a report's relative throughput
//! against a base (seed 004's "QPS for my version / QPS for the base"): per step and client
//! count, the ratio of throughputs, the change in each cost figure, and with repeats a
//! t interval and a verdict that accounts for noise (`fathom_stats::verdict`), and how to
//! read it.

use fathom_schema::table::{Cell, Style, Table};
use fathom_stats::verdict::costs::cost_text;
use fathom_stats::verdict::Row;
use fathom_stats::verdict::{Adjust, Against, Design, Timing, MIN_REPEATS};

/// The comparison table's columns: the verdict's, then NEW/BASE of each cost figure
/// (`fathom_schema::figures::judged`), then the runs and the new side.
pub fn columns() -> Vec<&'static str> {
    let head = [
        "step",
        "clients",
        "base ops/s",
        "new ops/s",
        "±",
        "new/base",
        "95% CI",
        "verdict",
        "costs",
    ];
    let costs = fathom_schema::figures::judged().map(|f| f.column);
    head.into_iter()
        .chain(costs)
        .chain(["n", "new", "ver"])
        .collect()
}

/// The geometric mean of positive figures (NaN for none, or one that is not positive).
fn geometric(xs: &[f64]) -> f64 {
    if xs.is_empty() || xs.iter().any(|x| *x <= 0.0) {
        return f64::NAN;
    }
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

/// The runs a row judged: `N pairs` for rounds paired, else base/new.
fn runs(r: &Row) -> Cell {
    match r.design {
        Design::Paired => {
            let n = r.base_ops_per_sec.len().min(r.new_ops_per_sec.len());
            let pairs = n.saturating_sub(r.unpaired_left_out);
            Cell::text(format!("{pairs} pairs"))
        }
        Design::History => Cell::text(format!(
            "{} vs {} past",
            r.new_ops_per_sec.len(),
            r.history_runs
        )),
        Design::Unpaired => Cell::Pair(
            r.base_ops_per_sec.len() as f64,
            r.new_ops_per_sec.len() as f64,
            Style::Fixed(0),
            '/',
        ),
    }
}

/// The comparison table; every ratio is NEW/BASE of the geometric means its verdict judges.
pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(&columns());
    let ratio = |x: Option<f64>| Cell::fixed(x, 2);
    for r in rows {
        let mut row = vec![
            Cell::text(&r.step),
            Cell::count(r.clients as f64),
            Cell::num(geometric(&r.base_ops_per_sec)),
            Cell::num(geometric(&r.new_ops_per_sec)),
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
        ];
        for f in fathom_schema::figures::judged() {
            let cost = r.costs.iter().find(|c| c.figure == f.column);
            row.push(ratio(cost.and_then(|c| c.ratio)));
        }
        row.extend([runs(r), Cell::text(&r.new), Cell::text(&r.new_version)]);
        t.push(row);
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

/// How to read the table of `against`, judged with the band ±`threshold`, and what its rows'
/// design says of them.
pub fn legend(against: &Against, threshold: f64) -> String {
    let base = against.bases.join(", ");
    let t = threshold * 100.0;
    let costs: Vec<&str> = fathom_schema::figures::judged().map(|f| f.column).collect();
    let costs = costs.join(", ");
    let mut text = format!(
        "base: {base}. base ops/s, new ops/s: geometric means over the runs; ±: coefficient of \
         variation of ops/s, base/new. new/base: the ratio the verdict judges, of the geometric \
         means; 95% CI: its t interval on the logarithms, over the rounds' ratios where the runs \
         are paired (n: `N pairs`, the two setups' runs of each round of one experiment), else \
         Welch's (n: runs base/new). verdict: faster or slower when the ratio is beyond \
         ±{t:.1}%, same when it is within ±{t:.1}% (two one-sided tests), each at 2.5% error; \
         else undecided (\"at max\": after an experiment's most rounds, whose looks share the \
         2.5% by an O'Brien-Fleming boundary); fewer than {MIN_REPEATS} runs or pairs, no \
         verdict. costs: {costs} judged the same way, more or less per operation beyond ±{t:.1}% or \
         the same within it (only the decided ones are listed). {costs}: new/base of the \
         geometric means.\n"
    );
    let n = against.verdicts;
    text += &match against.adjust {
        Adjust::None if n > 1 => format!(
            "{n} verdicts, each wrong at most 2.5% of the time on its own: among many, some \
             may be wrong by chance (--adjust holm bounds the chance of any in a family, a \
             setup against its base in one figure; --adjust bh the share).\n"
        ),
        Adjust::None => String::new(),
        Adjust::Holm => format!(
            "{n} verdicts adjusted by Holm's method, family by family (a setup against its \
             base in one figure; `of N` says its size): the chance that any verdict of a \
             family is wrong is at most 2.5%.\n"
        ),
        Adjust::Bh => format!(
            "{n} verdicts adjusted by Benjamini-Hochberg, family by family (a setup against \
             its base in one figure): wrong ones are at most 2.5% of those decided, in \
             expectation.\n"
        ),
    };
    text += &design_notes(&against.rows);
    text
}

/// What the rows' design says of them: sides that ran apart in time, setups in a fixed order,
/// an order effect the rounds show; a line each, once per pair of setups.
pub fn design_notes(rows: &[Row]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut add = |line: String| {
        if !lines.contains(&line) {
            lines.push(line);
        }
    };
    for r in rows {
        let pair = format!("{} vs {}", r.new, r.base);
        if r.design == Design::History {
            add(format!(
                "note: {pair}: the sides ran apart in time; judged against the base's last {} \
                 runs in the results store, one session each (n: `N vs K past`), so the \
                 sessions' spread is in the interval",
                r.history_runs
            ));
        } else if r.timing == Timing::Apart && !r.base_ops_per_sec.is_empty() {
            add(format!(
                "warning: {pair}: every run of one side ran before every run of the other \
                 (\"runs apart\"): whatever changed between the two times counts as a \
                 difference, and verdicts are wrong more often than 2.5% (docs/verdicts.md: \
                 sessions); run both in one experiment, or judge against the base's history"
            ));
        }
        if r.setup_order.as_deref() == Some("fixed") {
            add(format!(
                "warning: {pair}: the setups ran in the same order in every round \
                 (setup_order = \"fixed\"): an effect of going second counts as a difference"
            ));
        }
        if let Some((effect, lo, hi)) = r.order_effect {
            if lo > 1.0 || hi < 1.0 {
                add(format!(
                    "note: {pair}, {} c{}: a run that went second in its round ran {:.3} times \
                     one that went first (95% CI {lo:.3}-{hi:.3}); the rotated order cancels \
                     it in the ratio, but it widens the interval",
                    r.step, r.clients, effect
                ));
            }
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}
