//! The report's first screen: per step and setup the rate, p50 and p99 (and each kind's where a
//! step ran a few kinds: YCSB's READ and UPDATE), the ratio against the base setup with one run
//! or many, the bound in a word, and marks on a step whose rate did not hold within it (`~`) or
//! that other processes disturbed (`!`, as the step table marks it); then
//! the comparison in a sentence per step, as hyperfine says it ("a ran 4.67× as fast as b").

use crate::section::{Input, Section, Titled};
use fathom_schema::group::{median_step, Series};
use fathom_schema::result::IntervalRecord;
use fathom_schema::table::{Cell, Table};
use fathom_stats::steady::{self, Shift};
use fathom_stats::verdict::{self, Row, Verdict, MIN_REPEATS};

/// A step's kinds are listed under it when it ran this many or fewer (LinkBench's ten and
/// TPC-C's six have tables of their own).
const MAX_KINDS: usize = 5;

/// The summary and its headline: the comparisons in a sentence each, which the page puts
/// under its title.
pub struct Summary {
    pub section: Section,
    pub headline: Vec<String>,
}

/// What the table's rows say besides their cells: the not-steady lines, and whether a step was
/// disturbed.
#[derive(Default)]
struct Marks {
    unsteady: Vec<String>,
    disturbed: bool,
}

/// The summary, or nothing for runs without steps.
pub fn section(input: &Input) -> anyhow::Result<Option<Summary>> {
    let operands = [(String::new(), input.runs)];
    let sides = verdict::sides(&operands);
    let rows = match sides.len() {
        0 | 1 => Vec::new(),
        _ => super::relative::against(input, &sides)?.rows,
    };
    let ratio_column = match rows.first() {
        Some(r) => format!("× {}", r.base),
        None => "×".into(),
    };
    let header = [
        "step",
        "setup",
        "ops/s",
        "p50 µs",
        "p99 µs",
        &ratio_column,
        "bound",
    ];
    let mut t = Table::new(&header);
    let mut marks = Marks::default();
    for step in &input.steps {
        for s in &input.series {
            push_series(&mut t, &mut marks, (input, &rows), step, s);
        }
    }
    if t.rows.is_empty() {
        return Ok(None);
    }
    let clients = (input.series.iter()).any(|s| s.clients != input.series[0].clients);
    // A step that ran no operations (a flush, a wait for compaction) has no rate to compare.
    let compared = rows.iter().filter(|r| r.ratio.is_finite() && r.ratio > 0.0);
    let headline: Vec<String> = compared.map(|r| sentence(r, clients)).collect();
    let mut said = headline.clone();
    said.extend(marks.unsteady);
    if marks.disturbed {
        said.push("! other processes used the host during the step (the notes say which repeat and how much)".into());
    }
    let mut section = Section::new("Summary");
    section.tables.push(Titled {
        title: "summary".into(),
        table: t,
    });
    section.paragraph = (!said.is_empty()).then(|| said.join("\n"));
    Ok(Some(Summary { section, headline }))
}

/// Series `s`'s row at `step` (none where it did not run it or ran no operations) and its kinds'
/// rows under it.
fn push_series(
    t: &mut Table,
    marks: &mut Marks,
    (input, rows): (&Input, &[Row]),
    step: &str,
    s: &Series,
) {
    let repeats = s.step(step);
    if repeats.is_empty() {
        return;
    }
    let m = median_step(&repeats);
    if m.ops == 0 {
        return;
    }
    let label = s.label(&input.series);
    let ratio = match rows.iter().find(|r| of(r, s, step)) {
        Some(r) => Some(r.ratio),
        None => rows
            .iter()
            .any(|r| r.base == s.setup && r.step == step)
            .then_some(1.0),
    };
    let mut name = step.to_string();
    if super::steps::disturbed(&repeats) {
        name += " !";
        marks.disturbed = true;
    }
    if let Some((shift, (from, at))) = unsteadiest(s, step) {
        name += " ~";
        marks.unsteady.push(format!(
            "~ {step} on {label}: the rate {} within the step ({} ops/s at {from:.0} s, {} at {at:.0} s)",
            shift.words(),
            fathom_schema::table::rate(shift.before),
            fathom_schema::table::rate(shift.after),
        ));
    }
    let bound = super::bound::judged(s, &repeats, &m);
    t.push(vec![
        Cell::text(name),
        Cell::text(label.clone()),
        Cell::num(m.ops_per_sec),
        Cell::num(m.latency_us.p50),
        Cell::num(m.latency_us.p99),
        Cell::fixed(ratio, 2),
        Cell::text(bound.map_or("-".into(), |v| super::bound::verdict(&v.bound))),
    ]);
    let kinds = super::kinds::of_work(s, &m);
    if !(2..=MAX_KINDS).contains(&kinds.len()) {
        return;
    }
    let all: u64 = kinds.iter().map(|(_, o)| o.ops).sum();
    for (kind, o) in kinds {
        t.push(vec![
            Cell::text(format!("  {kind}")),
            Cell::text(label.clone()),
            Cell::num(m.ops_per_sec * o.ops as f64 / all as f64),
            Cell::num(o.latency_us.p50),
            Cell::num(o.latency_us.p99),
            Cell::Missing,
            Cell::text(""),
        ]);
    }
}

/// True when `row` compares series `s` at `step` with its base.
fn of(row: &Row, s: &Series, step: &str) -> bool {
    row.step == step && row.clients == s.clients && row.new == s.setup && row.workload == s.workload
}

/// "run: rocksdb ran 4.67× as fast as sqlite", with the verdict or why there is none, and the
/// client count when the runs hold several.
fn sentence(r: &Row, clients: bool) -> String {
    let (fast, slow, times) = match r.ratio >= 1.0 {
        true => (&r.new, &r.base, r.ratio),
        false => (&r.base, &r.new, 1.0 / r.ratio),
    };
    let step = match clients {
        true => format!("{} at {} client{}", r.step, r.clients, plural(r.clients)),
        false => r.step.clone(),
    };
    let n = r.base_ops_per_sec.len().min(r.new_ops_per_sec.len());
    let judged = match (r.verdict, r.ci95) {
        (Verdict::NoVerdict, _) => format!(
            "{n} run{} a side: no verdict; repeats = {MIN_REPEATS} give one",
            plural(n)
        ),
        (v, Some((lo, hi))) => format!(
            "{} {} than {}, 95% interval of the ratio {lo:.2}–{hi:.2}",
            r.new,
            v.text(),
            r.base
        ),
        (v, None) => format!("{} {} than {}", r.new, v.text(), r.base),
    };
    let judged = judged.replace(" same than ", " the same as ");
    format!("{step}: {fast} ran {times:.2}× as fast as {slow} ({judged})")
}

fn plural(n: usize) -> &'static str {
    match n {
        1 => "",
        _ => "s",
    }
}

/// The largest change of rate within the step over its repeats, and when its two ends were
/// (seconds into the measured part), when one is at least `steady::FACTOR`.
fn unsteadiest(s: &Series, step: &str) -> Option<(Shift, (f64, f64))> {
    let mut worst: Option<(Shift, (f64, f64))> = None;
    for (run, summary) in s.step_runs(step) {
        let Ok(intervals) = run.intervals(summary) else {
            continue;
        };
        let full = IntervalRecord::whole(&intervals);
        let rates: Vec<f64> = full.iter().map(|i| i.ops_per_sec).collect();
        if let Some(shift) = steady::unsteady(&rates) {
            let when = |i: usize| full.get(i).map_or(0.0, |i| i.t_start);
            if worst.is_none_or(|(w, _)| shift.ratio().ln().abs() > w.ratio().ln().abs()) {
                worst = Some((shift, (when(shift.from), when(shift.at))));
            }
        }
    }
    worst
}
