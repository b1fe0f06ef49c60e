//! Host and process sampling: one `Sample` at each interval and step boundary, and the
//! difference of two samples turned into the seeds' per-operation figures.

pub mod cpu;
pub mod dbsize;
pub mod diskstats;
pub mod host;
pub mod identity;
pub mod peak;
pub mod process;
pub mod procfs;
pub mod recent;
pub mod threads;
pub mod waits;

pub use procfs::read_proc;

use fathom_schema::result::{DbGb, HostRates, PerOp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bytes fathom's own result files (interval records) caused to be written, so an embedded
/// engine's `ewKB/o`, read off fathom's whole process, leaves them out.
static RESULTS_WRITTEN: AtomicU64 = AtomicU64::new(0);

/// Runs `write`, a write of fathom's results, charging what the calling thread wrote meanwhile
/// to the results rather than to an embedded engine.
pub fn charge_results<T>(write: impl FnOnce() -> T) -> T {
    let before = process::thread_write_bytes();
    let out = write();
    let written = process::thread_write_bytes().saturating_sub(before);
    RESULTS_WRITTEN.fetch_add(written, Ordering::Relaxed);
    out
}

/// The soonest an interval's sample walks the data directory again for its size (later when a
/// walk costs more: `recent::COST_SHARE`); step boundaries always do. A walk stats every file
/// (1,500 files on PostgreSQL), so once a second was too much of fathom's own cost.
pub const DB_SIZE_EVERY: Duration = Duration::from_secs(5);

/// The soonest an interval's sample reads a multi-process server's proportional sizes again;
/// step boundaries always do. Each read walks a process's page tables (`smaps_rollup`: 6.6 ms
/// on a MariaDB with a 1 GB buffer pool; on PostgreSQL with 1 GB of shared buffers, 3% of
/// fathom's CPU in a YCSB run read once a second for its ten processes), charged to fathom.
pub const PSS_EVERY: Duration = Duration::from_secs(5);

/// The soonest an interval's sample walks /proc again for a server's processes (its root's
/// descendants: a read of every process's `stat` on the host); step boundaries always do.
/// Between walks an interval reads the processes last found: a backend forked since counts
/// from the next walk, with all its CPU since it started.
pub const TREE_EVERY: Duration = Duration::from_secs(5);

/// The block device a directory lives on.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Device {
    pub major: u32,
    pub minor: u32,
    pub name: String,
}

impl Device {
    /// The device holding `dir`, if it is a block device listed in `/proc/diskstats` (a tmpfs
    /// or overlay directory has none, and its IO figures are then reported as missing).
    pub fn of(dir: &Path) -> Option<Device> {
        let dev = std::fs::metadata(dir).ok()?.dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        let text = crate::sample::read_proc("/proc/diskstats").ok()?;
        let name = diskstats::device_name(&text, major, minor)?;
        Some(Device { major, minor, name })
    }
}

/// Everything read at one instant.
#[derive(Clone, Debug)]
pub struct Sample {
    pub at: Instant,
    pub disk: Option<diskstats::DiskCounters>,
    pub cpu: cpu::CpuCounters,
    /// The engine's processes, summed (the harness itself for an embedded engine).
    pub engine: process::ProcCounters,
    /// The harness process (fathom).
    pub harness: process::ProcCounters,
    /// The harness's voluntary context switches, all its threads' (`getrusage`).
    pub harness_waits: u64,
    pub db: dbsize::DbSize,
    /// `RESULTS_WRITTEN` at the sample.
    pub results_written: u64,
    /// An embedded engine's C heap at a step's boundary (bytes in use, held free): the
    /// engine's and fathom's allocations, which share the process.
    pub heap: Option<(u64, u64)>,
    /// At a step's boundary, and at an interval's that walked /proc (every few seconds), the
    /// CPU ticks of every process of fathom's and the engine's, by pid: what the host's busy
    /// time is measured against for interference.
    pub measured: Option<BTreeMap<u32, u64>>,
    /// With an embedded engine, the memory of fathom's recorders' histograms, which its RSS
    /// holds and the engine's figures leave out (0 beside a server).
    pub histograms: u64,
    /// With `measured`, the CPU ticks of the kernel's own threads.
    pub kernel: Option<BTreeMap<u32, u64>>,
    /// The kernel's CPU pressure (`/proc/pressure/cpu`, some), µs, where it has it.
    pub cpu_pressure_us: Option<u64>,
    /// At a step's boundary, every thread's time of fathom's and the engine's processes.
    pub threads: Option<threads::Snapshot>,
}

/// Reads samples for one engine.
pub struct Sampler {
    device: Option<Device>,
    engine_pids: Vec<u32>,
    data_dirs: Vec<PathBuf>,
    ticks_per_sec: f64,
    /// The last walk of the data directories.
    last_size: recent::Recent<dbsize::DbSize>,
    /// The last read of the server's processes' proportional sizes, by pid.
    last_pss: recent::Recent<BTreeMap<u32, u64>>,
    /// The server's processes as last found by a walk of /proc.
    last_tree: recent::Recent<Vec<u32>>,
    /// The files read at every interval, kept open.
    files: procfs::OpenFiles,
}

impl Sampler {
    pub fn new(data_dirs: Vec<PathBuf>, engine_pids: Vec<u32>) -> Sampler {
        let device = data_dirs.first().and_then(|d| Device::of(d));
        // SAFETY: sysconf has no memory-safety preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Sampler {
            device,
            engine_pids,
            data_dirs,
            ticks_per_sec: if hz > 0 { hz as f64 } else { 100.0 },
            last_size: recent::Recent::new(DB_SIZE_EVERY),
            last_pss: recent::Recent::new(PSS_EVERY),
            last_tree: recent::Recent::new(TREE_EVERY),
            files: procfs::OpenFiles::default(),
        }
    }

    pub fn device(&self) -> Option<&Device> {
        self.device.as_ref()
    }

    /// A server's processes now (its root and every descendant, walked afresh); none when
    /// embedded.
    pub fn server_pids(&self) -> Vec<u32> {
        if self.embedded() {
            Vec::new()
        } else {
            self.processes(true).0
        }
    }

    /// True when the engine runs inside the harness process.
    pub fn embedded(&self) -> bool {
        self.engine_pids == [std::process::id()]
    }

    /// A sample at a step's boundary: the database's size walked afresh.
    pub fn sample(&self) -> Sample {
        self.read(true)
    }

    /// A sample at an interval's boundary: the database's size as walked at most
    /// `DB_SIZE_EVERY` ago.
    pub fn sample_interval(&self) -> Sample {
        self.read(false)
    }

    fn db_size(&self, fresh: bool) -> dbsize::DbSize {
        self.last_size
            .get(fresh, || dbsize::measure(&self.data_dirs))
    }

    /// The engine's processes (fathom's own when embedded; else the server's, its root's
    /// descendants), and the walk of /proc they were found by when this reading walked: afresh
    /// when `fresh` or when the last walk is no longer recent, else as last walked. The files
    /// of processes no longer found are closed.
    fn processes(&self, fresh: bool) -> (Vec<u32>, Option<Vec<process::Entry>>) {
        if !fresh {
            if let Some(pids) = self.last_tree.recent() {
                return (pids, None);
            }
        }
        let start = Instant::now();
        let table = process::table();
        let pids = if self.embedded() {
            self.engine_pids.clone()
        } else {
            process::descendants(&table, &self.engine_pids)
        };
        let mut open = pids.clone();
        open.push(std::process::id());
        self.files.keep_processes(&open);
        self.last_tree.keep(pids.clone(), start.elapsed());
        (pids, Some(table))
    }

    /// The proportional size of each of `pids`, read afresh when `fresh`, when the last read
    /// is no longer recent, or for a process the last read did not see; else as last read.
    fn pss(&self, pids: &[u32], fresh: bool) -> BTreeMap<u32, u64> {
        let recent = (!fresh).then(|| self.last_pss.recent()).flatten();
        let start = Instant::now();
        let read: BTreeMap<u32, u64> = pids
            .iter()
            .filter_map(|&pid| {
                let known = recent.as_ref().and_then(|r| r.get(&pid).copied());
                Some((pid, known.or_else(|| process::pss_bytes(pid))?))
            })
            .collect();
        if recent.is_none() {
            self.last_pss.keep(read.clone(), start.elapsed());
        }
        read
    }

    fn read(&self, fresh_size: bool) -> Sample {
        let disk = self.device.as_ref().and_then(|d| {
            let text = self.files.read("/proc/diskstats").ok()?;
            diskstats::parse(&text, d.major, d.minor)
        });
        let cpu = self
            .files
            .read("/proc/stat")
            .ok()
            .and_then(|t| cpu::parse(&t))
            .unwrap_or_default();
        let mut engine = process::ProcCounters::default();
        // A server's processes are its root and every worker or backend forked from it; their
        // memory is the sum of proportional sizes so shared buffers count once. A lone
        // process's proportional size differs from its resident size only by its share of the
        // libraries others map too, and reading it walks every mapping (6.6 ms a sample on a
        // MariaDB with a 1 GB buffer pool, charged to fathom), so it is read only for several,
        // and at intervals no more often than `PSS_EVERY`.
        let (pids, table) = self.processes(fresh_size);
        // A walk of /proc (every boundary's, and an interval's every few seconds) also gives
        // the CPU of the processes measured and of the kernel's threads: interference.
        let table = table.filter(|_| !self.engine_pids.is_empty());
        let multi = !self.embedded();
        let pss = if multi && pids.len() > 1 {
            self.pss(&pids, fresh_size)
        } else {
            BTreeMap::new()
        };
        for pid in &pids {
            if let Some(mut p) = process::read(*pid, multi, &self.files) {
                p.rss_bytes = pss.get(pid).copied().unwrap_or(p.rss_bytes);
                engine.utime += p.utime;
                engine.stime += p.stime;
                engine.major_faults += p.major_faults;
                engine.rss_bytes += p.rss_bytes;
                engine.rss_peak_bytes += p.rss_peak_bytes;
                engine.anon_bytes += p.anon_bytes;
                engine.read_bytes += p.read_bytes;
                engine.write_bytes += p.write_bytes;
            }
        }
        let harness = process::read(std::process::id(), false, &self.files).unwrap_or_default();
        Sample {
            at: Instant::now(),
            disk,
            cpu,
            engine,
            harness,
            harness_waits: process::own_voluntary_switches(),
            db: self.db_size(fresh_size),
            results_written: RESULTS_WRITTEN.load(Ordering::Relaxed),
            // mallinfo2 takes every arena's lock: at a step's boundaries only.
            heap: (fresh_size && self.embedded())
                .then(process::own_heap)
                .flatten(),
            measured: table.as_ref().map(|t| {
                let mut roots = self.engine_pids.clone();
                roots.push(std::process::id());
                process::tree_ticks(t, &roots)
            }),
            kernel: table.as_deref().map(process::kernel_thread_ticks),
            histograms: if self.embedded() {
                crate::recorder::harness_histogram_bytes()
            } else {
                0
            },
            cpu_pressure_us: self
                .files
                .read("/proc/pressure/cpu")
                .ok()
                .and_then(|t| cpu::parse_pressure(&t)),
            threads: fresh_size.then(|| {
                let servers: &[u32] = if multi { &pids } else { &[] };
                threads::snapshot(servers, self.embedded())
            }),
        }
    }

    /// CPU ticks between two boundary samples: of processes other than fathom's, the engine's
    /// and the kernel's own threads (the host's user and system time less theirs; irq and
    /// softirq time left out: the engine's own IO is served there), and of the kernel's
    /// threads. The measured processes count as the sum at the end less the sum at the start,
    /// so a child reaped in the window, whose lifetime moves into its parent's reaped-children
    /// time, counts with its time in the window only.
    fn others_ticks(&self, start: &Sample, end: &Sample) -> Option<(u64, u64)> {
        let (a, b) = (start.measured.as_ref()?, end.measured.as_ref()?);
        let measured = b.values().sum::<u64>().saturating_sub(a.values().sum());
        let kernel = process::ticks_between(start.kernel.as_ref()?, end.kernel.as_ref()?);
        let cpu = start.cpu.delta(&end.cpu);
        let busy = cpu.user + cpu.nice + cpu.system;
        Some((busy.saturating_sub(measured + kernel), kernel))
    }

    /// Bytes the engine's processes wrote between two samples; embedded, less fathom's own
    /// result files, which the same process wrote.
    fn engine_written(&self, start: &Sample, end: &Sample) -> u64 {
        let all = end
            .engine
            .write_bytes
            .saturating_sub(start.engine.write_bytes);
        if self.embedded() {
            all.saturating_sub(end.results_written.saturating_sub(start.results_written))
        } else {
            all
        }
    }

    /// iostat's and vmstat's rates over the window between two samples `secs` apart, and what
    /// else used the host.
    fn host_rates(&self, start: &Sample, end: &Sample, secs: f64) -> HostRates {
        let cpu = start.cpu.delta(&end.cpu);
        let disk = match (&start.disk, &end.disk) {
            (Some(a), Some(b)) => Some(a.delta(b)),
            _ => None,
        };
        let total = cpu.total().max(1) as f64;
        let pct = |t: u64| 100.0 * t as f64 / total;
        let cores = |t: u64| t as f64 / self.ticks_per_sec / secs;
        let others = self.others_ticks(start, end);
        HostRates {
            device: self.device.as_ref().map(|d| d.name.clone()),
            rps: disk.map(|d| d.reads as f64 / secs),
            rmbps: disk.map(|d| d.read_kb() / 1024.0 / secs),
            rawait_ms: disk.map(|d| ratio(d.read_ms as f64, d.reads as f64)),
            rareqsz_kb: disk.map(|d| ratio(d.read_kb(), d.reads as f64)),
            rrqmps: disk.map(|d| d.reads_merged as f64 / secs),
            wps: disk.map(|d| d.writes as f64 / secs),
            wmbps: disk.map(|d| d.write_kb() / 1024.0 / secs),
            wawait_ms: disk.map(|d| ratio(d.write_ms as f64, d.writes as f64)),
            wareqsz_kb: disk.map(|d| ratio(d.write_kb(), d.writes as f64)),
            wrqmps: disk.map(|d| d.writes_merged as f64 / secs),
            aqu_sz: disk.map(|d| d.queue_ms as f64 / 1e3 / secs),
            fps: disk.and_then(|d| d.flushes).map(|n| n as f64 / secs),
            cs_per_sec: cpu.context_switches as f64 / secs,
            us_pct: pct(cpu.us()),
            sy_pct: pct(cpu.sy()),
            idle_pct: pct(cpu.idle),
            iowait_pct: pct(cpu.iowait),
            steal_pct: pct(cpu.steal),
            engine_user_secs: end.engine.utime.saturating_sub(start.engine.utime) as f64
                / self.ticks_per_sec,
            engine_system_secs: end.engine.stime.saturating_sub(start.engine.stime) as f64
                / self.ticks_per_sec,
            others_cores: others.map(|(o, _)| cores(o)),
            others_pct: others.map(|(o, _)| pct(o)),
            others_peak_cores: None,
            others_peak_pct: None,
            others_peak_seconds: None,
            kernel_cores: others.map(|(_, k)| cores(k)),
            cpu_pressure_pct: pressure_pct(start, end, secs),
        }
    }

    /// The figures of the window between two samples, normalised by `ops` operations.
    pub fn figures(&self, start: &Sample, end: &Sample, ops: u64) -> Figures {
        let secs = end.at.duration_since(start.at).as_secs_f64().max(1e-9);
        let per = |x: f64| (ops > 0).then(|| x / ops as f64);
        let tick_us = 1e6 / self.ticks_per_sec;
        let cpu = start.cpu.delta(&end.cpu);
        let disk = match (&start.disk, &end.disk) {
            (Some(a), Some(b)) => Some(a.delta(b)),
            _ => None,
        };
        let engine_ticks = (end.engine.utime + end.engine.stime)
            .saturating_sub(start.engine.utime + start.engine.stime);
        let harness_ticks = (end.harness.utime + end.harness.stime)
            .saturating_sub(start.harness.utime + start.harness.stime);
        let per_op = PerOp {
            reads: disk.and_then(|d| per(d.reads as f64)),
            read_kb: disk.and_then(|d| per(d.read_kb())),
            write_kb: disk.and_then(|d| per(d.write_kb())),
            cs: per(cpu.context_switches as f64),
            cpu_us: per((cpu.us() + cpu.sy()) as f64 * tick_us),
            cpu_us_engine: per(engine_ticks as f64 * tick_us),
            engine_read_kb: per(end
                .engine
                .read_bytes
                .saturating_sub(start.engine.read_bytes) as f64
                / 1024.0),
            engine_write_kb: per(self.engine_written(start, end) as f64 / 1024.0),
            cpu_us_harness: if self.embedded() {
                None
            } else {
                per(harness_ticks as f64 * tick_us)
            },
            waits_harness: if self.embedded() {
                None
            } else {
                per(end.harness_waits.saturating_sub(start.harness_waits) as f64)
            },
        };
        let host = self.host_rates(start, end, secs);
        let gb = |b: u64| b as f64 / fathom_api::units::GIB;
        Figures {
            seconds: secs,
            per_op,
            host,
            db_gb: DbGb {
                allocated: gb(end.db.allocated_bytes),
                apparent: gb(end.db.apparent_bytes),
            },
            rss_gb: gb(end.engine.rss_bytes.saturating_sub(end.histograms)),
            memory: Memory {
                anon_gb: gb(end.engine.anon_bytes.saturating_sub(end.histograms)),
                heap: end.heap.map(|(used, free)| (gb(used), gb(free))),
            },
        }
    }
}

/// The share of a window in which some task waited for a CPU, percent.
fn pressure_pct(start: &Sample, end: &Sample, secs: f64) -> Option<f64> {
    let waited_us = end.cpu_pressure_us?.saturating_sub(start.cpu_pressure_us?);
    Some(waited_us as f64 / 1e4 / secs)
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Where the engine's memory was at a window's end, GiB: its processes' anonymous resident
/// memory and, embedded, the C heap in use and held free.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    pub anon_gb: f64,
    pub heap: Option<(f64, f64)>,
}

/// What the host did during one window.
#[derive(Clone, Debug)]
pub struct Figures {
    pub seconds: f64,
    pub per_op: PerOp,
    pub host: HostRates,
    pub db_gb: DbGb,
    pub rss_gb: f64,
    pub memory: Memory,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An embedded engine's writes leave out what fathom wrote to its result files.
    #[test]
    fn an_embedded_engines_writes_leave_out_the_results() {
        let sampler = Sampler::new(Vec::new(), vec![std::process::id()]);
        let mut start = sampler.sample();
        let mut end = start.clone();
        start.engine.write_bytes = 1 << 20;
        end.engine.write_bytes = 4 << 20;
        start.results_written = 10 << 20;
        end.results_written = (10 << 20) + (1 << 20);
        let f = sampler.figures(&start, &end, 1024);
        assert_eq!(
            f.per_op.engine_write_kb,
            Some(2.0),
            "(3 MiB - 1 MiB) / 1024 ops"
        );
        // A server's processes are not fathom's: nothing to leave out.
        let server = Sampler::new(Vec::new(), vec![1]);
        let f = server.figures(&start, &end, 1024);
        assert_eq!(f.per_op.engine_write_kb, Some(3.0));
    }

    /// What a charged write dirtied is counted as the results'.
    #[test]
    fn a_charged_write_is_counted() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let before = RESULTS_WRITTEN.load(Ordering::Relaxed);
        charge_results(|| std::fs::write(dir.path().join("r"), vec![7u8; 1 << 20]).unwrap());
        // The crate's directory is on a disk, whose page cache accounts dirtied pages to the
        // writer (a tmpfs would not).
        let counted = RESULTS_WRITTEN.load(Ordering::Relaxed) - before;
        assert!(counted >= 1 << 20, "{counted}");
    }

    /// An embedded engine's RSS leaves out the harness's histograms, which share its process:
    /// 40 of them (a few clients' recorders) are some 20 MB here.
    #[test]
    fn an_embedded_engines_memory_leaves_the_histograms_out() {
        let dir = tempfile::tempdir().unwrap();
        let sampler = Sampler::new(vec![dir.path().to_path_buf()], vec![std::process::id()]);
        let held: Vec<crate::recorder::Recorder> =
            (0..4).map(|_| crate::recorder::Recorder::new(9)).collect();
        let start = sampler.sample();
        let end = sampler.sample();
        assert!(end.histograms >= 40 * 100_000, "{} bytes", end.histograms);
        let f = sampler.figures(&start, &end, 1);
        let rss = end.engine.rss_bytes as f64 / fathom_api::units::GIB;
        let left_out = (rss - f.rss_gb) * fathom_api::units::GIB;
        let expected = end.histograms.min(end.engine.rss_bytes) as f64;
        assert!(
            (left_out - expected).abs() < 1.0,
            "{left_out} of {expected}"
        );
        drop(held);
        // Beside a server, nothing is left out.
        let server = Sampler::new(vec![dir.path().to_path_buf()], vec![1]);
        assert_eq!(server.sample().histograms, 0);
    }

    /// Intervals reuse a recent walk of the data directory; boundaries walk it afresh.
    #[test]
    fn intervals_reuse_a_recent_size() {
        let dir = tempfile::tempdir().unwrap();
        let sampler = Sampler::new(vec![dir.path().to_path_buf()], vec![std::process::id()]);
        assert_eq!(sampler.sample().db.apparent_bytes, 0);
        std::fs::write(dir.path().join("f"), vec![1u8; 5000]).unwrap();
        assert_eq!(sampler.sample_interval().db.apparent_bytes, 0);
        assert_eq!(sampler.sample().db.apparent_bytes, 5000);
    }

    /// Intervals read a server's processes as last walked (a process forked since is found by
    /// the next walk); boundaries walk /proc afresh.
    #[test]
    fn intervals_reuse_the_servers_processes_as_last_walked() {
        let mut server = std::process::Command::new("sh")
            .args(["-c", "sleep 0.5; sleep 10"])
            .spawn()
            .unwrap();
        let root = server.id();
        let sampler = Sampler::new(Vec::new(), vec![root]);
        let mut first = sampler.processes(true).0;
        for _ in 0..40 {
            if first.len() == 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
            first = sampler.processes(true).0;
        }
        assert_eq!((first[0], first.len()), (root, 2), "{first:?}");
        std::thread::sleep(Duration::from_millis(800));
        let (reused, walk) = sampler.processes(false);
        assert_eq!(reused, first);
        assert!(walk.is_none(), "an interval within the floor walked /proc");
        let walked = sampler.processes(true).0;
        for &pid in walked.iter().rev() {
            // SAFETY: kill has no memory-safety preconditions; the pids are this test's children.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        server.wait().unwrap();
        assert_eq!(walked.len(), 2, "{walked:?}");
        assert_ne!(walked[1], first[1], "the second sleep is another process");
    }

    /// Intervals reuse a recent read of a server's proportional sizes; boundaries, and a
    /// process the last read did not see, read afresh.
    #[test]
    fn intervals_reuse_recent_proportional_sizes() {
        let me = std::process::id();
        let sampler = Sampler::new(Vec::new(), vec![1]);
        let cache = |pid| {
            let (age, took) = (Duration::ZERO, Duration::ZERO);
            sampler
                .last_pss
                .pretend(BTreeMap::from([(pid, 7)]), age, took)
        };
        cache(me);
        assert_eq!(sampler.pss(&[me], false)[&me], 7);
        assert!(sampler.pss(&[me], true)[&me] > 4096);
        cache(u32::MAX);
        assert!(sampler.pss(&[me], false)[&me] > 4096);
    }
}
