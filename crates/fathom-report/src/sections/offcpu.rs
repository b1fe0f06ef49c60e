//! Where each step's time off a CPU went (`--waits=bpf-stacks`): the stacks its threads slept
//! in, by group and kind of wait, heaviest first, and an off-CPU flame graph per step on the
//! page beside the CPU ones. The bound section names the heaviest of these stacks for the share
//! that bounded a step.

use crate::section::{Chart, Input, Section, Titled};
use fathom_schema::group::Series;
use fathom_schema::profile::{is_kernel, is_plumbing, is_unnamed, Stacks};
use fathom_schema::store::slug;
use fathom_schema::table::{Cell, Style, Table};

/// Stacks listed per step.
const TOP: usize = 5;

/// One series' step's time asleep, its repeats' stacks together (ns).
pub struct Asleep {
    pub label: String,
    pub step: String,
    pub stacks: Stacks,
    /// Operations over the repeats whose stacks these are.
    pub ops: u64,
    /// Files that could not be read.
    pub problems: Vec<String>,
}

/// A series' step, when any repeat kept its sleeps' stacks.
pub fn of_series(s: &Series, label: &str, step: &str) -> Option<Asleep> {
    let mut out: Option<Asleep> = None;
    for run in &s.runs {
        let Some(summary) = run.steps.iter().find(|x| x.step == step) else {
            continue;
        };
        let Some(file) = summary.waits.as_ref().and_then(|w| w.stacks.as_ref()) else {
            continue;
        };
        let a = out.get_or_insert_with(|| Asleep {
            label: label.to_string(),
            step: step.to_string(),
            stacks: Stacks::default(),
            ops: 0,
            problems: Vec::new(),
        });
        a.ops += summary.ops;
        match Stacks::read(&run.path.join(file)) {
            Ok(st) => a.stacks.lines.extend(st.lines),
            Err(e) => a.problems.push(format!("{e:#}")),
        }
    }
    out
}

fn all(input: &Input) -> Vec<Asleep> {
    let mut out = Vec::new();
    for step in &input.steps {
        for s in &input.series {
            if let Some(a) = of_series(s, &s.label(&input.series), step) {
                out.push(a);
            }
        }
    }
    out
}

/// The kinds of wait (`--waits`' names) a share of the bound stands for.
pub fn kinds_of_share(share: &str) -> &'static [&'static str] {
    match share {
        "locks" => &["futex"],
        "commits" => &["fsync"],
        "device" => &["io", "fault"],
        "network" => &["socket"],
        "sleep" | "engine throttling" => &["sleep"],
        "off cpu" => &["other"],
        _ => &[],
    }
}

/// The heaviest stack of `group` (`clients`, `engine`, `harness`) among `kinds`, described,
/// and its share of their time.
pub fn heaviest(a: &Asleep, group: &str, kinds: &[&str]) -> Option<(String, f64)> {
    let of = |f: &[String]| {
        f.first().is_some_and(|g| g == group)
            && f.get(1).is_some_and(|k| kinds.contains(&k.as_str()))
    };
    let lines: Vec<&(Vec<String>, u64)> = a.stacks.lines.iter().filter(|(f, _)| of(f)).collect();
    let total: u64 = lines.iter().map(|l| l.1).sum();
    let top = lines.iter().max_by_key(|l| l.1)?;
    (total > 0).then(|| (describe(&top.0), top.1 as f64 / total as f64))
}

/// A folded stack (`group;kind;process;user frames;kernel frames`) in a line: its three
/// innermost named user frames, outermost first, and the kernel function it slept in.
pub fn describe(frames: &[String]) -> String {
    let body = frames.get(3..).unwrap_or_default();
    let user: Vec<&str> = body
        .iter()
        .filter(|f| !is_kernel(f) && !is_unnamed(f) && !is_plumbing(f))
        .map(|f| f.as_str())
        .collect();
    let user: Vec<String> = user[user.len().saturating_sub(3)..]
        .iter()
        .map(|f| super::profiles::short_name(f))
        .collect();
    let slept = body
        .iter()
        .rev()
        .filter(|f| is_kernel(f))
        .map(|f| f.trim_end_matches("_[k]"))
        .find(|f| !f.contains("schedule") && !f.contains("bpf_"));
    let process = frames.get(2).map_or("", String::as_str);
    let mut out = format!("{process}: ");
    out.push_str(&if user.is_empty() {
        "no named frame".to_string()
    } else {
        user.join(" > ")
    });
    if let Some(k) = slept {
        out.push_str(&format!(" [kernel: {k}]"));
    }
    out
}

/// The page's anchor of one series' step's off-CPU graph.
fn anchor(label: &str, step: &str) -> String {
    format!("offcpu-{}-{}", slug(label), slug(step))
}

fn table(all: &[Asleep]) -> Table {
    let mut t = Table::new(&["step", "#", "asleep%", "threads", "kind", "stack", "setup"]);
    for a in all {
        let total = a.stacks.total();
        let mut lines: Vec<&(Vec<String>, u64)> = a.stacks.lines.iter().collect();
        lines.sort_by_key(|l| std::cmp::Reverse(l.1));
        for (i, (frames, ns)) in lines.into_iter().take(TOP).enumerate() {
            t.push(vec![
                Cell::text(&a.step),
                Cell::count((i + 1) as f64),
                Cell::styled(
                    (total > 0).then(|| 100.0 * *ns as f64 / total as f64),
                    Style::Percent,
                ),
                Cell::text(frames.first().map_or("", String::as_str)),
                Cell::text(frames.get(1).map_or("", String::as_str)),
                Cell::text(describe(frames)),
                Cell::text(&a.label),
            ]);
        }
    }
    t
}

const LEGEND: &str = "\nthe stacks the counted threads slept in (--waits=bpf-stacks: each sleep \
timed by the eBPF program, its kernel stack and its user stack kept where it began), repeats \
together: asleep% of the step's time asleep; threads and kind as in the waits table; stack: the \
process, its three innermost named functions (a process whose executable has no frame pointers \
shows its innermost frame alone) and the kernel function it slept in. On the page, a flame \
graph of the time asleep per step (ns).";

/// The section, when any step kept its sleeps' stacks.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let all = all(input);
    if all.is_empty() {
        return Ok(Vec::new());
    }
    let mut section = Section::new("Where the time off a CPU went");
    section.tables.push(Titled {
        title: "stacks asleep".into(),
        table: table(&all),
    });
    section.legend = Some(LEGEND);
    let problems: Vec<String> = all
        .iter()
        .flat_map(|a| {
            a.problems
                .iter()
                .map(move |p| format!("{} {}: {p}", a.label, a.step))
        })
        .collect();
    section.paragraph = (!problems.is_empty()).then(|| problems.join("\n"));
    if input.page {
        for a in &all {
            section.charts.push(Chart::Flame(crate::draw::flame::graph(
                &anchor(&a.label, &a.step),
                &format!("{} {}: time off a CPU", a.label, a.step),
                &a.stacks,
            )?));
        }
    }
    Ok(vec![section])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(s: &str) -> Vec<String> {
        s.split(';').map(str::to_string).collect()
    }

    #[test]
    fn a_stack_reads_as_its_innermost_named_frames_and_its_kernel_wait() {
        let f = frames(
            "engine;fsync;postgres;[unknown];main;PostmasterMain;PostgresMain;[unknown];\
             CommitTransactionCommand;XLogFlush;fdatasync;entry_SYSCALL_64_[k];do_fsync_[k];\
             wait_for_completion_io_timeout_[k];io_schedule_timeout_[k];schedule_[k];__schedule_[k]",
        );
        assert_eq!(
            describe(&f),
            "postgres: CommitTransactionCommand > XLogFlush > fdatasync \
             [kernel: wait_for_completion_io_timeout]"
        );
        let f = frames("clients;futex;fathom;syscall;futex_do_wait_[k];schedule_[k]");
        assert_eq!(describe(&f), "fathom: syscall [kernel: futex_do_wait]");
    }

    #[test]
    fn the_heaviest_stack_of_a_group_and_kind() {
        let a = Asleep {
            label: "pg".into(),
            step: "s".into(),
            stacks: Stacks::parse(
                "engine;futex;postgres;LWLockAcquire;futex_wait_[k] 300\n\
                 engine;futex;postgres;ProcSleep;futex_wait_[k] 100\n\
                 engine;fsync;postgres;XLogFlush;do_fsync_[k] 900\n\
                 clients;futex;fathom;syscall;futex_wait_[k] 5000\n",
            )
            .unwrap(),
            ops: 1,
            problems: Vec::new(),
        };
        let (d, share) = heaviest(&a, "engine", kinds_of_share("locks")).unwrap();
        assert_eq!(d, "postgres: LWLockAcquire [kernel: futex_wait]");
        assert!((share - 0.75).abs() < 1e-9);
        assert!(heaviest(&a, "engine", kinds_of_share("device")).is_none());
    }
}
