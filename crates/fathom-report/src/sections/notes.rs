//! The words around a report's tables: a line per series saying what ran, how to read the
//! columns, and what each series says about itself (background writers, open loops,
//! maintenance waits, interruptions, a client that may have been the bottleneck).

use crate::section::Input;
use fathom_schema::figures::harness_us;
use fathom_schema::group::{median_step, Series};
use fathom_schema::result::StepSummary;
use fathom_schema::table::num;
use fathom_workloads::report::ReportHooks;

/// A line per series: setup, engine and version, status, workload, clients, repeats, cores,
/// device, memory limit, the options it ran with, and how its clients reached the server.
pub fn headers(input: &Input) -> Vec<String> {
    let all = &input.series;
    all.iter()
        .map(|s| {
            let m = &s.runs[0].manifest;
            let mut statuses: Vec<&str> =
                s.runs.iter().map(|r| r.status()).collect();
            statuses.dedup();
            let repeats = if s.runs.len() > 1 {
                format!("median of {} repeats, ", s.runs.len())
            } else {
                String::new()
            };
            let mut limit = m
                .setup
                .memory_limit_bytes
                .map_or(String::new(), |b| format!(", memory limit {}", human_bytes(b)));
            if let Some(p) = &m.setup.device_profile {
                limit.push_str(&format!(", device profile {}", p.describe()));
            }
            if let Some(n) = &m.setup.network_profile {
                limit.push_str(&format!(", network {}", n.describe()));
            }
            if let Some(a) = m.setup.effective.get("fathom.allocator") {
                let name = a.split_whitespace().next().unwrap_or(a);
                limit.push_str(&format!(", allocator {name}"));
            }
            // Options files (my.cnf lines) keep their lines, each under the header.
            let options = if m.setup.options.is_empty() {
                String::new()
            } else {
                format!(
                    "\n#   options: {}",
                    options_lines(m.setup.options.trim(), WIDTH).join("\n#            ")
                )
            };
            let errors: String = s
                .runs
                .iter()
                .filter_map(|r| r.manifest.error.as_deref())
                .map(|e| format!("\n#   failed: {}", e.trim().replace('\n', "\n#           ")))
                .collect();
            let throttle = (m.host.device_throttle.as_deref())
                .map(|t| format!("\n#   device: {}", options_lines(t, WIDTH).join("\n#           ")))
                .unwrap_or_default();
            // How the clients reached the server: the relay, a namespace, a host of its own.
            let path = (m.host.network_path.as_deref())
                .map(|t| format!("\n#   network: {}", options_lines(t, WIDTH).join("\n#            ")))
                .unwrap_or_default();
            format!(
                "# {}: {} {} ({}), workload {}, {} client{}, {repeats}{} cores, device {}{limit}{options}{throttle}{path}{errors}",
                s.label(all),
                m.setup.engine,
                m.setup.engine_version,
                statuses.join("/"),
                m.workload_title(),
                m.clients,
                if m.clients == 1 { "" } else { "s" },
                m.host.cores,
                m.host.device.as_deref().unwrap_or("none"),
            )
        })
        .collect()
}

/// An options text's lines, each longer than `width` (the legend's `WIDTH` in a run header)
/// wrapped after a `;` (RocksDB's options
/// string) or else a space, packing as many pieces to a line as fit.
fn options_lines(options: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in options.lines() {
        let mut current = String::new();
        for piece in line.split_inclusive([';', ' ']) {
            if !current.is_empty() && current.len() + piece.len() > width {
                out.push(current.trim_end().to_string());
                current.clear();
            }
            current.push_str(piece);
        }
        out.push(current.trim_end().to_string());
    }
    out
}

fn human_bytes(b: u64) -> String {
    let g = b as f64 / fathom_api::units::GIB;
    if g >= 1.0 {
        format!("{}G", num(g))
    } else {
        format!("{}M", num(b as f64 / (1u64 << 20) as f64))
    }
}

/// How latency is measured, before the columns' lines.
const LATENCY: &str = "\
latency: in a closed loop (a client starts its next operation when its last one ends, as db_bench\n\
and sysbench do) the service time of each operation, so time an operation would have waited to start\n\
behind a slow one is not counted; with --rate (open loop) from each operation's intended start.\n";

/// What the step table's two columns that are not figures mean.
const MARKS: &str = "\
±: coefficient of variation of ops/s over the repeats. !: the step was disturbed in some repeat:\n\
processes other than fathom's, the engine's and the kernel's own threads used over 5% of the host's\n\
CPU, or steal passed 2% (the notes say which; `fathom compare --exclude-disturbed` leaves such repeats\n\
out).\n";

/// Where the legend's lines wrap.
const WIDTH: usize = 100;

/// `line` in lines of at most `WIDTH` characters (a longer word stays whole), the rest
/// indented by two spaces.
fn wrapped(line: &str) -> String {
    let mut out = String::new();
    let mut width = 0;
    for word in line.split(' ') {
        let len = word.chars().count();
        if width > 0 && width + 1 + len > WIDTH {
            out += "\n  ";
            width = 2;
        } else if width > 0 {
            out.push(' ');
            width += 1;
        }
        out += word;
        width += len;
    }
    out + "\n"
}

/// How to read the step table: latency, a line per figure (`fathom_schema::figures`), the marks.
#[cfg(test)]
pub(crate) fn legend() -> String {
    legend_notes().iter().map(Note::text).collect()
}

/// The step table's legend as notes: latency, a note per figure, the marks.
fn legend_notes() -> Vec<Note> {
    let mut out = vec![Note::legend(LATENCY)];
    for f in fathom_schema::figures::FIGURES {
        out.push(Note::legend(wrapped(&f.legend_line())));
    }
    out.push(Note::legend(MARKS));
    out
}

/// One note of a report: a legend's entry, something a run said, a series' name with its
/// notes under it (`sub`). Its text keeps the line breaks the terminal shows.
#[derive(Clone, Debug)]
pub struct Note {
    pub text: String,
    pub sub: bool,
    /// How to read a table or column, rather than something the runs said: the terminal
    /// shows it with `--legend`.
    pub legend: bool,
}

impl Note {
    pub fn of(text: impl Into<String>) -> Note {
        Note {
            text: text.into(),
            sub: false,
            legend: false,
        }
    }

    /// A legend's entry.
    pub fn legend(text: impl Into<String>) -> Note {
        Note {
            legend: true,
            ..Note::of(text)
        }
    }

    /// As the text report prints it: a sub-note indented by two spaces, ending in a newline.
    pub fn text(&self) -> String {
        match self.sub {
            true => format!("  {}\n", self.text.trim_end()),
            false => format!("{}\n", self.text.trim_end()),
        }
    }

    /// Its words on one line, as a paragraph of the page sets them.
    pub fn paragraph(&self) -> String {
        self.text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// The notes as the terminal prints them: with `legend`, all of them; without, what the runs
/// said, and a line naming the flag in place of the legend.
pub fn shown(notes: &[Note], legend: bool) -> String {
    let mut out: String = (notes.iter())
        .filter(|n| legend || !n.legend)
        .map(Note::text)
        .collect();
    if !legend && notes.iter().any(|n| n.legend) {
        out += "how to read each table and column: --legend (fathom report DIR --legend), or docs/results.md\n";
    }
    out
}

/// The legend (the workloads' lines after the columns'), what the hosts and engines said of
/// the runs, then each series' notes, one by one.
pub fn notes(input: &Input) -> Vec<Note> {
    let mut out = legend_notes();
    for hooks in crate::sections::workloads::present(input) {
        if !hooks.legend.is_empty() {
            out.push(Note::legend(hooks.legend));
        }
    }
    let mut run_notes: Vec<&str> = Vec::new();
    for r in input.runs {
        let m = &r.manifest;
        for n in m.host.note.iter().chain(&m.notes) {
            if !run_notes.contains(&n.as_str()) {
                run_notes.push(n);
            }
        }
    }
    out.extend(run_notes.into_iter().map(Note::of));
    for s in &input.series {
        let lines = series_notes(s);
        if !lines.is_empty() {
            out.push(Note::of(format!("{}:", s.label(&input.series))));
            out.extend(lines.into_iter().map(|text| Note {
                sub: true,
                ..Note::of(text)
            }));
        }
    }
    out
}

/// What one series' steps say about themselves.
fn series_notes(s: &Series) -> Vec<String> {
    let hooks = fathom_workloads::find(&s.workload).map_or(&ReportHooks::NONE, |w| &w.report);
    let mut lines = Vec::new();
    let (mut limited, mut saturated) = (Vec::new(), Vec::new());
    for step in s.step_names() {
        let m = median_step(&s.step(step));
        lines.extend(step_notes(&m, hooks));
        if let Some(why) = bottleneck(&m) {
            limited.push(format!("{} ({why})", m.step));
        }
        if let Some(what) = host_saturated(&m) {
            saturated.push(format!("{} ({what})", m.step));
        }
    }
    if !limited.is_empty() {
        lines.push(format!(
            "the client may have been the bottleneck in {}",
            limited.join(", ")
        ));
    }
    if !saturated.is_empty() {
        lines.push(format!(
            "the host's CPU was saturated in {}",
            saturated.join(", ")
        ));
    }
    lines.extend(disturbed(s));
    lines
}

/// Each repeat of a step that something besides fathom and the engine disturbed (marked `!`
/// in the step table): other processes' CPU, or steal.
fn disturbed(s: &Series) -> Vec<String> {
    let mut lines = Vec::new();
    for (n, run) in s.runs.iter().enumerate() {
        let repeat = run.manifest.experiment.as_ref().map_or(n + 1, |e| e.repeat);
        for step in &run.steps {
            if let Some(what) = step.host.disturbance(step.window_seconds) {
                lines.push(format!("{} disturbed (repeat {repeat}): {what}", step.step));
            }
        }
    }
    lines
}

/// The notes every step may have, then its workload's own.
fn step_notes(m: &StepSummary, hooks: &ReportHooks) -> Vec<String> {
    let mut lines = Vec::new();
    match &m.background {
        Some(b) if b.target_rows_per_sec > 0.0 => lines.push(format!(
            "{}: background inserter and deleter {:.0} rows/s (target {:.0}), {} statements, excluded from the row",
            m.step, b.rows_per_sec, b.target_rows_per_sec, b.ops
        )),
        Some(b) => lines.push(format!(
            "{}: background writer {:.2} MB/s (target {:.2}), {} puts, excluded from the row",
            m.step,
            b.bytes_per_sec / 1048576.0,
            b.target_bytes_per_sec / 1048576.0,
            b.ops
        )),
        None => {}
    }
    if let (Some(q), Some(rate)) = (&m.queue_us, m.arrival_rate) {
        lines.push(format!(
            "{}: open loop at {rate:.0} ops/s ({}); waits to begin: p50 {} µs, p99 {} µs, max {} µs; latency counts from {}",
            m.step,
            if m.shared_queue { "one queue for all clients" } else { "a queue per client" },
            num(q.p50),
            num(q.p99),
            num(q.max),
            if m.latency_from_start {
                "the real start (service time, as LinkBench's requestrate)"
            } else {
                "the intended start"
            },
        ));
    }
    if let Some(skew) = m.start_skew_seconds {
        lines.push(format!(
            "{}: the hosts started it within {skew:.2} s of each other",
            m.step
        ));
    }
    if m.maintenance_seconds > 0.05 {
        lines.push(format!(
            "{}: {:.1}s of flush/compaction wait after the operations, charged to its per-op figures",
            m.step, m.maintenance_seconds
        ));
    }
    if m.interrupted {
        lines.push(format!(
            "{}*: interrupted (Ctrl-C); figures cover the part that ran",
            m.step
        ));
    }
    lines.extend((hooks.step_notes)(m));
    // Failures the workload's notes explain are not failed operations.
    let explained = |k: &str| hooks.explained_failures.contains(&k);
    let failed: Vec<(&String, u64)> = m
        .by_op
        .iter()
        .filter(|(k, o)| o.failed > 0 && !explained(k))
        .map(|(k, o)| (k, o.failed))
        .collect();
    let total: u64 = failed.iter().map(|(_, n)| n).sum();
    if total > 0 {
        let kinds: Vec<String> = failed.iter().map(|(k, n)| format!("{k} {n}")).collect();
        lines.push(format!(
            "{}: {total} operations failed ({}), not timed and not in ops/s (max_failed_requests)",
            m.step,
            kinds.join(", ")
        ));
    }
    lines
}

/// Share of the engine's CPU per operation that was fathom's own, above which the report
/// warns that the client may have been the bottleneck.
pub const HARNESS_SHARE_WARN: f64 = 0.25;
/// Host idle CPU (percent) below which the report says the host's CPU was saturated.
pub const IDLE_WARN_PCT: f64 = 5.0;
/// Steal time (percent) above which the report says the same.
pub const STEAL_WARN_PCT: f64 = 10.0;

/// Fewer operations than this in a step say nothing about what limited it.
const FEW_OPS: u64 = 100;

/// A step of a few long operations (index creation, cleanup) is limited by neither the client
/// nor the host's CPU in a way worth a note.
fn too_short(s: &StepSummary) -> bool {
    s.ops < FEW_OPS || s.window_seconds <= 0.0
}

/// Why fathom itself may have limited a step's throughput: its own share of the CPU per
/// operation. A busy host alone is not that (an embedded engine with as many clients as
/// cores is meant to fill it): `host_saturated` says so apart.
pub fn bottleneck(s: &StepSummary) -> Option<String> {
    // Clients mostly on the wire (`--network`) waited on it, whatever their share of the CPU.
    let wire = s.network.as_ref().and_then(|n| n.wire_us_per_op);
    if too_short(s) || wire.is_some_and(|w| w > 0.5 * s.usec_op) {
        return None;
    }
    let (h, e) = (harness_us(s)?, s.per_op.cpu_us_engine.or(s.per_op.cpu_us)?);
    // Embedded: the engine's figure is the whole process, harness included; a server's
    // excludes fathom, so compare against the sum.
    let whole = if s.per_op.cpu_us_harness.is_some() {
        e + h
    } else {
        e
    };
    if whole <= 0.0 || h / whole <= HARNESS_SHARE_WARN {
        return None;
    }
    // Each time a client blocks on a server's reply costs it kernel time of its own, whatever
    // the client: the count says how much of fathom's share that is.
    let waits = s
        .per_op
        .waits_harness
        .filter(|w| *w > 0.0)
        .map(|w| format!(", blocking {w:.1} times per op"))
        .unwrap_or_default();
    Some(format!(
        "fathom used {:.0}% of the CPU per op{waits}",
        100.0 * h / whole
    ))
}

/// What the host's CPU showed when it had none to spare: little idle time, or much stolen.
pub fn host_saturated(s: &StepSummary) -> Option<String> {
    // A window shorter than a second holds too few CPU ticks to say anything.
    let sampled = s.window_seconds >= 1.0 && s.host.idle_pct + s.host.us_pct + s.host.sy_pct > 0.0;
    if too_short(s) || !sampled {
        return None;
    }
    let mut what = Vec::new();
    if s.host.free_pct() < IDLE_WARN_PCT {
        what.push(format!("idle {:.1}%", s.host.free_pct()));
    }
    if s.host.steal_pct > STEAL_WARN_PCT {
        what.push(format!("steal {:.1}%", s.host.steal_pct));
    }
    (!what.is_empty()).then(|| what.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_schema::result::{OpSummary, PerOp};

    /// A RocksDB options string wraps after its `;`s; an options file keeps its lines.
    #[test]
    fn a_long_options_line_wraps_at_its_separators() {
        let rocksdb =
            "write_buffer_size=32m;target_file_size_base=32m;max_bytes_for_level_base=128m;";
        let lines = options_lines(rocksdb, 40);
        assert_eq!(
            lines,
            [
                "write_buffer_size=32m;",
                "target_file_size_base=32m;",
                "max_bytes_for_level_base=128m;"
            ]
        );
        assert_eq!(lines.concat(), rocksdb);
        assert_eq!(options_lines("a=1\nb=2", 40), ["a=1", "b=2"]);
        assert_eq!(
            options_lines("checkpoint=(wait=60)", 40),
            ["checkpoint=(wait=60)"]
        );
    }

    /// A server client's share of the CPU is flagged with the times it blocked per op.
    #[test]
    fn a_heavy_client_is_noted_with_its_waits() {
        let step = |harness: f64, waits: Option<f64>| StepSummary {
            ops: 1000,
            window_seconds: 10.0,
            per_op: PerOp {
                cpu_us_engine: Some(100.0),
                cpu_us_harness: Some(harness),
                waits_harness: waits,
                ..PerOp::default()
            },
            ..StepSummary::default()
        };
        assert_eq!(
            bottleneck(&step(40.0, Some(1.6))).as_deref(),
            Some("fathom used 29% of the CPU per op, blocking 1.6 times per op")
        );
        assert_eq!(
            bottleneck(&step(40.0, None)).as_deref(),
            Some("fathom used 29% of the CPU per op")
        );
        assert_eq!(bottleneck(&step(10.0, Some(1.6))), None);
    }

    /// A busy host is said to be saturated, not the client a bottleneck: an embedded engine
    /// with as many clients as cores fills the host by design.
    #[test]
    fn a_busy_host_is_saturated_not_a_client_bottleneck() {
        let s = StepSummary {
            ops: 1000,
            window_seconds: 10.0,
            per_op: PerOp {
                cpu_us: Some(10.0),
                cpu_us_engine: Some(10.0),
                ..PerOp::default()
            },
            harness_ns_per_op: Some(300.0),
            host: fathom_schema::result::HostRates {
                idle_pct: 3.7,
                us_pct: 90.0,
                sy_pct: 6.3,
                ..Default::default()
            },
            ..StepSummary::default()
        };
        assert_eq!(bottleneck(&s), None, "fathom's 0.3 µs of 10 µs is 3%");
        assert_eq!(host_saturated(&s).as_deref(), Some("idle 3.7%"));
    }

    #[test]
    fn failed_operations_are_noted_per_kind() {
        let failed = |n| OpSummary {
            failed: n,
            ..OpSummary::default()
        };
        let m = StepSummary {
            step: "request".into(),
            failed: 3,
            by_op: [
                ("ADD_LINK".into(), failed(2)),
                ("GET_NODE".into(), failed(0)),
                ("COUNT_LINK".into(), failed(1)),
            ]
            .into_iter()
            .collect(),
            ..StepSummary::default()
        };
        let notes = step_notes(&m, &ReportHooks::NONE);
        assert_eq!(
            notes,
            ["request: 3 operations failed (ADD_LINK 2, COUNT_LINK 1), not timed and not in ops/s (max_failed_requests)"]
        );
        assert!(step_notes(&StepSummary::default(), &ReportHooks::NONE).is_empty());
    }

    /// A workload's own notes come with the step's, and the failures they explain are not
    /// listed again as failed operations (LinkBench's drifted counts).
    #[test]
    fn a_workloads_notes_explain_its_failures() {
        let m = StepSummary {
            step: "check".into(),
            failed: 4,
            by_op: [(
                "DRIFTED_COUNT".into(),
                OpSummary {
                    failed: 4,
                    ..OpSummary::default()
                },
            )]
            .into_iter()
            .collect(),
            ..StepSummary::default()
        };
        let linkbench = &fathom_workloads::find("linkbench").unwrap().report;
        let notes = step_notes(&m, linkbench);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0]
                .starts_with("check: 4 (id1, link type) counts differ from their visible links"),
            "{notes:?}"
        );
        let notes = step_notes(&m, &ReportHooks::NONE);
        assert!(
            notes[0].contains("4 operations failed (DRIFTED_COUNT 4)"),
            "{notes:?}"
        );
    }
}
