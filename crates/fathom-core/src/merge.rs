//! Merging runs of one step sequence made on several client hosts into one run. Latency is
//! exact: it comes from adding the runs' HdrHistogram logs, never from averaging percentiles.
//! Operations and throughput add up; the client hosts' per-operation costs are their sum over
//! the total operations; database size and RSS are the largest any host saw.

use crate::recorder::{new_histogram, Latency};
use crate::result::{
    Background, IntervalRecord, OpSummary, PerOp, RunManifest, RunStatus, StepSummary,
};
use crate::store::{LoadedRun, RunDir};
use anyhow::Context;
use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A step's histograms by (interval start in µs, tag), with each interval's length.
type Logged = BTreeMap<(u64, String), (Duration, Histogram<u64>)>;

/// Reads a step's HdrHistogram interval log and adds it into `into`.
pub fn read_log(path: &Path, into: &mut Logged) -> anyhow::Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let entry =
            entry.map_err(|e| anyhow::anyhow!("{}: bad log line: {e:?}", path.display()))?;
        let LogEntry::Interval(h) = entry else {
            continue;
        };
        let raw = base64::engine::general_purpose::STANDARD
            .decode(h.encoded_histogram())
            .with_context(|| format!("{}: bad base64 histogram", path.display()))?;
        let hist: Histogram<u64> = de
            .deserialize(&mut raw.as_slice())
            .map_err(|e| anyhow::anyhow!("{}: bad histogram: {e:?}", path.display()))?;
        let tag = h.tag().map_or("", |t| t.as_str()).to_string();
        let key = (h.start_timestamp().as_micros() as u64, tag);
        let slot = into
            .entry(key)
            .or_insert_with(|| (h.duration(), new_histogram()));
        slot.1
            .add(&hist)
            .map_err(|e| anyhow::anyhow!("{}: {e:?}", path.display()))?;
    }
    Ok(())
}

fn write_log(path: &Path, step: &str, logged: &Logged) -> anyhow::Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut serializer = V2DeflateSerializer::new();
    let origin = SystemTime::now();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(&format!(
            "fathom step {step}, merged by fathom merge; values in nanoseconds"
        ))
        .with_start_time(origin)
        .with_base_time(origin)
        .with_max_value_divisor(1000.0)
        .begin_log_with(&mut file, &mut serializer)?;
    for ((start, tag), (len, h)) in logged {
        log.write_histogram(h, Duration::from_micros(*start), *len, Tag::new(tag))
            .map_err(|e| anyhow::anyhow!("writing {}: {e:?}", path.display()))?;
    }
    drop(log);
    use std::io::Write;
    file.flush()?;
    Ok(())
}

/// Σ(x × ops) / Σ ops over the parts, `None` if any part lacks the figure.
fn weighted(parts: &[(u64, Option<f64>)]) -> Option<f64> {
    let total: u64 = parts.iter().map(|p| p.0).sum();
    if total == 0 {
        return None;
    }
    let mut sum = 0.0;
    for (ops, v) in parts {
        sum += (*v)? * *ops as f64;
    }
    Some(sum / total as f64)
}

fn merged_per_op(parts: &[(u64, &PerOp)]) -> PerOp {
    PerOp::from_fields(|g| weighted(&parts.iter().map(|(n, p)| (*n, g(p))).collect::<Vec<_>>()))
}

fn merge_step(
    parts: &[&StepSummary],
    logged: &Logged,
    intervals: &[Vec<IntervalRecord>],
) -> anyhow::Result<(StepSummary, Vec<IntervalRecord>)> {
    let mut all = new_histogram();
    let mut kinds: BTreeMap<&str, Histogram<u64>> = BTreeMap::new();
    let mut bg = new_histogram();
    let mut by_start: BTreeMap<u64, Histogram<u64>> = BTreeMap::new();
    let add =
        |a: &mut Histogram<u64>, b: &Histogram<u64>| a.add(b).map_err(|e| anyhow::anyhow!("{e:?}"));
    for ((start, tag), (_, h)) in logged {
        if tag.starts_with("bg.") {
            add(&mut bg, h)?;
            continue;
        }
        add(&mut all, h)?;
        add(kinds.entry(tag).or_insert_with(new_histogram), h)?;
        add(by_start.entry(*start).or_insert_with(new_histogram), h)?;
    }
    let first = parts[0];
    let ops: u64 = parts.iter().map(|s| s.ops).sum();
    if all.len() != ops {
        anyhow::bail!(
            "step {}: the histogram logs hold {} operations but the summaries {ops}",
            first.step,
            all.len()
        );
    }
    let w = |g: fn(&StepSummary) -> Option<f64>| {
        weighted(&parts.iter().map(|s| (s.ops, g(s))).collect::<Vec<_>>())
    };
    let mut by_op = BTreeMap::new();
    for (kind, h) in &kinds {
        let (n, bytes, rows) = parts
            .iter()
            .filter_map(|s| s.by_op.get(*kind))
            .fold((0, 0, 0), |(n, b, r), o| {
                (n + o.ops, b + o.bytes, r + o.rows)
            });
        by_op.insert(
            kind.to_string(),
            OpSummary {
                role: parts
                    .iter()
                    .find_map(|s| s.by_op.get(*kind).and_then(|o| o.role)),
                ops: n,
                bytes,
                latency_us: Latency::of(h),
                rows,
            },
        );
    }
    let max = |g: fn(&StepSummary) -> f64| parts.iter().map(|s| g(s)).fold(0.0, f64::max);
    let background = parts
        .iter()
        .filter_map(|s| s.background.as_ref())
        .fold(None::<Background>, |acc, b| {
            let mut m = acc.unwrap_or_default();
            m.ops += b.ops;
            m.bytes += b.bytes;
            m.bytes_per_sec += b.bytes_per_sec;
            m.target_bytes_per_sec += b.target_bytes_per_sec;
            m.rows += b.rows;
            m.rows_per_sec += b.rows_per_sec;
            m.target_rows_per_sec += b.target_rows_per_sec;
            Some(m)
        })
        .map(|mut b| {
            b.latency_us = Latency::of(&bg);
            b
        });
    let mut host = first.host.clone();
    host.idle_pct = parts
        .iter()
        .map(|s| s.host.idle_pct)
        .fold(f64::MAX, f64::min);
    host.steal_pct = max(|s| s.host.steal_pct);
    let summary = StepSummary {
        step: first.step.clone(),
        index: first.index,
        clients: parts.iter().map(|s| s.clients).sum(),
        ops,
        seconds: max(|s| s.seconds),
        ops_per_sec: parts.iter().map(|s| s.ops_per_sec).sum(),
        mb_per_sec: parts.iter().map(|s| s.mb_per_sec).sum(),
        usec_op: w(|s| Some(s.usec_op)).unwrap_or(0.0),
        latency_us: Latency::of(&all),
        per_op: merged_per_op(&parts.iter().map(|s| (s.ops, &s.per_op)).collect::<Vec<_>>()),
        db_gb: crate::result::DbGb {
            allocated: max(|s| s.db_gb.allocated),
            apparent: max(|s| s.db_gb.apparent),
        },
        rss_gb: max(|s| s.rss_gb),
        engine_stats: first.engine_stats.clone(),
        by_op,
        host,
        background,
        maintenance_seconds: max(|s| s.maintenance_seconds),
        window_seconds: max(|s| s.window_seconds),
        arrival_rate: parts.iter().map(|s| s.arrival_rate).sum::<Option<f64>>(),
        harness_ns_per_op: w(|s| s.harness_ns_per_op),
        interrupted: parts.iter().any(|s| s.interrupted),
        started_at: parts
            .iter()
            .map(|s| s.started_at.clone())
            .min()
            .unwrap_or_default(),
        query_mix: first.query_mix,
        retries_per_sec: parts.iter().map(|s| s.retries_per_sec).sum(),
        rows: parts.iter().map(|s| s.rows).sum(),
        rows_per_sec: parts.iter().map(|s| s.rows_per_sec).sum(),
        // Each host's queue is its own; the merged step keeps the first's.
        queue_us: first.queue_us.clone(),
        shared_queue: first.shared_queue,
    };
    // Interval k of every host is the k-th interval start in the logs.
    let starts: Vec<&Histogram<u64>> = by_start.values().collect();
    let n = intervals.iter().map(Vec::len).max().unwrap_or(0);
    let mut merged = Vec::new();
    for k in 0..n {
        let at: Vec<&IntervalRecord> = intervals.iter().filter_map(|v| v.get(k)).collect();
        let f = at[0];
        merged.push(IntervalRecord {
            step: f.step.clone(),
            interval: f.interval,
            t_start: f.t_start,
            t_end: f.t_end,
            ops: at.iter().map(|i| i.ops).sum(),
            ops_per_sec: at.iter().map(|i| i.ops_per_sec).sum(),
            latency_us: starts
                .get(k)
                .map_or_else(Latency::default, |h| Latency::of(h)),
            per_op: merged_per_op(&at.iter().map(|i| (i.ops, &i.per_op)).collect::<Vec<_>>()),
            db_gb: crate::result::DbGb {
                allocated: at.iter().map(|i| i.db_gb.allocated).fold(0.0, f64::max),
                apparent: at.iter().map(|i| i.db_gb.apparent).fold(0.0, f64::max),
            },
            rss_gb: at.iter().map(|i| i.rss_gb).fold(0.0, f64::max),
            retries: at.iter().map(|i| i.retries).sum(),
        });
    }
    Ok((summary, merged))
}

/// Merges `runs` (one per client host, same workload and steps) into a new run directory
/// `out`, which must not exist.
pub fn merge(runs: &[LoadedRun], out: &Path) -> anyhow::Result<std::path::PathBuf> {
    let first = runs.first().context("nothing to merge")?;
    for r in &runs[1..] {
        let (a, b) = (&first.manifest, &r.manifest);
        let names = |x: &LoadedRun| x.steps.iter().map(|s| s.step.clone()).collect::<Vec<_>>();
        if a.workload != b.workload || names(first) != names(r) {
            anyhow::bail!(
                "{} ran {} with steps {:?}, but {} ran {} with steps {:?}: only runs of the same steps merge",
                first.path.display(),
                a.workload,
                names(first),
                r.path.display(),
                b.workload,
                names(r)
            );
        }
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = out
        .file_name()
        .context("--out needs a directory name")?
        .to_string_lossy();
    let dir = RunDir::create_named(parent, &name)?;
    let hosts: Vec<&str> = runs
        .iter()
        .map(|r| r.manifest.host.hostname.as_str())
        .collect();
    let mut manifest: RunManifest = first.manifest.clone();
    manifest.clients = runs.iter().map(|r| r.manifest.clients).sum();
    manifest.status = if runs
        .iter()
        .all(|r| r.manifest.status == RunStatus::Finished)
    {
        RunStatus::Finished
    } else {
        RunStatus::Partial
    };
    manifest.experiment = None;
    manifest.host.note = Some(format!(
        "merged from {} runs (hosts {}): ops and ops/s add up, latency is from the merged \
         histograms; per-op host figures are the client hosts' total over all operations; \
         db size and RSS the largest any host saw",
        runs.len(),
        hosts.join(", ")
    ));
    for (i, step) in first.steps.iter().enumerate() {
        let parts: Vec<&StepSummary> = runs.iter().map(|r| &r.steps[i]).collect();
        let mut logged = Logged::new();
        let mut intervals = Vec::new();
        for r in runs {
            read_log(&r.histogram_log(&r.steps[i]), &mut logged)?;
            intervals.push(r.intervals(&r.steps[i])?);
        }
        let (summary, merged) = merge_step(&parts, &logged, &intervals)
            .with_context(|| format!("merging step {}", step.step))?;
        let files = dir.step_files(summary.index, &summary.step);
        write_log(&files.histograms, &summary.step, &logged)?;
        let lines: Vec<String> = merged
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()?;
        std::fs::write(&files.intervals, lines.join("\n") + "\n")?;
        dir.write_summary(&summary)?;
    }
    dir.write_manifest(&manifest)?;
    Ok(dir.path)
}
