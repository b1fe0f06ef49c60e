//! Where each profiled step's CPU went (`fathom run --profile`): per step and setup, the
//! shares of the engine, fathom, the kernel and the rest, and the functions with the most
//! samples by self and by total; on the page, a flame graph per step, each reachable from its
//! row of the step table. Repeats' stacks are added together.

use crate::section::{Chart, Input, Section};
use fathom_schema::group::Series;
use fathom_schema::profile::{Part, ProfileRecord, Stacks};
use fathom_schema::store::slug;
use fathom_schema::table::{Cell, Style, Table, Titled};

/// Functions listed per step, by self and by total.
pub const TOP: usize = 10;

/// A profile that lost more of its samples than this (%) says so.
pub const LOST_PCT: f64 = 5.0;

/// The page's anchor of one series' step's flame graph.
pub fn anchor(label: &str, step: &str) -> String {
    format!("profile-{}-{}", slug(label), slug(step))
}

/// One series' step, profiled: its repeats' stacks together.
pub struct Profiled<'a> {
    pub label: String,
    pub step: String,
    /// The first repeat's record (how it was taken).
    pub record: &'a ProfileRecord,
    pub stacks: Stacks,
    /// Operations over the profiled repeats.
    pub ops: u64,
    /// Samples and lost samples over the repeats.
    pub samples: u64,
    /// perf's own CPU seconds over the repeats.
    pub perf_cpu_seconds: f64,
    pub lost: u64,
    /// Problems the records name, each once.
    pub problems: Vec<String>,
}

impl Profiled<'_> {
    /// Lost samples as a share of those taken and lost.
    pub fn lost_pct(&self) -> f64 {
        fathom_schema::profile::lost_pct(self.samples, self.lost)
    }
}

impl<'a> Profiled<'a> {
    /// One profile on its own (`fathom profile -- COMMAND`): its record and stacks.
    pub fn single(label: &str, step: &str, record: &'a ProfileRecord, stacks: Stacks) -> Self {
        Profiled {
            label: label.to_string(),
            step: step.to_string(),
            record,
            stacks,
            ops: 0,
            samples: record.samples,
            perf_cpu_seconds: record.perf_cpu_seconds,
            lost: record.lost,
            problems: record.problems.clone(),
        }
    }
}

/// A series' profiled step, when any repeat has a profile.
pub fn of_series<'a>(s: &Series<'a>, label: &str, step: &str) -> Option<Profiled<'a>> {
    let mut out: Option<Profiled> = None;
    for run in &s.runs {
        let Some(summary) = run.steps.iter().find(|x| x.step == step) else {
            continue;
        };
        let Some(record) = summary.profile.as_ref() else {
            continue;
        };
        let path = run.path.join(&record.folded);
        let (stacks, missing) = match Stacks::read(&path) {
            Ok(s) => (s, None),
            Err(e) => (Stacks::default(), Some(format!("{e:#}"))),
        };
        let p = out.get_or_insert_with(|| Profiled {
            label: label.to_string(),
            step: step.to_string(),
            record,
            stacks: Stacks::default(),
            ops: 0,
            samples: 0,
            perf_cpu_seconds: 0.0,
            lost: 0,
            problems: Vec::new(),
        });
        p.stacks.lines.extend(stacks.lines);
        p.ops += summary.ops;
        p.samples += record.samples;
        p.perf_cpu_seconds += record.perf_cpu_seconds;
        p.lost += record.lost;
        for problem in record.problems.iter().cloned().chain(missing) {
            if !p.problems.contains(&problem) {
                p.problems.push(problem);
            }
        }
    }
    out
}

/// Every profiled step of every series, in the step table's order.
pub fn all<'a>(input: &Input<'a>) -> Vec<Profiled<'a>> {
    let mut out = Vec::new();
    for step in &input.steps {
        for s in &input.series {
            if let Some(p) = of_series(s, &s.label(&input.series), step) {
                out.push(p);
            }
        }
    }
    out
}

const SHARES: &[&str] = &[
    "step",
    "samples",
    "cpu.s",
    "perf%",
    "lost%",
    "engine%",
    "fathom%",
    "kernel%",
    "other%",
    "unwinding",
    "setup",
];
const FUNCTIONS: &[&str] = &[
    "step", "#", "self%", "by self", "total%", "by total", "setup",
];

fn pct(n: u64, of: u64) -> Cell {
    Cell::styled(
        (of > 0).then(|| 100.0 * n as f64 / of as f64),
        Style::Percent,
    )
}

fn shares_row(p: &Profiled) -> Vec<Cell> {
    let total = p.stacks.total();
    let shares = p.stacks.shares(&p.record.engine_code);
    let unwinding: Vec<String> = p
        .record
        .processes
        .iter()
        .map(|pr| {
            let how = match pr.unwinding {
                fathom_schema::profile::Unwinding::FramePointers => "fp",
                fathom_schema::profile::Unwinding::Dwarf => "dwarf",
            };
            format!("{} {how}", pr.label)
        })
        .collect();
    let mut row = vec![
        Cell::text(&p.step),
        Cell::count(p.samples as f64),
        Cell::num(total as f64 / 1e9),
        Cell::styled(
            (total > 0).then(|| 100.0 * p.perf_cpu_seconds * 1e9 / total as f64),
            Style::Percent,
        ),
        Cell::Number(p.lost_pct(), Style::Percent),
    ];
    row.extend(Part::ALL.iter().map(|part| pct(shares[part], total)));
    row.push(Cell::text(unwinding.join(", ")));
    row.push(Cell::text(&p.label));
    row
}

fn function_rows(p: &Profiled, t: &mut Table) {
    let total = p.stacks.total();
    let by_self = p.stacks.top(TOP, true);
    let by_total = p.stacks.top(TOP, false);
    for i in 0..by_self.len().max(by_total.len()) {
        let (own_pct, own_name) = by_self
            .get(i)
            .map_or((Cell::Missing, Cell::Missing), |(f, s)| {
                (pct(s.own, total), Cell::text(short_name(f)))
            });
        let (all_pct, all_name) = by_total
            .get(i)
            .map_or((Cell::Missing, Cell::Missing), |(f, s)| {
                (pct(s.total, total), Cell::text(short_name(f)))
            });
        t.push(vec![
            Cell::text(&p.step),
            Cell::count((i + 1) as f64),
            own_pct,
            own_name,
            all_pct,
            all_name,
            Cell::text(&p.label),
        ]);
    }
}

/// The longest function name a table prints; the folded file keeps every name whole.
const NAME_CHARS: usize = 90;

/// A function's name as tables print it: C++ template arguments and parameter lists elided
/// (`Foo<…>::bar`), a Rust trait impl's `<Type as Trait>::f` kept, and at most `NAME_CHARS`.
pub fn short_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(NAME_CHARS));
    let mut depth = 0usize;
    let mut prev = ' ';
    for c in name.chars() {
        match c {
            // A `<` or `(` right after a name opens its arguments; a leading `<` is Rust's
            // `<Type as Trait>`.
            '<' | '(' if depth > 0 || prev.is_alphanumeric() || prev == '_' => {
                if depth == 0 {
                    out.push(c);
                    out.push('…');
                }
                depth += 1;
            }
            '>' | ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push(c);
                }
            }
            _ if depth > 0 => {}
            _ => out.push(c),
        }
        prev = c;
    }
    if out.chars().count() > NAME_CHARS {
        out = out.chars().take(NAME_CHARS - 1).collect::<String>() + "…";
    }
    out
}

/// What the profiles cannot show or lost, a line each.
fn problems(all: &[Profiled]) -> Option<String> {
    let mut lines = Vec::new();
    for p in all {
        if p.lost_pct() > LOST_PCT {
            lines.push(format!(
                "{} {}: lost {:.1}% of its samples (perf fell behind): the shares are less sure",
                p.label,
                p.step,
                p.lost_pct()
            ));
        }
        for pr in &p.record.processes {
            if pr.unnamed_pct > 20.0 {
                lines.push(format!(
                    "{} {}: {:.0}% of {}'s frames have no symbol ({}): its own functions show as [unknown]",
                    p.label, p.step, pr.unnamed_pct, pr.label, pr.exe
                ));
            }
        }
        for problem in &p.problems {
            lines.push(format!("{} {}: {problem}", p.label, p.step));
        }
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The shares table and the top functions table of `all`.
pub fn tables(all: &[Profiled]) -> Vec<Titled> {
    let mut shares = Table::new(SHARES);
    let mut functions = Table::new(FUNCTIONS);
    for p in all {
        shares.push(shares_row(p));
        function_rows(p, &mut functions);
    }
    vec![
        Titled {
            title: "profile shares".into(),
            table: shares,
        },
        Titled {
            title: "top functions".into(),
            table: functions,
        },
    ]
}

/// The section, when any step was profiled.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let all = all(input);
    if all.is_empty() {
        return Ok(Vec::new());
    }
    let mut section = Section::new("Where the CPU went");
    section.tables = tables(&all);
    section.paragraph = problems(&all);
    section.legend = Some(LEGEND);
    if input.page {
        for p in &all {
            section.charts.push(Chart::Flame(crate::draw::flame::graph(
                &anchor(&p.label, &p.step),
                &format!("{} {}", p.label, p.step),
                &p.stacks,
            )?));
        }
    }
    Ok(vec![section])
}

const LEGEND: &str = "\nprofile shares: samples taken by perf over each step's measured span \
(repeats together), cpu.s the CPU seconds they stand for, perf% perf's own CPU as a share of \
those; each share below is of that CPU time: engine% is the engine's code (a server's processes, or an embedded \
engine's functions), fathom% fathom's own crates, kernel% samples in the kernel, other% the \
rest (the C library, Rust's std, code without symbols). top functions: self% is where the CPU \
was running, total% where the function was on the stack.";

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::profile::{ProfiledProcess, Unwinding};

    fn record(samples: u64, lost: u64, unnamed_pct: f64) -> ProfileRecord {
        ProfileRecord {
            folded: "steps/01-x.folded".into(),
            frequency_hz: 99,
            seconds: 1.0,
            perf_cpu_seconds: 0.0,
            samples,
            cpu_ns: 0,
            lost,
            processes: vec![ProfiledProcess {
                pids: vec![1],
                label: "postgres".into(),
                exe: "/usr/lib/postgresql/15/bin/postgres".into(),
                unwinding: Unwinding::FramePointers,
                cpu_ns: 0,
                unnamed_pct,
            }],
            thread_cpu_ns: Default::default(),
            engine_code: vec![],
            problems: vec!["kernel frames are not sampled".into()],
        }
    }

    #[test]
    fn lost_samples_and_unnamed_code_are_said_under_the_tables() {
        let bad = record(90, 10, 25.0);
        let fine = record(99, 1, 5.0);
        let said = problems(&[Profiled::single("pg", "select", &bad, Stacks::default())]).unwrap();
        assert!(
            said.contains("pg select: lost 10.0% of its samples"),
            "{said}"
        );
        assert!(
            said.contains("25% of postgres's frames have no symbol"),
            "{said}"
        );
        assert!(said.contains("kernel frames are not sampled"), "{said}");
        let quiet =
            problems(&[Profiled::single("pg", "select", &fine, Stacks::default())]).unwrap();
        assert!(
            !quiet.contains("lost") && !quiet.contains("no symbol"),
            "{quiet}"
        );
    }

    #[test]
    fn names_lose_their_template_arguments_not_their_trait() {
        assert_eq!(
            short_name("rocksdb::BlockIter<rocksdb::Slice>::BinarySeekRestartPointIndex<rocksdb::DecodeKey>"),
            "rocksdb::BlockIter<…>::BinarySeekRestartPointIndex<…>"
        );
        assert_eq!(
            short_name(
                "<fathom_engines::rocksdb::session::Session as fathom_api::kv::KvSession>::put"
            ),
            "<fathom_engines::rocksdb::session::Session as fathom_api::kv::KvSession>::put"
        );
        assert_eq!(
            short_name("rocksdb::X::PutCFImpl<rocksdb::Y::PutCF(unsigned int, rocksdb::Slice const&)::{lambda(rocksdb::WriteBatch*)#1}>"),
            "rocksdb::X::PutCFImpl<…>"
        );
        assert_eq!(
            short_name("memcg1_commit_charge_[k]"),
            "memcg1_commit_charge_[k]"
        );
        assert!(short_name(&"a".repeat(200)).chars().count() <= 90);
    }
}
