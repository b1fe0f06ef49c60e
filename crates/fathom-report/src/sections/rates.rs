//! Arrival rates: a search for the highest rate that meets a target (`fathom findmax`), as a
//! table of its probes with the rate it found and, on the page, latency against rate; and the
//! intervals of a step whose rate changed as it ran (a workload file's list of rates, steps or
//! ramp), the intended rate beside what was done.

use crate::draw::svg::{Line, LineChart};
use crate::section::{Chart, Input, Section, Titled};
use fathom_schema::result::StepSummary;
use fathom_schema::store::LoadedRun;
use fathom_schema::table::{Cell, Table};

const PROBES: &[&str] = &[
    "probe", "rate", "ops/s", "p50", "p99", "p99.9", "failed", "met", "measured",
];

const LEGEND: &str = "\
findmax: each probe is a step of the run: `@max` closed loop (the capacity), then open loop at `rate`\n\
operations per second (latency from each operation's intended start); met: every condition of the target\n\
held and the step kept up with its arrivals (95% of them done). The search's best rate is then confirmed:\n\
`.settle` (not judged) brings the database to that rate, `.c1`-`.c3` must all meet, a miss steps 4% lower.\n\
p50, p99, p99.9 in ms, of every kind together. schedule: a step's intervals, the rate meant to arrive in\n\
each (intended) beside the operations done.\n";

/// The searches' tables and charts, and the schedules' interval tables.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut section = Section::new("Arrival rates");
    section.legend = Some(LEGEND);
    for run in input.runs {
        let label = format!(
            "{} ({})",
            run.manifest.setup.name,
            fathom_api::units::clients(run.manifest.clients)
        );
        for step in searched_steps(run) {
            let probes: Vec<&StepSummary> = (run.steps.iter())
                .filter(|s| s.probe.as_ref().is_some_and(|p| p.step == step))
                .collect();
            section.tables.push(probe_table(&step, &label, &probes));
            if input.page {
                section
                    .charts
                    .push(Chart::Line(probe_chart(&step, &label, &probes)));
            }
        }
        for s in &run.steps {
            if let Some(t) = schedule_table(run, s, &label)? {
                section.tables.push(t);
            }
        }
    }
    Ok(section.if_any().into_iter().collect())
}

/// The steps a run searched, in order.
fn searched_steps(run: &LoadedRun) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in run.steps.iter().filter_map(|s| s.probe.as_ref()) {
        if !out.contains(&p.step) {
            out.push(p.step.clone());
        }
    }
    out
}

/// The rate the search reports (its confirmed rate, else the highest that met the target) and
/// whether it was confirmed.
pub fn highest(probes: &[&StepSummary]) -> Option<(f64, bool)> {
    let records: Vec<&fathom_schema::result::Probe> =
        probes.iter().filter_map(|s| s.probe.as_ref()).collect();
    fathom_stats::findmax::reported(&records)
}

fn probe_table(step: &str, label: &str, probes: &[&StepSummary]) -> Titled {
    let mut table = Table::new(PROBES);
    let mut by_rate = probes.to_vec();
    by_rate.sort_by(|a, b| {
        let r = |s: &StepSummary| s.probe.as_ref().and_then(|p| p.rate).unwrap_or(f64::MAX);
        r(a).total_cmp(&r(b))
    });
    let ms = |us: f64| Cell::fixed(Some(us / 1e3), 2);
    for s in by_rate {
        let Some(p) = &s.probe else { continue };
        table.push(vec![
            Cell::text(&s.step),
            p.rate.map_or(Cell::text("closed"), Cell::num),
            Cell::num(s.ops_per_sec),
            ms(s.latency_us.p50),
            ms(s.latency_us.p99),
            ms(s.latency_us.p99_9),
            Cell::count(s.failed as f64),
            Cell::text(match (p.rate, p.met, p.phase) {
                (None, _, _) => "-",
                (_, _, fathom_schema::result::ProbePhase::Settle) => "settle",
                (Some(_), true, _) => "yes",
                (Some(_), false, _) => "no",
            }),
            Cell::text(&p.judged),
        ]);
    }
    let target = probes
        .iter()
        .find_map(|s| s.probe.as_ref())
        .map_or("", |p| p.target.as_str());
    let found = match highest(probes) {
        Some((r, true)) => format!(
            "highest rate meeting {target}: {} ops/s, confirmed by {} probes in a row",
            fathom_schema::table::num(r),
            fathom_stats::findmax::CONFIRMATIONS
        ),
        Some((r, false)) => format!(
            "highest rate meeting {target}: {} ops/s, met once, not confirmed",
            fathom_schema::table::num(r)
        ),
        None => format!("no rate met {target}"),
    };
    Titled {
        title: format!("findmax {step}, {label}: {found}"),
        table,
    }
}

fn probe_chart(step: &str, label: &str, probes: &[&StepSummary]) -> LineChart {
    let mut open: Vec<(f64, &StepSummary)> = (probes.iter())
        .filter_map(|s| Some((s.probe.as_ref()?.rate?, *s)))
        .collect();
    open.sort_by(|a, b| a.0.total_cmp(&b.0));
    let line = |name: &str, f: fn(&StepSummary) -> f64| Line {
        name: name.into(),
        points: open.iter().map(|(r, s)| (*r, f(s) / 1e3)).collect(),
    };
    LineChart {
        title: format!("findmax {step}, {label}: latency against the arrival rate"),
        x_label: "intended operations per second".into(),
        y_label: "ms".into(),
        lines: vec![
            line("p50", |s| s.latency_us.p50),
            line("p99", |s| s.latency_us.p99),
            line("p99.9", |s| s.latency_us.p99_9),
        ],
        log_y: true,
        x_names: vec![],
    }
}

/// A step's intervals when the rate meant to arrive changed over it.
fn schedule_table(run: &LoadedRun, s: &StepSummary, label: &str) -> anyhow::Result<Option<Titled>> {
    if s.arrival_rate.is_none() || s.probe.is_some() {
        return Ok(None);
    }
    let intervals = run.intervals(s)?;
    let rates: Vec<f64> = intervals
        .iter()
        .filter_map(|i| i.intended_ops_per_sec)
        .collect();
    let (lo, hi) = rates
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), r| (l.min(*r), h.max(*r)));
    if rates.is_empty() || hi <= lo * 1.01 {
        return Ok(None);
    }
    let mut table = Table::new(&["t", "intended", "ops/s", "p50", "p99", "p99.9"]);
    let ms = |us: f64| Cell::fixed(Some(us / 1e3), 2);
    for i in &intervals {
        table.push(vec![
            Cell::fixed(Some(i.t_end), 0),
            Cell::opt(i.intended_ops_per_sec),
            Cell::num(i.ops_per_sec),
            ms(i.latency_us.p50),
            ms(i.latency_us.p99),
            ms(i.latency_us.p99_9),
        ]);
    }
    Ok(Some(Titled {
        title: format!("schedule {}, {label}: each interval", s.step),
        table,
    }))
}
