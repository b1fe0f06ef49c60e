//! The report's first screen: per step and setup the rate, p50 and p99 (and each kind's where a
//! step ran a few kinds: YCSB's READ and UPDATE), the ratio against the base setup with one run
//! or many, the bound in a word, and marks on a step whose rate did not hold within it (`~`) or
//! that other processes disturbed (`!`, as the step table marks it); then
//! the comparison in a sentence per step, as hyperfine says it ("a ran 4.67× as fast as b").

use crate::section::{Input, Section, Titled};
use fathom_api::kind::Role;
use fathom_schema::group::{median_step, Series};
use fathom_schema::result::StepSummary;
use fathom_schema::table::{Cell, Table};
use fathom_stats::bound::judge::judge;
use fathom_stats::steady::{self, Shift};
use fathom_stats::verdict::{self, Row, Verdict, MIN_REPEATS};

/// A step's kinds are listed under it when it ran this many or fewer (LinkBench's ten and
/// TPC-C's six have tables of their own).
const MAX_KINDS: usize = 5;

/// The summary, or nothing for runs without steps.
pub fn section(input: &Input) -> anyhow::Result<Option<Section>> {
    let rows = comparisons(input)?;
    let base = rows.first().map(|r| r.base.clone());
    let ratio_column = match &base {
        Some(b) => format!("× {b}"),
        None => "×".into(),
    };
    let mut t = Table::new(&[
        "step",
        "setup",
        "ops/s",
        "p50 µs",
        "p99 µs",
        &ratio_column,
        "bound",
    ]);
    let mut lines = Vec::new();
    let mut disturbed = false;
    for step in &input.steps {
        for s in &input.series {
            let repeats = s.step(step);
            if repeats.is_empty() {
                continue;
            }
            let m = median_step(&repeats);
            let label = s.label(&input.series);
            let row = rows.iter().find(|r| of(r, s, step));
            let ratio = match (
                row,
                rows.iter().any(|r| r.base == s.setup && r.step == *step),
            ) {
                (Some(r), _) => Some(r.ratio),
                (None, true) => Some(1.0),
                _ => None,
            };
            let mut name = step.clone();
            if (repeats.iter()).any(|r| r.host.disturbance(r.window_seconds).is_some()) {
                name += " !";
                disturbed = true;
            }
            if let Some((shift, (from, at))) = unsteadiest(s, step) {
                name += " ~";
                lines.push(format!(
                    "~ {step} on {label}: the rate {} within the step ({} ops/s at {from:.0} s, {} at {at:.0} s)",
                    shift.words(),
                    fathom_schema::table::rate(shift.before),
                    fathom_schema::table::rate(shift.after),
                ));
            }
            t.push(vec![
                Cell::text(name),
                Cell::text(label.clone()),
                Cell::num(m.ops_per_sec),
                Cell::num(m.latency_us.p50),
                Cell::num(m.latency_us.p99),
                Cell::fixed(ratio, 2),
                Cell::text(bound_word(s, &repeats, &m)),
            ]);
            for (kind, ops_per_sec, p50, p99) in kinds(s, &m) {
                t.push(vec![
                    Cell::text(format!("  {kind}")),
                    Cell::text(label.clone()),
                    Cell::num(ops_per_sec),
                    Cell::num(p50),
                    Cell::num(p99),
                    Cell::Missing,
                    Cell::text(""),
                ]);
            }
        }
    }
    if t.rows.is_empty() {
        return Ok(None);
    }
    let clients = input
        .series
        .iter()
        .any(|s| s.clients != input.series[0].clients);
    let mut said: Vec<String> = rows.iter().map(|r| sentence(r, clients)).collect();
    said.extend(lines);
    if disturbed {
        said.push("! other processes used the host during the step (the notes say which repeat and how much)".into());
    }
    let mut section = Section::new("Summary");
    section.tables.push(Titled {
        title: "summary".into(),
        table: t,
    });
    section.paragraph = (!said.is_empty()).then(|| said.join("\n"));
    Ok(Some(section))
}

/// The comparisons of every setup against the base (`--base`, else the first), with one run
/// a side or more; none when the runs hold one setup.
fn comparisons(input: &Input) -> anyhow::Result<Vec<Row>> {
    let operands = [(String::new(), input.runs)];
    let sides = verdict::sides(&operands);
    if sides.len() < 2 {
        return Ok(Vec::new());
    }
    let base = input.opts.judging.base.as_deref();
    Ok(verdict::against_bases(&sides, base, &input.opts.judge(), |_, _| {})?.rows)
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

/// The bound of the step in a word, "-" when it was not judged.
fn bound_word(s: &Series, repeats: &[&StepSummary], m: &StepSummary) -> String {
    let limits = (s.runs.first()).and_then(|r| r.manifest.host.device_limits.as_ref());
    judge(repeats, m, limits).map_or("-".into(), |v| super::bound::verdict(&v.bound))
}

/// Each kind of the step's work with its rate, p50 and p99, when it ran two to `MAX_KINDS`.
fn kinds(s: &Series, m: &StepSummary) -> Vec<(String, f64, f64, f64)> {
    let shown = fathom_workloads::find(&s.workload).is_ok_and(|w| w.report.kinds_shown);
    let aside = |r: Role| matches!(r, Role::Maintenance | Role::Background | Role::Check);
    let work: Vec<_> = (m.by_op.iter())
        .filter(|(_, o)| o.ops > 0 && !o.role.is_some_and(aside))
        .collect();
    if shown || work.len() < 2 || work.len() > MAX_KINDS {
        return Vec::new();
    }
    let all: u64 = work.iter().map(|(_, o)| o.ops).sum();
    (work.into_iter())
        .map(|(k, o)| {
            let share = o.ops as f64 / all as f64;
            (
                k.clone(),
                m.ops_per_sec * share,
                o.latency_us.p50,
                o.latency_us.p99,
            )
        })
        .collect()
}

/// The largest change of rate within the step over its repeats, and when its two ends were
/// (seconds into the measured part), when one is at least `steady::FACTOR`.
fn unsteadiest(s: &Series, step: &str) -> Option<(Shift, (f64, f64))> {
    let mut worst: Option<(Shift, (f64, f64))> = None;
    for (run, summary) in s.step_runs(step) {
        let Ok(intervals) = run.intervals(summary) else {
            continue;
        };
        // Intervals cut short (the last, by the step's end, as its clients stop) rate on
        // too little time.
        let longest = (intervals.iter()).fold(0.0_f64, |a, i| a.max(i.t_end - i.t_start));
        let last = intervals.len().saturating_sub(1);
        let full: Vec<_> = (intervals.iter().enumerate())
            .filter(|(n, i)| {
                let length = i.t_end - i.t_start;
                length >= longest / 2.0 && (*n < last || length >= 0.9 * longest)
            })
            .map(|(_, i)| i)
            .collect();
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
