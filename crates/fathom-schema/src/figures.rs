//! The step figures, one typed table: each figure's column, unit, meaning, how a step (and an
//! interval) holds it and how it is shown, which way it gets worse, whether a comparison judges
//! it as a cost and under which name the results database records it. The step and interval
//! tables, the legend, `compare`'s cost columns, the cost verdicts, the records' columns,
//! `fathom history --figure` and docs/results.md's column table all read this one list, so a new
//! figure is one entry here plus the sampler that fills its field.

use crate::latency::Latency;
use crate::result::device::DeviceLimits;
use crate::result::{DbGb, HostRates, IntervalRecord, PerOp, StepSummary};
use crate::table::{Cell, Style};

/// Which way a figure gets worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worse {
    /// Throughput: lower is worse.
    Lower,
    /// Latency, cost, size: higher is worse.
    Higher,
}

/// What a step's row and an interval's row hold, for the figures to read.
pub struct View<'a> {
    /// A whole step's row (an interval's row shows fewer figures, and db.gb allocated only).
    pub whole_step: bool,
    /// False where the step had no operations: its rate and latencies are unknown.
    pub ops_known: bool,
    pub ops_per_sec: f64,
    pub latency: &'a Latency,
    pub per_op: &'a PerOp,
    pub db_gb: &'a DbGb,
    pub rss_gb: f64,
    /// RocksDB's write amplification (a step only).
    pub w_amp: Option<f64>,
    /// The harness's own CPU µs per operation (a step only).
    pub harness_us: Option<f64>,
    /// The host's cores, for the seeds' vmstat unit.
    pub cores: Option<usize>,
    /// The step's device rates and the limits they are judged against (a step only).
    pub device: Option<(&'a HostRates, &'a DeviceLimits)>,
}

impl<'a> View<'a> {
    /// A step's figures on a host of `cores` whose device has `limits`.
    pub fn of_step(
        s: &'a StepSummary,
        cores: Option<usize>,
        limits: Option<&'a DeviceLimits>,
    ) -> View<'a> {
        View {
            whole_step: true,
            ops_known: s.ops > 0,
            ops_per_sec: s.ops_per_sec,
            latency: &s.latency_us,
            per_op: &s.per_op,
            db_gb: &s.db_gb,
            rss_gb: s.rss_gb,
            w_amp: s.engine_stats.w_amp,
            harness_us: harness_us(s),
            cores,
            device: limits.map(|l| (&s.host, l)),
        }
    }

    /// An interval's figures (an interval with no operations still has a rate: 0).
    pub fn of_interval(i: &'a IntervalRecord) -> View<'a> {
        View {
            whole_step: false,
            ops_known: true,
            ops_per_sec: i.ops_per_sec,
            latency: &i.latency_us,
            per_op: &i.per_op,
            db_gb: &i.db_gb,
            rss_gb: i.rss_gb,
            w_amp: None,
            harness_us: None,
            cores: None,
            device: None,
        }
    }
}

/// The harness's CPU per operation in µs: measured on its own process for a server engine,
/// calibrated on the null engine for an embedded one.
pub fn harness_us(s: &StepSummary) -> Option<f64> {
    s.per_op
        .cpu_us_harness
        .or(s.harness_ns_per_op.map(|ns| ns / 1000.0))
}

/// The seeds' cpu/o: vmstat's us+sy percent over ops/s, times 10⁶ — fathom's host µs per
/// operation (all cores) times 100 over the host's cores.
pub fn vmstat_cpu(cpu_us: Option<f64>, cores: Option<usize>) -> Option<f64> {
    Some(cpu_us? * 100.0 / cores.filter(|c| *c > 0)? as f64)
}

/// Where the results database keeps a figure: its `steps` column and the name
/// `fathom history --figure` takes.
#[derive(Clone, Copy, Debug)]
pub struct Recorded {
    pub figure: &'static str,
    pub column: &'static str,
    /// A column that may not be NULL records 0 where the figure is unknown.
    pub nullable: bool,
}

/// One figure of the step table.
#[derive(Debug)]
pub struct StepFigure {
    /// Its column in the tables ("cpu/o").
    pub column: &'static str,
    pub unit: &'static str,
    /// What it is, for the legend and the docs.
    pub meaning: &'static str,
    pub style: Style,
    /// Its value in a row.
    pub value: fn(&View) -> Option<f64>,
    /// Shown as unknown where the step had no operations.
    pub needs_ops: bool,
    /// Also a column of the intervals' table.
    pub interval: bool,
    pub worse: Worse,
    /// Judged as a cost when two setups are compared (`verdict::costs`).
    pub judged: bool,
    pub recorded: Option<Recorded>,
    /// The step table shows the spread of this figure over the repeats beside it (`±`).
    pub spread: bool,
    /// How a whole step's row shows it, where not as its value alone.
    pub step_cell: Option<fn(&View) -> Cell>,
    /// Left out of the terminal's step table unless `--columns all` (so that it fits 120
    /// columns); every other format has it.
    pub wide: bool,
}

impl StepFigure {
    /// A figure of a step only, higher worse, neither judged nor recorded: the start of an
    /// entry, whose other fields follow `..` (`StepFigure { interval: true, ..StepFigure::new(...) }`).
    pub const fn new(
        column: &'static str,
        unit: &'static str,
        meaning: &'static str,
        value: fn(&View) -> Option<f64>,
    ) -> StepFigure {
        StepFigure {
            column,
            unit,
            meaning,
            style: Style::Auto,
            value,
            needs_ops: false,
            interval: false,
            worse: Worse::Higher,
            judged: false,
            recorded: None,
            spread: false,
            step_cell: None,
            wide: false,
        }
    }

    /// Its value in `v`, unknown where it needs operations the row had none of.
    pub fn of(&self, v: &View) -> Option<f64> {
        match self.needs_ops && !v.ops_known {
            true => None,
            false => (self.value)(v),
        }
    }

    /// Its value in a step.
    pub fn of_step(&self, s: &StepSummary) -> Option<f64> {
        self.of(&View::of_step(s, None, None))
    }

    /// Its cell in `v`'s row.
    pub fn cell(&self, v: &View) -> Cell {
        match self.step_cell {
            Some(cell) if v.whole_step => cell(v),
            _ => Cell::styled(self.of(v), self.style),
        }
    }

    /// Its line of the legend: column, unit, meaning.
    pub fn legend_line(&self) -> String {
        format!("{} ({}): {}", self.column, self.unit, self.meaning)
    }
}

const fn recorded(figure: &'static str, column: &'static str) -> Option<Recorded> {
    Some(Recorded {
        figure,
        column,
        nullable: true,
    })
}

const fn latency(
    column: &'static str,
    meaning: &'static str,
    value: fn(&View) -> Option<f64>,
) -> StepFigure {
    StepFigure {
        needs_ops: true,
        ..StepFigure::new(column, "µs", meaning, value)
    }
}

/// The step table's figures, in its order (after the step's name and `!`).
pub const FIGURES: &[StepFigure] = &[
    StepFigure {
        style: Style::Rate,
        spread: true,
        needs_ops: true,
        interval: true,
        worse: Worse::Lower,
        recorded: Some(Recorded {
            figure: "ops_per_sec",
            column: "ops_per_sec",
            nullable: false,
        }),
        ..StepFigure::new(
            "ops/s",
            "1/s",
            "operations per second (a background writer's excluded)",
            |v| Some(v.ops_per_sec),
        )
    },
    StepFigure {
        interval: true,
        recorded: recorded("p50", "p50_us"),
        ..latency("p50", "median latency", |v| Some(v.latency.p50))
    },
    StepFigure {
        interval: true,
        recorded: recorded("p99", "p99_us"),
        ..latency("p99", "99th percentile latency", |v| Some(v.latency.p99))
    },
    StepFigure {
        wide: true,
        ..latency("p99.9", "99.9th percentile latency", |v| Some(v.latency.p99_9))
    },
    StepFigure {
        interval: true,
        wide: true,
        ..latency("max", "the slowest operation's latency", |v| Some(v.latency.max))
    },
    StepFigure {
        interval: true,
        judged: true,
        recorded: recorded("reads", "reads"),
        ..StepFigure::new(
            "r/o",
            "requests",
            "device read requests per operation (/proc/diskstats of the data directory's device)",
            |v| v.per_op.reads,
        )
    },
    StepFigure {
        judged: true,
        ..StepFigure::new(
            "rKB/o",
            "KB",
            "KB the device read per operation",
            |v| v.per_op.read_kb,
        )
    },
    StepFigure {
        interval: true,
        judged: true,
        recorded: recorded("write_kb", "write_kb"),
        ..StepFigure::new(
            "wKB/o",
            "KB",
            "KB written to the device per operation: writes count when the kernel writes pages back or the engine syncs",
            |v| v.per_op.write_kb,
        )
    },
    StepFigure {
        needs_ops: true,
        ..StepFigure::new(
            "dev%",
            "%",
            "how near the device came to its limit: the largest of its reads a second against its IOPS at the step's queue depth and its MiB/s read and written against its sequential rates, the limits a device profile's (--device) or fathom calibrate's; empty where the device has neither",
            |v| v.device.and_then(|(h, l)| l.utilisation(h)).map(|u| 100.0 * u),
        )
    },
    StepFigure {
        wide: true,
        ..StepFigure::new(
            "erKB/o",
            "KB",
            "KB the engine's processes read from storage per operation (/proc/PID/io read_bytes, pidstat's kB_rd/s; fathom's whole process for an embedded engine)",
            |v| v.per_op.engine_read_kb,
        )
    },
    StepFigure {
        wide: true,
        ..StepFigure::new(
            "ewKB/o",
            "KB",
            "KB the engine's processes wrote per operation (/proc/PID/io write_bytes): a write counts when its data enters the page cache",
            |v| v.per_op.engine_write_kb,
        )
    },
    StepFigure {
        interval: true,
        ..StepFigure::new("cs/o", "switches", "host context switches per operation", |v| v.per_op.cs)
    },
    StepFigure {
        interval: true,
        judged: true,
        recorded: recorded("cpu_us", "cpu_us"),
        ..StepFigure::new(
            "cpu/o",
            "µs",
            "host CPU (vmstat's us+sy) per operation, all cores",
            |v| v.per_op.cpu_us,
        )
    },
    StepFigure {
        wide: true,
        ..StepFigure::new(
            "vmstat cpu/o",
            "µs·100/cores",
            "the seeds' unit: vmstat's us+sy percent over ops/s times 10^6 (cpu/o × 100 / cores)",
            |v| vmstat_cpu(v.per_op.cpu_us, v.cores),
        )
    },
    StepFigure::new(
        "eng/o",
        "µs",
        "CPU per operation of the engine's processes: the server's, or fathom's whole process when the engine is embedded",
        |v| v.per_op.cpu_us_engine,
    ),
    StepFigure {
        needs_ops: true,
        ..StepFigure::new(
            "fathom/o",
            "µs",
            "the harness's own CPU per operation: measured on fathom's process beside a server, calibrated on the null engine for an embedded engine (which shares fathom's process)",
            |v| v.harness_us,
        )
    },
    StepFigure {
        interval: true,
        recorded: Some(Recorded {
            figure: "db_gb",
            column: "db_gb",
            nullable: false,
        }),
        step_cell: Some(|v| Cell::db_gb(v.db_gb)),
        ..StepFigure::new(
            "db.gb",
            "GiB",
            "the database's size, allocated / apparent (du and du --apparent-size); an interval's row shows allocated",
            |v| Some(v.db_gb.allocated),
        )
    },
    StepFigure {
        style: Style::Gib,
        interval: true,
        recorded: Some(Recorded {
            figure: "rss_gb",
            column: "rss_gb",
            nullable: false,
        }),
        ..StepFigure::new(
            "rss",
            "GiB",
            "resident memory of the engine's processes (a server's processes' proportional sizes)",
            |v| Some(v.rss_gb),
        )
    },
    StepFigure::new(
        "w-amp",
        "ratio",
        "(flush + compaction bytes written) / bytes ingested, from RocksDB's tickers (db_bench's benchmark.sh adds flush bytes to a compaction total that already holds them; fathom counts them once)",
        |v| v.w_amp,
    ),
];

/// The figure in `column`.
pub fn named(column: &str) -> Option<&'static StepFigure> {
    FIGURES.iter().find(|f| f.column == column)
}

/// The figures a comparison judges as costs, in the tables' order.
pub fn judged() -> impl Iterator<Item = &'static StepFigure> {
    FIGURES.iter().filter(|f| f.judged)
}

/// The figures the results database records, with where.
pub fn recorded_figures() -> impl Iterator<Item = (&'static StepFigure, Recorded)> {
    FIGURES.iter().filter_map(|f| f.recorded.map(|r| (f, r)))
}

/// The figure `fathom history --figure NAME` follows.
pub fn by_recorded_name(name: &str) -> Option<(&'static StepFigure, Recorded)> {
    recorded_figures().find(|(_, r)| r.figure == name)
}

/// The docs' table of the columns: one row per figure, `| column | unit | meaning |`.
pub fn markdown_table() -> String {
    let mut out = String::from("| column | unit | meaning |\n|---|---|---|\n");
    for f in FIGURES {
        let wide = if f.wide {
            " (terminal: `--columns all`)"
        } else {
            ""
        };
        out += &format!("| {} | {} | {}{wide} |\n", f.column, f.unit, f.meaning);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/results.md's copy of the figures' table is this table: run with `UPDATE_DOCS=1`
    /// to write it there after a figure changes.
    #[test]
    fn the_docs_hold_this_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results.md");
        let readme = std::fs::read_to_string(path).unwrap();
        let (begin, end) = ("<!-- figures: begin -->\n", "<!-- figures: end -->");
        let from = readme
            .find(begin)
            .expect("docs/results.md has the figures' begin mark")
            + begin.len();
        let to = readme
            .find(end)
            .expect("docs/results.md has the figures' end mark");
        let table = markdown_table();
        if readme[from..to] == table {
            return;
        }
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &readme[..from], &readme[to..])).unwrap();
            return;
        }
        panic!(
            "docs/results.md's table of the step figures differs from fathom-schema/src/figures.rs: \
             `UPDATE_DOCS=1 cargo test --release -p fathom-schema --lib figures::` writes it"
        );
    }

    #[test]
    fn columns_and_recorded_names_are_unique() {
        let mut columns: Vec<_> = FIGURES.iter().map(|f| f.column).collect();
        columns.sort();
        columns.dedup();
        assert_eq!(columns.len(), FIGURES.len());
        let mut names: Vec<_> = recorded_figures().map(|(_, r)| r.figure).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), recorded_figures().count());
    }

    #[test]
    fn a_step_without_operations_has_no_rate_or_latency_but_keeps_its_size() {
        let s = StepSummary {
            ops: 0,
            ops_per_sec: 0.0,
            rss_gb: 0.5,
            ..StepSummary::default()
        };
        let of = |c: &str| named(c).unwrap().of_step(&s);
        assert_eq!((of("ops/s"), of("p99"), of("rss")), (None, None, Some(0.5)));
        let busy = StepSummary {
            ops: 10,
            ops_per_sec: 5.0,
            ..s
        };
        assert_eq!(named("ops/s").unwrap().of_step(&busy), Some(5.0));
    }
}
