//! What bounded each step: the verdict `fathom_stats::bound::judge` gives over a step's repeats
//! — whose time, the bound, saturated or latency-bound with its evidence, the confidence and
//! what lowered it — and the largest shares of the judged time. With `--profile`, a CPU bound
//! names the functions the CPU was in; with `--waits=bpf-stacks`, a bound on a kind of wait
//! names the stack most of it was spent in.

use crate::section::{Input, Section, Titled};
use fathom_schema::table::{Cell, Table};
use fathom_stats::bound::judge::judge;
use fathom_stats::bound::{Bound, Share};

const LEGEND: &str = "\
what bounded each step: judged: whose time is judged (an embedded engine's clients, which run its code; beside a\n\
server its busy threads when the clients spend over half their time off a CPU, else the clients, whose CPU is\n\
fathom's); bound: the share of that time at least 40% and 10 points ahead of the next, or two close shares\n\
with 60% together and 10 points ahead of the third, else none; voted over repeats (unstable when no verdict\n\
has more than half). Shares: engine cpu, harness cpu (fathom's own), waiting for a cpu, paced (open loop,\n\
asleep until an operation's start), device (block IO waits); with --waits the time off a CPU is split by\n\
what the threads slept in: locks (futex), commits (fsync family), network, sleep, device (reads, page\n\
faults), off cpu (the rest; without --waits all but block IO). why: saturated when the resource was at its\n\
limit (host CPU under 5% idle; IOPS at 80% of the device's calibrated figure at the step's queue depth,\n\
bandwidth at 80% of its sequential figure, flushes at 80% of its synced-write rate: fathom calibrate),\n\
latency-bound when it was not (one operation's chain of waits bounded it), interference when the host's\n\
CPU was full and other processes had a share of it (for any verdict that blames the CPU); a two-part verdict\n\
says what held each part. confidence: high with a margin of 25 points, medium 15, else low; one level lower\n\
for each of: repeats that differ, 25% unexplained, disturbance, a soft device limit. In a seeded\n\
simulation at 15% run-to-run noise the rule names a share that is not the top one in 1.8% of its\n\
single-run verdicts, 0.4% over three repeats, 0.1% over five; high-confidence ones far less (docs/bounds.md).\n\
where: with --profile, the functions a CPU bound was in; with --waits=bpf-stacks, the stack a wait was spent in.\n\
The terminal lists where under the table and shows the shares with --columns all (the threads' time table has them).\n";

/// The table, a row per step and setup.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut table = Table::new(&[
        "step",
        "judged",
        "bound",
        "why",
        "confidence",
        "where",
        "shares",
        "setup",
    ]);
    // The terminal's table (`--columns fit`): `where` listed under it, the shares left to the
    // threads' time table, each of the confidence's reasons named in a word (the notes say
    // what it was).
    let fit = !input.page && input.opts.columns == crate::options::Columns::Fit;
    let (mut named, mut wheres) = (Vec::new(), Vec::new());
    for step in &input.steps {
        for s in &input.series {
            let repeats = s.step(step);
            if repeats.is_empty() {
                continue;
            }
            let median = fathom_schema::group::median_step(&repeats);
            let Some(v) = judged(s, &repeats, &median) else {
                continue;
            };
            let label = s.label(&input.series);
            let at = where_spent(s, &label, step, &v);
            if !at.is_empty() {
                wheres.push(format!("  {step}, {label}: {at}"));
            }
            let (confidence, in_words) = confidence(&v);
            named.push(in_words);
            table.push(vec![
                Cell::text(step),
                Cell::text(v.whose),
                Cell::text(verdict(&v.bound)),
                Cell::text(v.qualifier.clone().unwrap_or_else(|| "-".into())),
                Cell::text(confidence),
                Cell::text(if at.is_empty() { "-".to_string() } else { at }),
                Cell::text(top(&v.shares, 3)),
                Cell::text(label),
            ]);
        }
    }
    let mut section = Section::new("What bounded each step");
    if !table.rows.is_empty() {
        if fit {
            let mut terminal = table.without(&["where", "shares"]);
            for (row, named) in terminal.rows.iter_mut().zip(named) {
                row[4] = Cell::text(named);
            }
            section.terminal = Some(vec![Titled {
                title: "bound".into(),
                table: terminal,
            }]);
            if !wheres.is_empty() {
                section.paragraph =
                    Some(format!("where the bound was spent:\n{}", wheres.join("\n")));
            }
        }
        section.tables.push(Titled {
            title: "bound".into(),
            table,
        });
        section.legend = Some(LEGEND);
    }
    Ok(section.if_any().into_iter().collect())
}

/// Where series `s`'s step's bound was spent: with `--profile`, the functions a CPU bound was
/// in; with `--waits=bpf-stacks`, the stack a wait was spent in; empty without either.
fn where_spent(
    s: &fathom_schema::group::Series,
    label: &str,
    step: &str,
    v: &fathom_stats::bound::judge::Verdict,
) -> String {
    let mut at = Vec::new();
    if cpu_bound(&v.bound) {
        if let Some(top) =
            super::profiles::of_series(s, label, step).and_then(|p| top_functions(&p))
        {
            at.push(format!("on the CPU: {top}"));
        }
    }
    if let Some(waiting) = waiting_stack(s, label, step, v) {
        at.push(format!("waiting in {waiting}"));
    }
    at.join("; ")
}

/// The verdict's confidence with what lowered it, whole and with each reason named in a word.
fn confidence(v: &fathom_stats::bound::judge::Verdict) -> (String, String) {
    let level = v.confidence.name();
    if v.why.is_empty() {
        return (level.to_string(), level.to_string());
    }
    let names: Vec<&str> = (v.why.iter())
        .map(|w| w.split(':').next().unwrap_or(w))
        .collect();
    (
        format!("{level} ({})", v.why.join("; ")),
        format!("{level} ({})", names.join("; ")),
    )
}

/// What bounded series `s`'s step over its `repeats` (their `median`), judged against the
/// device limits its first run recorded; `None` where its time was not measured.
pub(crate) fn judged(
    s: &fathom_schema::group::Series,
    repeats: &[&fathom_schema::result::StepSummary],
    median: &fathom_schema::result::StepSummary,
) -> Option<fathom_stats::bound::judge::Verdict> {
    let limits = (s.runs.first()).and_then(|r| r.manifest.host.device_limits.as_ref());
    judge(repeats, median, limits)
}

/// True when the bound names a share of CPU (the engine's or fathom's own).
fn cpu_bound(b: &Bound) -> bool {
    let cpu = |name: &str| name == "engine cpu" || name == "harness cpu";
    match b {
        Bound::One(a) => cpu(a),
        Bound::Two(a, b) => cpu(a) || cpu(b),
        _ => false,
    }
}

/// With the sleeps' stacks kept, the stack most of the bounding wait was spent in, as
/// `process: a > b > c [kernel: f] (62% of it)`.
fn waiting_stack(
    s: &fathom_schema::group::Series,
    label: &str,
    step: &str,
    v: &fathom_stats::bound::judge::Verdict,
) -> Option<String> {
    // The first named share that is a kind of wait.
    let named: &[&str] = match &v.bound {
        Bound::One(a) => &[a],
        Bound::Two(a, b) => &[a, b],
        _ => &[],
    };
    let kinds = named
        .iter()
        .map(|n| super::offcpu::kinds_of_share(n))
        .find(|k| !k.is_empty())?;
    let group = if v.whose == "clients" {
        "clients"
    } else {
        "engine"
    };
    let asleep = super::offcpu::of_series(s, label, step)?;
    let (stack, of) = super::offcpu::heaviest(&asleep, group, kinds)?;
    Some(format!("{stack} ({:.0}% of it)", 100.0 * of))
}

/// The three functions most of a profile's samples were in, as `name 12%`.
fn top_functions(p: &super::profiles::Profiled) -> Option<String> {
    let total = p.stacks.total();
    if total == 0 {
        return None;
    }
    let top: Vec<String> = p
        .stacks
        .top(3, true)
        .iter()
        .map(|(f, s)| {
            format!(
                "{} {:.0}%",
                super::profiles::short_name(f),
                100.0 * s.own as f64 / total as f64
            )
        })
        .collect();
    (!top.is_empty()).then(|| top.join(", "))
}

pub(crate) fn verdict(b: &Bound) -> String {
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
