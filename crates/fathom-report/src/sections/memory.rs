//! Whose memory an engine's resident size is, at each step's end: the engine's own account of
//! its cache (in use, not yet written, configured), its processes' anonymous memory and, for an
//! embedded engine, the C heap in use and held free; and the counters an engine reports beyond
//! the step table's (WiredTiger's evictions by thread kind, pinned transactions, sessions and
//! cursors open; RocksDB's level-0 files), a column per step. Memory that grows outside the
//! cache, and whose it is, shows here.

use crate::section::{Input, Section, Titled};
use fathom_schema::group::{median_step, Series};
use fathom_schema::result::StepSummary;
use fathom_schema::table::{Cell, Style, Table};

const COLUMNS: &[&str] = &[
    "step",
    "rss",
    "anon",
    "heap",
    "heap.free",
    "cache",
    "dirty",
    "cache.max",
    "setup",
];

const LEGEND: &str = "\
memory at each step's end, GiB: rss: the engine's resident memory; anon: its anonymous part (heap, stacks,\n\
anonymous maps; no file pages); heap, heap.free: the C heap (malloc) in use and held free, for an embedded\n\
engine (fathom's process holds it: its allocations and fathom's); cache, dirty, cache.max: the engine's own\n\
account of its cache (WiredTiger's bytes in the cache and dirty; RocksDB's block cache plus memtables, and\n\
memtables) and its configured size. heap well above cache is memory outside the engine's cache; anon well\n\
above heap is malloc's arenas, stacks or maps no heap figure counts.\n";

/// The memory table, and a counters table per series that has engine counters.
pub fn sections(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut out = Vec::new();
    if let Some(memory) = memory(input) {
        let mut section = Section::new("Memory at each step's end");
        section.tables.push(memory);
        section.legend = Some(LEGEND);
        out.push(section);
    }
    let mut counters = Section::new("Engine counters per step");
    for s in &input.series {
        if let Some(t) = counters_of(s, &s.label(&input.series)) {
            counters.tables.push(t);
        }
    }
    out.extend(counters.if_any());
    Ok(out)
}

fn memory(input: &Input) -> Option<Titled> {
    let mut table = Table::new(COLUMNS);
    let gib = |x: Option<f64>| Cell::styled(x, Style::Gib);
    for (step, setup, m) in super::step_medians(input) {
        let (Some(mem), e) = (m.memory.as_ref(), &m.engine_stats) else {
            continue;
        };
        table.push(vec![
            Cell::text(step),
            gib(Some(m.rss_gb)),
            gib(Some(mem.anon)),
            gib(mem.heap_used),
            gib(mem.heap_free),
            gib(e.cache_gb),
            gib(e.cache_dirty_gb),
            gib(e.cache_max_gb),
            Cell::text(setup),
        ]);
    }
    (!table.rows.is_empty()).then(|| Titled {
        title: "memory".into(),
        table,
    })
}

/// One series' engine-specific counters: a row per counter, a column per step (medians over
/// repeats).
fn counters_of(s: &Series, label: &str) -> Option<Titled> {
    let steps: Vec<(&str, StepSummary)> = s
        .step_names()
        .into_iter()
        .map(|name| (name, median_step(&s.step(name))))
        .collect();
    let mut names: Vec<&String> = steps
        .iter()
        .flat_map(|(_, m)| m.engine_stats.other.keys())
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return None;
    }
    let mut header = vec!["counter"];
    header.extend(steps.iter().map(|(n, _)| *n));
    let mut table = Table::new(&header);
    for name in names {
        let mut row = vec![Cell::text(name.as_str())];
        row.extend(
            steps
                .iter()
                .map(|(_, m)| Cell::opt(m.engine_stats.other.get(name).copied())),
        );
        table.push(row);
    }
    Some(Titled {
        title: format!("{label}: engine counters"),
        table,
    })
}
