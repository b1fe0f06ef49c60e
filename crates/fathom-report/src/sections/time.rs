//! Where each step's threads spent their time: fathom's clients, its background clients, its
//! other threads and the engine's busy threads, each split into on a CPU, waiting for a CPU,
//! waiting for block IO, paced (open loop) and the rest (asleep on a lock, the network, a
//! condition or a timer). The CPU profile says where the CPU went; this says where the rest of
//! the time went, the first fact a "bound by" argument needs.

use crate::section::{Input, Section, Titled};
use fathom_schema::result::threads::GroupTime;
use fathom_schema::result::threads::{GroupWaits, WaitKind as Kind};
use fathom_schema::table::{Cell, Style, Table};

const COLUMNS: &[&str] = &[
    "step", "threads", "seen", "busy", "worth", "cpu%", "runq%", "blkio%", "paced%", "other%",
    "setup",
];

const LEGEND: &str = "\
where the threads' time went, over each step's window: threads: whose (clients: fathom's clients, which run\n\
an embedded engine's code too; background: the step's background clients; harness: fathom's other threads;\n\
engine: the engine's threads, a server's processes' or an embedded engine's own); seen, busy: threads seen in\n\
the window and those on a CPU or waiting for one or for IO at least 5% of it; worth: the time counted, in\n\
threads' worth (seconds per second: every client's, and of the harness's and the engine's threads the busy\n\
ones'); cpu%, runq%, blkio%: its share on a CPU, runnable and waiting for a CPU, waiting for block IO (delay\n\
accounting; - where it could not be turned on); paced%: asleep until an operation's intended start (open loop);\n\
other%: the rest, asleep on a lock, the network, a condition or a timer.\n";

const WAIT_LEGEND: &str = "\
with --waits, what the counted threads were doing, sampled 50 times a second (each sample 1/50 s of a\n\
thread's time), cpu taken from the exact accounting above and the samples splitting only the time off a CPU\n\
(a sampler sharing the cores finds threads runnable that it has just preempted itself); with --waits=bpf, timed exactly by an eBPF program on the scheduler's tracepoints and read\n\
5 times a second (samples: the threads' readings; ± 0): cpu: on a CPU or runnable; futex: asleep on a lock or condition; fsync: in fsync, fdatasync,\n\
sync_file_range or msync; sleep: in nanosleep; socket: in poll, epoll, select, or a socket or pipe read or\n\
write; io: a file read or write in uninterruptible sleep, or an aio or io_uring wait; fault: a page fault;\n\
other: any other system call; each share of the group's samples, ±: the largest share's standard error\n\
(samples taken as independent: an underestimate when waits last longer than 20 ms).\n";

/// The tables, a row per step, setup and group of threads.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut section = Section::new("Where the threads' time went");
    if let Some(t) = time_table(input) {
        section.tables.push(t);
        section.legend = Some(LEGEND);
    }
    if let Some(t) = waits_table(input) {
        section.tables.push(t);
        section.paragraph = Some(WAIT_LEGEND.replace('\n', " ").trim().to_string());
    }
    Ok(section.if_any().into_iter().collect())
}

fn waits_table(input: &Input) -> Option<Titled> {
    let mut header = vec!["step", "threads", "samples"];
    header.extend(Kind::ALL.iter().map(|k| k.name()));
    header.extend(["±", "setup"]);
    let mut table = Table::new(&header);
    for (step, setup, m) in super::step_medians(input) {
        let Some(w) = &m.waits else { continue };
        let time = m.time.as_ref();
        let groups: [(&str, &GroupWaits, Option<&GroupTime>); 3] = [
            ("clients", &w.clients, time.map(|t| &t.clients)),
            ("harness", &w.harness, time.map(|t| &t.harness)),
            ("engine", &w.engine, time.map(|t| &t.engine)),
        ];
        for (name, g, exact) in groups {
            if g.samples == 0 {
                continue;
            }
            let mut row = vec![
                Cell::text(step),
                Cell::text(name),
                Cell::num(g.samples as f64),
            ];
            let mut worst = 0.0f64;
            for share in shares(g, exact) {
                worst = worst.max(share.map_or(0.0, |s| s.1));
                row.push(Cell::styled(share.map(|s| 100.0 * s.0), Style::Percent));
            }
            row.push(Cell::styled(Some(100.0 * worst), Style::Percent));
            row.push(Cell::text(setup.clone()));
            table.push(row);
        }
    }
    (!table.rows.is_empty()).then(|| Titled {
        title: "what the threads waited on".into(),
        table,
    })
}

/// Each kind's share of a group's time, with its standard error. Sampled from /proc, the
/// sampler's `cpu` is replaced by the exact accounting's (on a CPU or runnable, from the
/// scheduler's own counts) and only the time off a CPU is split as the samples split it: a
/// sampler sharing two cores with the threads it reads finds them runnable when it has itself
/// just preempted them (RocksDB's O_DIRECT reads sampled 95% cpu where the scheduler counted
/// 48.5%), so its `cpu` contradicted the time table above it.
fn shares(g: &GroupWaits, exact: Option<&GroupTime>) -> Vec<Option<(f64, f64)>> {
    let sampled: Vec<Option<(f64, f64)>> = Kind::ALL.iter().map(|k| g.share(k.name())).collect();
    let Some(t) = exact.filter(|t| !g.exact && t.wall_s > 0.0) else {
        return sampled;
    };
    let on = ((t.cpu_s + t.runq_s) / t.wall_s).clamp(0.0, 1.0);
    let cpu_at = Kind::ALL.iter().position(|k| k.name() == "cpu");
    let sampled_off = 1.0 - cpu_at.and_then(|i| sampled[i]).map_or(0.0, |s| s.0);
    Kind::ALL
        .iter()
        .enumerate()
        .map(|(i, k)| {
            if Some(i) == cpu_at {
                return Some((on, 0.0));
            }
            match sampled[i] {
                // The samples' split of the time off a CPU, scaled to the exact time off it.
                Some((p, se)) if sampled_off > 0.0 => {
                    let scale = (1.0 - on) / sampled_off;
                    Some((p * scale, se * scale))
                }
                // No sample found the threads off a CPU: the time the scheduler counted off it
                // is unsplit.
                _ if k.name() == "other" => Some((1.0 - on, 0.0)),
                other => other.map(|_| (0.0, 0.0)),
            }
        })
        .collect()
}

fn time_table(input: &Input) -> Option<Titled> {
    let mut table = Table::new(COLUMNS);
    for (step, setup, m) in super::step_medians(input) {
        let Some(time) = &m.time else { continue };
        let window = m.window_seconds;
        let groups = [
            ("clients", Some(&time.clients)),
            ("background", time.background.as_ref()),
            ("harness", Some(&time.harness)),
            ("engine", Some(&time.engine)),
        ];
        for (name, g) in groups {
            let Some(g) = g.filter(|g| g.threads > 0) else {
                continue;
            };
            table.push(row(step, name, g, window, setup.clone()));
        }
    }
    (!table.rows.is_empty()).then(|| Titled {
        title: "threads' time".into(),
        table,
    })
}

fn row(step: &str, whose: &str, g: &GroupTime, window: f64, setup: String) -> Vec<Cell> {
    let share = |x: Option<f64>| {
        Cell::styled(
            x.filter(|_| g.wall_s > 0.0).map(|x| 100.0 * x / g.wall_s),
            Style::Percent,
        )
    };
    vec![
        Cell::text(step),
        Cell::text(whose),
        Cell::num(f64::from(g.threads)),
        Cell::num(f64::from(g.busy)),
        Cell::styled((window > 0.0).then(|| g.wall_s / window), Style::Fixed(2)),
        share(Some(g.cpu_s)),
        share(Some(g.runq_s)),
        share(g.blkio_s),
        share(g.paced_s),
        share(Some(g.other_s)),
        Cell::text(setup),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RocksDB's O_DIRECT reads: the scheduler counted half the time on a CPU and half in block
    /// IO; the sampler found 95% "cpu". The table shows the scheduler's cpu and the samples'
    /// split of the rest, so the two tables agree.
    #[test]
    fn the_sampled_table_agrees_with_the_exact_one_on_cpu() {
        let sampled = GroupWaits {
            samples: 1000,
            seconds: [("cpu".to_string(), 19.0), ("io".to_string(), 1.0)].into(),
            exact: false,
        };
        let exact = GroupTime {
            threads: 1,
            busy: 1,
            wall_s: 20.0,
            cpu_s: 9.7,
            runq_s: 0.0,
            blkio_s: Some(9.7),
            other_s: 10.3,
            ..GroupTime::default()
        };
        let at = |name: &str| Kind::ALL.iter().position(|k| k.name() == name).unwrap();
        let s = shares(&sampled, Some(&exact));
        assert!((s[at("cpu")].unwrap().0 - 0.485).abs() < 1e-9, "{s:?}");
        assert!((s[at("io")].unwrap().0 - 0.515).abs() < 1e-9, "{s:?}");
        let total: f64 = s.iter().flatten().map(|x| x.0).sum();
        assert!((total - 1.0).abs() < 1e-9, "{s:?}");
        // Timed exactly (bpf), the samples stand as they are.
        let bpf = GroupWaits {
            exact: true,
            ..sampled.clone()
        };
        assert!((shares(&bpf, Some(&exact))[at("cpu")].unwrap().0 - 0.95).abs() < 1e-9);
    }
}
