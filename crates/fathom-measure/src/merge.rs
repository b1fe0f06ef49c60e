//! Merging runs of one step sequence made on several client hosts into one run. Latency is
//! exact: it comes from adding the runs' HdrHistogram logs, never from averaging percentiles.
//! Operations and throughput add up; the client hosts' per-operation costs are their sum over
//! the total operations. Database size, RSS, engine counters and device rates add up over
//! shards (a host each with its own engine) and are one host's reading for clients of one
//! server (`Topology`).

use crate::recorder::new_histogram;
use anyhow::Context;
use base64::Engine as _;
use fathom_api::combine::{combine, declared, Rule};
use fathom_schema::latency::Latency;
use fathom_schema::result::{
    IntervalRecord, MergeRecord, RunManifest, RunStatus, StepSummary, Topology,
};
use fathom_schema::store::{LoadedRun, RunDir};
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

/// Reads a step's HdrHistogram interval log, adds it into `into`, and returns the calls it
/// timed, its background writers' left out.
pub fn read_log(path: &Path, into: &mut Logged) -> anyhow::Result<u64> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut de = Deserializer::new();
    let mut ops = 0;
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
        if !tag.starts_with("bg.") {
            ops += hist.len();
        }
        let key = (h.start_timestamp().as_micros() as u64, tag);
        let slot = into
            .entry(key)
            .or_insert_with(|| (h.duration(), new_histogram()));
        slot.1
            .add(&hist)
            .map_err(|e| anyhow::anyhow!("{}: {e:?}", path.display()))?;
    }
    Ok(ops)
}

/// The calls a step's histograms hold: its kinds' timed calls (each as many as its operations
/// unless a call counts for several), or its operations where it names no kinds.
fn timed_calls(step: &StepSummary) -> u64 {
    if step.by_op.is_empty() {
        return step.ops;
    }
    step.by_op.values().map(|o| o.timed.unwrap_or(o.ops)).sum()
}

/// Reads run `r`'s histogram log of step `i` into `into`, checking that it holds the calls
/// the step's summary timed: a log cut at a line's end still reads, and would otherwise be
/// found short only in the merged sum, without its name.
fn add_checked_log(r: &LoadedRun, i: usize, into: &mut Logged) -> anyhow::Result<()> {
    let step = &r.steps[i];
    let path = r.histogram_log(step);
    let held = read_log(&path, into)?;
    let timed = timed_calls(step);
    if held != timed {
        anyhow::bail!(
            "{}: holds {held} timed calls where the step's summary counts {timed} (a cut or damaged log)",
            path.display(),
        );
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

/// How the runs shared their engine: clients of one server when every run reached the same
/// server by its `url`, else shards (an embedded engine, or a server each started, per host).
fn topology(runs: &[LoadedRun]) -> Topology {
    let url = |r: &LoadedRun| r.manifest.setup.settings.get("url").cloned();
    match url(&runs[0]) {
        Some(u) if runs.iter().all(|r| url(r).as_ref() == Some(&u)) => Topology::OneServer,
        _ => Topology::Shards,
    }
}

/// The rule of a figure at `path` for `topology`: shards add up their sizes, memory, engine
/// counters and device traffic (shares and per-request figures weighted by operations);
/// clients of one server keep each figure's declared rule.
fn rule_for(topology: Topology, path: &str) -> Rule {
    let declared = declared::<StepSummary>(path);
    if topology == Topology::OneServer {
        return declared;
    }
    let leaf = path.rsplit('.').next().unwrap_or(path);
    let share =
        leaf.ends_with("_pct") || leaf.ends_with("_ms") || leaf.ends_with("_kb") || leaf == "w_amp";
    let added = path.starts_with("db_gb")
        || path == "rss_gb"
        || path.starts_with("engine_stats.")
        || path.starts_with("host.");
    // What names the device, and the interference a step is judged by, keep their rules.
    let kept = matches!(
        leaf,
        "device"
            | "others_cores"
            | "others_pct"
            | "others_peak_cores"
            | "others_peak_pct"
            | "others_peak_seconds"
            | "steal_pct"
    );
    match (added && !kept, share) {
        (true, true) => Rule::ByOps,
        (true, false) => Rule::Sum,
        _ => declared,
    }
}

fn merge_step(
    topology: Topology,
    parts: &[&StepSummary],
    logged: &Logged,
    intervals: &[Vec<IntervalRecord>],
) -> anyhow::Result<(StepSummary, Vec<IntervalRecord>)> {
    let mut all = new_histogram();
    let mut kinds: BTreeMap<&str, Histogram<u64>> = BTreeMap::new();
    let mut bg = new_histogram();
    // Interval k of every host, by its nominal start: (k - 1) interval lengths into the
    // measured part.
    let mut by_interval: BTreeMap<u64, Histogram<u64>> = BTreeMap::new();
    let add =
        |a: &mut Histogram<u64>, b: &Histogram<u64>| a.add(b).map_err(|e| anyhow::anyhow!("{e:?}"));
    for ((start, tag), (len, h)) in logged {
        if tag.starts_with("bg.") {
            add(&mut bg, h)?;
            continue;
        }
        add(&mut all, h)?;
        add(kinds.entry(tag).or_insert_with(new_histogram), h)?;
        let len = (len.as_micros() as u64).max(1);
        let k = (start + len / 2) / len + 1;
        add(by_interval.entry(k).or_insert_with(new_histogram), h)?;
    }
    // Each run's log was checked against its summary as it was read (`add_checked_log`).
    let weights: Vec<u64> = parts.iter().map(|s| s.ops).collect();
    // Each figure by the rule its field declares (`result.rs`): operations and rates add up,
    // sizes and lengths take the largest any host saw, per-operation costs are weighted by
    // each host's operations; latencies are replaced from the merged histograms below.
    let mut summary: StepSummary = combine(parts, &weights, &|p| rule_for(topology, p));
    let e = &mut summary.engine_stats;
    if let (Topology::Shards, Some(c_wgb), Some(ingest)) = (topology, e.c_wgb, e.ingest_gb) {
        // The whole's write amplification: all shards' flush and compaction writes over all
        // their ingest.
        if ingest > 0.0 {
            e.w_amp = Some(c_wgb / ingest);
        }
    }
    let starts: Vec<u64> = parts.iter().filter_map(|p| p.start_unix_ms).collect();
    summary.start_skew_seconds = (starts.len() == parts.len() && !starts.is_empty()).then(|| {
        (starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0)) as f64 / 1000.0
    });
    summary.latency_us = Latency::of(&all);
    for (kind, o) in summary.by_op.iter_mut() {
        if let Some(h) = kinds.get(kind.as_str()) {
            o.latency_us = Latency::of(h);
            o.timed = (h.len() != o.ops).then_some(h.len());
        }
    }
    if let Some(b) = summary.background.as_mut() {
        b.latency_us = Latency::of(&bg);
    }
    // Each host's queue is its own; the merged step keeps the first's.
    summary.queue_us = parts[0].queue_us.clone();
    let n = intervals.iter().map(Vec::len).max().unwrap_or(0);
    let mut merged = Vec::new();
    for k in 0..n {
        let at: Vec<&IntervalRecord> = intervals.iter().filter_map(|v| v.get(k)).collect();
        let weights: Vec<u64> = at.iter().map(|i| i.ops).collect();
        let mut record: IntervalRecord = combine(&at, &weights, &declared::<IntervalRecord>);
        record.latency_us = by_interval
            .get(&(k as u64 + 1))
            .map_or_else(Latency::default, Latency::of);
        merged.push(record);
    }
    Ok((summary, merged))
}

const SHARDS: &str = "each host ran its own engine (shards): db size, RSS, engine statistics \
                      and device rates add up";
const ONE_SERVER: &str = "the hosts were clients of one server: db size and RSS are the \
                          largest any host saw, engine statistics the first host's reading";

/// The merged run's `run.json`: the first run's, with the clients added up, finished only if
/// every run finished, and what was merged and how stated.
fn merged_manifest(runs: &[LoadedRun], topology: Topology) -> RunManifest {
    let hosts: Vec<&str> = runs
        .iter()
        .map(|r| r.manifest.host.hostname.as_str())
        .collect();
    let mut manifest: RunManifest = runs[0].manifest.clone();
    manifest.clients = runs.iter().map(|r| r.manifest.clients).sum();
    manifest.status = if runs
        .iter()
        .all(|r| r.manifest.status == RunStatus::Finished)
    {
        RunStatus::Finished
    } else {
        RunStatus::Partial
    };
    // The hosts' runs of one experiment cell stay that cell (its round, its adaptive looks),
    // whichever shard ran each; runs of different cells are no cell.
    let cell = |r: &LoadedRun| {
        r.manifest.experiment.clone().map(|mut e| {
            e.shard = None;
            e
        })
    };
    let first_cell = cell(&runs[0]);
    manifest.experiment = first_cell.filter(|c| runs.iter().all(|r| cell(r).as_ref() == Some(c)));
    manifest.merged = Some(MergeRecord {
        hosts: hosts.iter().map(|h| h.to_string()).collect(),
        topology,
    });
    manifest.host.note = Some(format!(
        "merged from {} runs (hosts {}): ops and ops/s add up, latency is from the merged \
         histograms; per-op host figures are the client hosts' total over all operations; {}",
        runs.len(),
        hosts.join(", "),
        match topology {
            Topology::Shards => SHARDS,
            Topology::OneServer => ONE_SERVER,
        }
    ));
    manifest
}

/// Two of `runs` that are one run: the same directory given twice, or a copy of it (the same
/// host, start and data directory, which a run's own process makes its own).
fn same_run(runs: &[LoadedRun]) -> Option<(&LoadedRun, &LoadedRun)> {
    let identity = |r: &LoadedRun| {
        let m = &r.manifest;
        (
            m.host.hostname.clone(),
            m.started_at.clone(),
            m.host.data_dir.clone(),
        )
    };
    let keys: Vec<_> = (runs.iter())
        .map(|r| {
            let path = std::fs::canonicalize(&r.path).unwrap_or(r.path.clone());
            (path, identity(r))
        })
        .collect();
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            if keys[i].0 == keys[j].0 || keys[i].1 == keys[j].1 {
                return Some((&runs[i], &runs[j]));
            }
        }
    }
    None
}

/// Merges `runs` (one per client host, same workload and steps) into a new run directory
/// `out`, which must not exist.
pub fn merge(runs: &[LoadedRun], out: &Path) -> anyhow::Result<std::path::PathBuf> {
    let first = runs.first().context("nothing to merge")?;
    if let Some((a, b)) = same_run(runs) {
        anyhow::bail!(
            "{} and {} are the same run (host {}, started {}, data in {}): each host's run is \
             merged once; give each host's run directory once",
            a.path.display(),
            b.path.display(),
            a.manifest.host.hostname,
            a.manifest.started_at,
            a.manifest.host.data_dir
        );
    }
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
    let topology = topology(runs);
    let manifest = merged_manifest(runs, topology);
    for (i, step) in first.steps.iter().enumerate() {
        let parts: Vec<&StepSummary> = runs.iter().map(|r| &r.steps[i]).collect();
        let mut logged = Logged::new();
        let mut intervals = Vec::new();
        for r in runs {
            add_checked_log(r, i, &mut logged)?;
            intervals.push(r.intervals(&r.steps[i])?);
        }
        let (summary, merged) = merge_step(topology, &parts, &logged, &intervals)
            .with_context(|| format!("merging step {}", step.step))?;
        let files = dir.step_files(summary.index, &summary.step);
        write_log(&files.histograms, &summary.step, &logged)?;
        let lines: Vec<String> = merged
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()?;
        std::fs::write(&files.intervals, lines.join("\n") + "\n")?;
        // The first host's profile (its rule), with its folded stacks beside it.
        if let Some(p) = &summary.profile {
            let (from, to) = (first.path.join(&p.folded), dir.path.join(&p.folded));
            std::fs::copy(&from, &to)
                .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
        }
        dir.write_summary(&summary)?;
    }
    dir.write_manifest(&manifest)?;
    Ok(dir.path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_api::combine::{MergeRules, Rule};
    use fathom_schema::result::IntervalRecord;
    use schemars::schema::{RootSchema, Schema, SchemaObject};

    /// Every leaf path of a type's schema, map keys as `*`.
    fn paths(root: &RootSchema) -> Vec<String> {
        fn walk(root: &RootSchema, s: &SchemaObject, at: &str, out: &mut Vec<String>) {
            let join = |k: &str| {
                if at.is_empty() {
                    k.to_string()
                } else {
                    format!("{at}.{k}")
                }
            };
            if let Some(r) = &s.reference {
                let name = r.trim_start_matches("#/definitions/");
                if let Some(Schema::Object(d)) = root.definitions.get(name) {
                    return walk(root, d, at, out);
                }
            }
            let mut inner = false;
            if let Some(sub) = &s.subschemas {
                for list in [&sub.any_of, &sub.all_of, &sub.one_of]
                    .into_iter()
                    .flatten()
                {
                    for x in list {
                        if let Schema::Object(o) = x {
                            if o.reference.is_some() || o.object.is_some() {
                                inner = true;
                                walk(root, o, at, out);
                            }
                        }
                    }
                }
            }
            if let Some(obj) = &s.object {
                for (k, v) in &obj.properties {
                    if let Schema::Object(o) = v {
                        walk(root, o, &join(k), out);
                    }
                }
                if let Some(extra) = &obj.additional_properties {
                    if let Schema::Object(o) = &**extra {
                        walk(root, o, &join("*"), out);
                    }
                }
                return;
            }
            if !inner {
                out.push(at.to_string());
            }
        }
        let mut out = Vec::new();
        walk(root, &root.schema, "", &mut out);
        out.sort();
        out.dedup();
        out
    }

    /// Every figure's path reaches a declared rule: a field without one does not compile
    /// (`#[derive(Merge)]`), and this finds a nested type or map whose rules are not reached.
    #[test]
    fn every_figure_reaches_a_declared_rule() {
        fn undeclared<T: MergeRules>(all: &[String]) -> Vec<&String> {
            let rule = |p: &String| T::rule(&p.split('.').collect::<Vec<_>>());
            all.iter().filter(|p| rule(p).is_none()).collect()
        }
        let steps = paths(&schemars::schema_for!(StepSummary));
        let intervals = paths(&schemars::schema_for!(IntervalRecord));
        for must in [
            "by_op.*.latency_us.p99",
            "engine_stats.w_amp",
            "host.idle_pct",
        ] {
            assert!(steps.contains(&must.to_string()), "{steps:?}");
        }
        assert!(
            undeclared::<StepSummary>(&steps).is_empty(),
            "{:?}",
            undeclared::<StepSummary>(&steps)
        );
        let missing = undeclared::<IntervalRecord>(&intervals);
        assert!(missing.is_empty(), "{missing:?}");
        // A path the types do not have has no rule.
        assert_eq!(StepSummary::rule(&["no_such_figure"]), None);
        assert_eq!(
            StepSummary::rule(&["engine_stats", "rocksdb.own"]),
            Some(Rule::First)
        );
        assert_eq!(StepSummary::rule(&["host", "idle_pct"]), Some(Rule::Min));
        assert_eq!(StepSummary::rule(&["by_op", "GET", "ops"]), Some(Rule::Sum));
        assert_eq!(
            StepSummary::rule(&["background", "latency_us", "p99"]),
            Some(Rule::First)
        );
    }

    /// The hosts' runs of one experiment cell merge into that cell, with its adaptive rounds'
    /// `min` and `max` (a merged run is judged at its look, not as fixed repeats); runs of
    /// different cells merge into none.
    #[test]
    fn a_merged_run_keeps_its_experiment_cell() {
        let run = |shard: &str, repeat: usize| LoadedRun {
            path: shard.into(),
            manifest: RunManifest {
                status: RunStatus::Finished,
                experiment: Some(fathom_schema::result::ExperimentCell {
                    name: "e".into(),
                    cell: "a.w.c1.r1".into(),
                    repeat,
                    min_repeats: Some(3),
                    max_repeats: Some(8),
                    shard: Some(shard.into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            steps: Vec::new(),
        };
        let m = merged_manifest(&[run("1/2", 1), run("2/2", 1)], Topology::Shards);
        let cell = m.experiment.expect("one cell");
        assert_eq!((cell.min_repeats, cell.max_repeats), (Some(3), Some(8)));
        assert_eq!(cell.shard, None);
        let m = merged_manifest(&[run("1/2", 1), run("2/2", 2)], Topology::Shards);
        assert_eq!(m.experiment, None);
    }

    /// A run given twice, or copied, is one host's run, not two.
    #[test]
    fn the_same_run_twice_is_refused() {
        let run = |path: &str, host: &str| LoadedRun {
            path: path.into(),
            manifest: RunManifest {
                started_at: "2026-11-29T10:00:00Z".into(),
                host: fathom_schema::result::HostFacts {
                    hostname: host.into(),
                    data_dir: "/tmp/d.1".into(),
                    ..Default::default()
                },
                ..Default::default()
            },
            steps: Vec::new(),
        };
        let e = merge(
            &[run("a", "h1"), run("a", "h1")],
            Path::new("/nonexistent/out"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("are the same run"), "{e}");
        let e = merge(
            &[run("a", "h1"), run("copy", "h1")],
            Path::new("/nonexistent/out"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("copy") && e.contains("same run"), "{e}");
        assert!(same_run(&[run("a", "h1"), run("b", "h2")]).is_none());
    }

    /// Interval k's latency comes from the histograms logged at its nominal start, even where no
    /// host logged anything in an earlier interval (which shifted every later one by one).
    #[test]
    fn an_interval_is_merged_by_its_nominal_start() {
        let second = Duration::from_secs(1);
        let mut logged = Logged::new();
        for (start_s, value_ns) in [(1u64, 5_000u64), (2, 9_000)] {
            let mut h = new_histogram();
            h.record(value_ns).unwrap();
            logged.insert((start_s * 1_000_000, "get".into()), (second, h));
        }
        let step = StepSummary::default();
        let records: Vec<IntervalRecord> = (1..=3)
            .map(|k| IntervalRecord {
                interval: k,
                ..Default::default()
            })
            .collect();
        let (_, merged) = merge_step(Topology::Shards, &[&step], &logged, &[records]).unwrap();
        let p50: Vec<f64> = merged.iter().map(|r| r.latency_us.p50).collect();
        assert_eq!(p50[0], 0.0, "{p50:?}");
        assert!(
            (p50[1] - 5.0).abs() < 0.1 && (p50[2] - 9.0).abs() < 0.1,
            "{p50:?}"
        );
    }

    /// Shards (an engine per host) add up their sizes, memory and device traffic, and weigh
    /// shares by operations; clients of one server keep the declared rules.
    #[test]
    fn shards_add_up_what_clients_of_one_server_share() {
        let part = |ops: u64, gb: f64, rss: f64, rps: f64, idle: f64| {
            let mut s = StepSummary {
                ops,
                rss_gb: rss,
                ..StepSummary::default()
            };
            s.db_gb.allocated = gb;
            s.host.rps = Some(rps);
            s.host.idle_pct = idle;
            s.engine_stats.flush_gb = Some(gb / 10.0);
            s
        };
        let (a, b) = (
            part(100, 1.0, 0.5, 5.0, 40.0),
            part(300, 3.0, 0.25, 7.0, 10.0),
        );
        let shards: StepSummary =
            combine(&[&a, &b], &[100, 300], &|p| rule_for(Topology::Shards, p));
        assert_eq!(shards.db_gb.allocated, 4.0);
        assert_eq!(shards.rss_gb, 0.75);
        assert_eq!(shards.host.rps, Some(12.0));
        assert!((shards.engine_stats.flush_gb.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(shards.host.idle_pct, 17.5);
        let server: StepSummary = combine(&[&a, &b], &[100, 300], &|p| {
            rule_for(Topology::OneServer, p)
        });
        assert_eq!(server.db_gb.allocated, 3.0);
        assert_eq!(server.host.rps, Some(5.0));
    }

    /// Two hosts' parts of one step merged by the declared rules: counts add up, a cost per
    /// operation is weighted by each host's operations, size takes the largest, idle CPU the
    /// least, and a host's device rates are the first host's.
    #[test]
    fn two_hosts_merge_by_the_declared_rules() {
        let part = |ops: u64, cpu_us: f64, gb: f64, idle: f64, rps: f64| {
            let mut s = StepSummary {
                ops,
                failed: ops / 100,
                ..StepSummary::default()
            };
            s.by_op.insert("get".into(), Default::default());
            s.by_op.get_mut("get").unwrap().failed = ops / 50;
            s.per_op.cpu_us = Some(cpu_us);
            s.db_gb.allocated = gb;
            s.host.idle_pct = idle;
            s.host.rps = Some(rps);
            s
        };
        let (a, b) = (
            part(100, 10.0, 1.0, 40.0, 5.0),
            part(300, 20.0, 3.0, 10.0, 7.0),
        );
        let m: StepSummary = combine(&[&a, &b], &[100, 300], &declared::<StepSummary>);
        assert_eq!((m.ops, m.failed, m.by_op["get"].failed), (400, 4, 8));
        assert_eq!(m.per_op.cpu_us, Some(17.5));
        assert_eq!(m.db_gb.allocated, 3.0);
        assert_eq!(m.host.idle_pct, 10.0);
        assert_eq!(m.host.rps, Some(5.0));
    }
}
