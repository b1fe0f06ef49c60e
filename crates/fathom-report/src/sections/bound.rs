//! What bounded each step: the shares of the judged threads' time (an embedded engine's
//! clients; beside a server, its busy threads when the clients mostly wait on it, else the
//! clients) and the verdict the one rule gives (`fathom_core::bound`), voted over repeats, with
//! whether the host's CPU was saturated.

use crate::section::{Input, Section, Titled};
use fathom_core::bound::{shares_of, Bound, Share, RULE};
use fathom_core::result::StepSummary;
use fathom_core::table::{Cell, Table};

const LEGEND: &str = "\
what bounded each step: judged: whose time is judged (an embedded engine's clients, which run its code; beside a\n\
server its busy threads when the clients spend over half their time off a CPU, else the clients, whose CPU is\n\
fathom's); bound: the share of that time at least 40% and 10 points ahead of the next, or two close shares\n\
with 60% together and 10 points ahead of the third, else none; voted over repeats (unstable when no verdict\n\
has more than half); shares: the three largest in the median repeat; host: saturated when the host's CPU was\n\
under 5% idle. In a seeded simulation at 15% run-to-run noise the rule names a share that is not the top\n\
one in 1.8% of its single-run verdicts, 0.4% over three repeats, 0.1% over five (docs/bounds.md).\n";

/// The table, a row per step and setup.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut table = Table::new(&["step", "judged", "bound", "shares", "host", "setup"]);
    for step in &input.steps {
        for s in &input.series {
            let repeats = s.step(step);
            let judged: Vec<(&str, Vec<Share>)> =
                repeats.iter().filter_map(|r| judged_shares(r)).collect();
            if judged.is_empty() {
                continue;
            }
            let shares: Vec<Vec<Share>> = judged.iter().map(|j| j.1.clone()).collect();
            let median = fathom_core::group::median_step(&repeats);
            let Some((whose, mid)) = judged_shares(&median) else {
                continue;
            };
            table.push(vec![
                Cell::text(step),
                Cell::text(whose),
                Cell::text(verdict(&RULE.vote(&shares))),
                Cell::text(top(&mid, 3)),
                Cell::text(if median.host.idle_pct < 5.0 {
                    "saturated"
                } else {
                    "not saturated"
                }),
                Cell::text(s.label(&input.series)),
            ]);
        }
    }
    let mut section = Section::new("What bounded each step");
    if !table.rows.is_empty() {
        section.tables.push(Titled {
            title: "bound".into(),
            table,
        });
        section.legend = Some(LEGEND);
    }
    Ok(section.if_any().into_iter().collect())
}

/// Whose time a step is judged by, and its shares.
fn judged_shares(m: &StepSummary) -> Option<(&'static str, Vec<Share>)> {
    let time = m.time.as_ref()?;
    let c = &time.clients;
    if c.wall_s <= 0.0 {
        return None;
    }
    // Beside a server fathom's process is the harness: its clients' CPU is fathom's.
    let server = m.per_op.cpu_us_harness.is_some();
    if !server {
        let harness = m.harness_ns_per_op.map(|ns| ns * m.ops as f64 / 1e9);
        return Some(("clients", shares_of(c, harness)));
    }
    if c.other_s / c.wall_s > 0.5 && time.engine.wall_s > 0.0 {
        Some(("server's busy threads", shares_of(&time.engine, None)))
    } else {
        Some(("clients", shares_of(c, Some(c.cpu_s))))
    }
}

fn verdict(b: &Bound) -> String {
    match b {
        Bound::One(a) => (*a).to_string(),
        Bound::Two(a, b) => format!("{a} and {b}"),
        Bound::None => "no single bound".into(),
        Bound::Unstable => "unstable".into(),
    }
}

/// The `n` largest shares, as `name 72%`.
fn top(shares: &[Share], n: usize) -> String {
    let mut s = shares.to_vec();
    s.sort_by(|a, b| b.fraction.total_cmp(&a.fraction));
    s.iter()
        .take(n)
        .map(|s| format!("{} {:.0}%", s.name, 100.0 * s.fraction))
        .collect::<Vec<_>>()
        .join(", ")
}
