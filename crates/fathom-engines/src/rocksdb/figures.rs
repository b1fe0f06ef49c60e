//! RocksDB's figures, the same for the bundled build and a loaded library: the statistics kept
//! as cumulative counters (by their names in the statistics string, as ticker numbers differ
//! by release), the gauges read from properties, and the per-step figures derived from both.

use fathom_api::stats::EngineStats;
use fathom_api::target::{delta, Counters};
use fathom_api::units::GIB as GB;
use std::collections::BTreeMap;

/// Where a cumulative counter comes from: a ticker's count, or the sum of a histogram.
#[derive(Clone, Copy)]
pub enum Source {
    Ticker,
    Sum,
}

/// A statistic kept as a cumulative counter: fathom's name, its kind, and its name in
/// RocksDB's statistics string.
pub struct Statistic {
    pub name: &'static str,
    pub source: Source,
    pub printed: &'static str,
}

const fn stat(name: &'static str, source: Source, printed: &'static str) -> Statistic {
    Statistic {
        name,
        source,
        printed,
    }
}

/// The statistics kept as cumulative counters, by the names `step_figures` reads.
pub const CUMULATIVE: &[Statistic] = &[
    stat("ingest_bytes", Source::Ticker, "rocksdb.bytes.written"),
    stat(
        "flush_write_bytes",
        Source::Ticker,
        "rocksdb.flush.write.bytes",
    ),
    stat(
        "compact_write_bytes",
        Source::Ticker,
        "rocksdb.compact.write.bytes",
    ),
    stat(
        "compact_read_bytes",
        Source::Ticker,
        "rocksdb.compact.read.bytes",
    ),
    stat("wal_bytes", Source::Ticker, "rocksdb.wal.bytes"),
    stat("stall_micros", Source::Ticker, "rocksdb.stall.micros"),
    stat("block_cache_hit", Source::Ticker, "rocksdb.block.cache.hit"),
    stat(
        "block_cache_miss",
        Source::Ticker,
        "rocksdb.block.cache.miss",
    ),
    stat(
        "compaction_micros",
        Source::Sum,
        "rocksdb.compaction.times.micros",
    ),
    stat(
        "compaction_cpu_micros",
        Source::Sum,
        "rocksdb.compaction.times.cpu_micros",
    ),
    stat("flush_micros", Source::Sum, "rocksdb.db.flush.micros"),
];

/// The gauges read from properties, by counter name and property.
const GAUGES: &[(&str, &str)] = &[
    ("lsm_bytes", "rocksdb.total-sst-files-size"),
    (
        "pending_compaction_bytes",
        "rocksdb.estimate-pending-compaction-bytes",
    ),
    ("block_cache_usage_bytes", "rocksdb.block-cache-usage"),
    ("block_cache_capacity_bytes", "rocksdb.block-cache-capacity"),
    ("memtable_bytes", "rocksdb.cur-size-all-mem-tables"),
    ("l0_files", "rocksdb.num-files-at-level0"),
];

/// Adds the gauges, `property` reading one integer property (`None` where the release lacks
/// it: the gauge is then absent, not 0).
pub fn add_gauges(c: &mut Counters, property: impl Fn(&str) -> Option<f64>) {
    for (name, p) in GAUGES {
        if let Some(v) = property(p) {
            c.insert(name.to_string(), v);
        }
    }
}

/// The cumulative counters from RocksDB's statistics string (`rocksdb.x COUNT : n` for a
/// ticker, `... SUM : n` for a histogram); a statistic the release does not print is absent.
pub fn from_statistics_string(text: &str) -> Counters {
    let mut c = Counters::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(printed) = words.next() else {
            continue;
        };
        let Some(s) = CUMULATIVE.iter().find(|s| s.printed == printed) else {
            continue;
        };
        let label = match s.source {
            Source::Ticker => "COUNT",
            Source::Sum => "SUM",
        };
        let rest: Vec<&str> = words.collect();
        let value = rest
            .windows(3)
            .find(|w| w[0] == label && w[1] == ":")
            .and_then(|w| w[2].parse::<f64>().ok());
        if let Some(v) = value {
            c.insert(s.name.into(), v);
        }
    }
    c
}

/// Per-step compaction figures, as db_bench's report.tsv names them, but with write
/// amplification counted once: `w_amp = (flush + compaction bytes written) / ingest`.
/// (benchmark.sh adds flush bytes to a compaction total that already holds them.) A figure
/// whose counters the release (or a run without statistics) lacks is absent.
pub fn step_figures(before: &Counters, after: &Counters, seconds: f64) -> EngineStats {
    let d = |k: &str| after.contains_key(k).then(|| delta(before, after, k));
    let gauge = |k: &str| after.get(k).copied();
    let gib = |x: Option<f64>| x.map(|v| v / GB);
    let both = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
    let (flush, compact, ingest) = (
        d("flush_write_bytes"),
        d("compact_write_bytes"),
        d("ingest_bytes"),
    );
    let (hit, miss) = (d("block_cache_hit"), d("block_cache_miss"));
    let other: BTreeMap<String, f64> = [
        (
            "block_cache_usage_gb",
            gib(gauge("block_cache_usage_bytes")),
        ),
        // At the step's end, as db_bench's levelstats shows it after flush_mt_l0.
        ("l0_files", gauge("l0_files")),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v?)))
    .collect();
    EngineStats {
        ingest_gb: gib(ingest),
        flush_gb: gib(flush),
        compact_write_gb: gib(compact),
        compact_read_gb: gib(d("compact_read_bytes")),
        // c_wgb as benchmark.sh reads it from RocksDB's compaction stats: flush included.
        c_wgb: gib(both(flush, compact)),
        w_amp: both(flush, compact)
            .zip(ingest.filter(|i| *i > 0.0))
            .map(|(w, i)| w / i),
        wal_gb: gib(d("wal_bytes")),
        c_wsecs: both(d("compaction_micros"), d("flush_micros")).map(|us| us / 1e6),
        c_csecs: d("compaction_cpu_micros").map(|us| us / 1e6),
        stall_pct: d("stall_micros")
            .filter(|_| seconds > 0.0)
            .map(|us| 100.0 * us / 1e6 / seconds),
        block_cache_hit_pct: both(hit, miss)
            .filter(|n| *n > 0.0)
            .map(|n| 100.0 * hit.unwrap_or(0.0) / n),
        lsm_gb: gib(gauge("lsm_bytes")),
        pending_compaction_gb: gib(gauge("pending_compaction_bytes")),
        // The cache as WiredTiger's counts it: the blocks cached and the writes not yet flushed.
        cache_gb: gib(both(
            gauge("block_cache_usage_bytes"),
            gauge("memtable_bytes"),
        )),
        cache_dirty_gb: gib(gauge("memtable_bytes")),
        cache_max_gb: gib(gauge("block_cache_capacity_bytes")),
        other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_string_by_name() {
        let text = "rocksdb.block.cache.miss COUNT : 7\n\
                    rocksdb.bytes.written COUNT : 4200\n\
                    rocksdb.db.flush.micros P50 : 1.000000 P95 : 2.000000 P99 : 3.000000 \
                    P100 : 9.000000 COUNT : 2 SUM : 1234\n\
                    rocksdb.unknown.ticker COUNT : 5\n";
        let c = from_statistics_string(text);
        assert_eq!(c["block_cache_miss"], 7.0);
        assert_eq!(c["ingest_bytes"], 4200.0);
        assert_eq!(
            c["flush_micros"], 1234.0,
            "a histogram's SUM, not its COUNT"
        );
        assert_eq!(c.len(), 3);
    }

    /// A statistic or gauge the release lacks leaves its figures absent, not 0; one it has is
    /// a figure even when nothing happened.
    #[test]
    fn a_missing_statistic_is_absent() {
        let before = from_statistics_string(
            "rocksdb.bytes.written COUNT : 100
",
        );
        let mut after = from_statistics_string(
            "rocksdb.bytes.written COUNT : 1100
rocksdb.flush.write.bytes COUNT : 0
",
        );
        add_gauges(&mut after, |p| {
            (p == "rocksdb.total-sst-files-size").then_some(0.0)
        });
        let s = step_figures(&before, &after, 10.0);
        assert_eq!(s.ingest_gb, Some(1000.0 / GB));
        assert_eq!(s.flush_gb, Some(0.0));
        assert_eq!(s.lsm_gb, Some(0.0));
        for (name, figure) in [
            ("compact_write_gb", s.compact_write_gb),
            ("w_amp", s.w_amp),
            ("c_wgb", s.c_wgb),
            ("stall_pct", s.stall_pct),
            ("block_cache_hit_pct", s.block_cache_hit_pct),
            ("pending_compaction_gb", s.pending_compaction_gb),
        ] {
            assert_eq!(figure, None, "{name}");
        }
        assert!(!s.other.contains_key("l0_files"));
    }
}
