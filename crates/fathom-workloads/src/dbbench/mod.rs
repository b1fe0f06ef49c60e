//! The RocksDB db_bench sequence as `benchmark_compare.sh` runs it (docs/workloads.md §4.1):
//! fillseq without WAL, a reverse-range warm-up, read-only steps, some overwrites, flush and
//! compaction, three steps while a rate-limited writer runs, and overwrite then wait.

mod clients;
pub mod data;
pub mod report;

use crate::params::{record, seed_or_clock, Params, Size, Span, Switch};
use crate::steps::Steps;
use crate::{
    alike, kv_session, NewBackground, NewClient, NewClients, NewStep, PreparedStep, StepOn,
    Workload, WorkloadEntry,
};
use clients::{Action, DbBenchClient, Keys};
use data::{KeyFormat, ValueSource};
use fathom_api::family::Db;
use fathom_api::kind::StepKinds;
use fathom_api::kv::{Direction, SessionOptions};
use fathom_api::options::Syntax;
use fathom_api::step::{BackgroundClient, Pace, StepOptions, StepPlan};
use fathom_api::stop::Stop;
use fathom_api::target::Maintenance;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// db_bench's flags, as `--param` takes them.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DbBenchParams {
    /// keys loaded by fillseq and drawn from by random steps
    num_keys: u64,
    /// key bytes (8-byte integer + '0' padding)
    key_size: u64,
    /// value bytes
    value_size: u64,
    /// how far values compress, as db_bench's --compression_ratio
    compression_ratio: f64,
    /// length of each timed step
    duration: Span,
    /// unrecorded time at the start of each timed step
    warmup: Span,
    /// bytes/s of the background writer in *whilewriting steps
    write_rate: Size,
    /// entries each seek of the range steps reads, the one it lands on first (--seek_nexts)
    seek_nexts: u64,
    /// keys each multireadrandom call reads (benchmark.sh's --batch_size=10), each counted as
    /// an operation as db_bench counts them
    multiread_batch: u64,
    /// keys revrange seeks among, as benchmark_compare.sh runs it (NUM_KEYS=100, one thread:
    /// a warm-up while fillseq's compaction debt drains); 0 for all num_keys
    revrange_keys: u64,
    /// how the reverse range steps scan: prev_from_seek (db_bench's --reverse_iterator: Seek,
    /// then Prev, paying the change of direction) or for_prev (SeekForPrev, then Prev)
    reverse_seek: ReverseSeek,
    /// share of num_keys that overwritesome writes
    overwrite_fraction: f64,
    /// random seed; 0 picks one from the clock (recorded)
    seed: u64,
    /// steps to run, in this order; all: the whole sequence (fillseq, revrange, readrandom,
    /// fwdrange, multireadrandom, overwritesome, flush, revrangewhilewriting,
    /// fwdrangewhilewriting, readwhilewriting, overwriteandwait); also overwrite (no wait)
    steps: Vec<Step>,
    /// the sequence benchmark_compare.sh runs for this COMPACTION_STYLE: leveled, or universal
    /// (no flush step, overwrite instead of overwriteandwait: waitforcompaction can hang there)
    sequence: Sequence,
    /// close and reopen the database before each step, as benchmark.sh runs each step as a
    /// db_bench process of its own (cold caches; closing flushes what no WAL holds); off keeps
    /// one open database for the whole sequence
    reopen: Switch,
    /// RocksDB options fillseq alone runs with, after the setup's (benchmark.sh loads with
    /// --memtablerep=vector --allow_concurrent_memtable_write=false); empty for none. Applied
    /// when steps reopen: with reopen=off the one open database keeps the setup's
    fillseq_rocksdb_options: String,
}

impl Default for DbBenchParams {
    fn default() -> Self {
        DbBenchParams {
            num_keys: 1_000_000,
            key_size: 20,
            value_size: 400,
            compression_ratio: 0.5,
            duration: Span::new("20s"),
            warmup: Span::new("0s"),
            write_rate: Size::new("2m"),
            seek_nexts: 10,
            multiread_batch: 10,
            revrange_keys: 100,
            reverse_seek: ReverseSeek::PrevFromSeek,
            overwrite_fraction: 0.1,
            seed: 0,
            steps: vec![Step::All],
            sequence: Sequence::Leveled,
            reopen: Switch::new("on"),
            fillseq_rocksdb_options: FILLSEQ_ROCKSDB_OPTIONS.into(),
        }
    }
}

crate::params::timed!(DbBenchParams, duration);

pub const ENTRY: WorkloadEntry = WorkloadEntry {
    // A server stays up from step to step: the database is not reopened between steps there.
    on_servers: &[("reopen", "off")],
    ..WorkloadEntry::new::<DbBenchParams, DbBenchKind>(
        "dbbench",
        "RocksDB's db_bench sequence from benchmark_compare.sh, on any kv engine",
        build,
        report::HOOKS,
    )
    .kv_only()
};

/// The options benchmark.sh's fillseq adds for RocksDB: a vector memtable (appends, sorted at
/// flush), which takes no concurrent writes.
pub const FILLSEQ_ROCKSDB_OPTIONS: &str =
    "memtable_factory=vector;allow_concurrent_memtable_write=false";

fathom_api::kinds! {
    /// What dbbench's operations are, as db_bench names them.
    pub enum DbBenchKind {
        /// fillseq's puts load the database in key order.
        Fill = ("put", Load, "a put of the next key in order, without the WAL"),
        Put = ("put", Write, "a put of a random key, overwriting it"),
        Get = ("get", Read, "a point read of a random key (multireadrandom: one key of a MultiGet, which counts as its batch)"),
        Seek = ("seek", Scan, "a seek to a random key, then seek_nexts entries read from it"),
        /// The rate-limited writer of the *whilewriting steps.
        BackgroundPut = ("put", Background, "the rate-limited writer's put of a random key"),
    }
}

/// The background writer's key stream: a thread number after any client's.
const WRITER_THREAD: usize = 999;

/// A step's own part: what its clients do, on which keys, and whether they write a WAL.
#[derive(Clone, Copy, Debug)]
struct StepWork {
    work: Work,
    /// Writes skip the WAL (fillseq, as benchmark.sh runs it).
    wal_off: bool,
    /// The keys the step's random clients draw from (`revrange`'s few, or all).
    key_space: u64,
}

/// What a step's clients do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    FillSeq,
    Seek(Direction),
    Read,
    /// multireadrandom's batched reads.
    MultiRead,
    Overwrite,
    None,
}

/// A step of the sequence (`steps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Step {
    // The whole sequence `sequence` names, in its place (plain comments: documented variants
    // would be listed apart from the others).
    All,
    Fillseq,
    Revrange,
    Readrandom,
    Fwdrange,
    Multireadrandom,
    Overwritesome,
    Flush,
    Revrangewhilewriting,
    Fwdrangewhilewriting,
    Readwhilewriting,
    Overwriteandwait,
    // Overwrites for the step's length, without overwriteandwait's wait for compaction.
    Overwrite,
}

/// benchmark_compare.sh's sequence for leveled compaction; `whole_sequence` gives the
/// universal one from it.
const LEVELED: [Step; 11] = [
    Step::Fillseq,
    Step::Revrange,
    Step::Readrandom,
    Step::Fwdrange,
    Step::Multireadrandom,
    Step::Overwritesome,
    Step::Flush,
    Step::Revrangewhilewriting,
    Step::Fwdrangewhilewriting,
    Step::Readwhilewriting,
    Step::Overwriteandwait,
];

/// The compaction style whose sequence `steps=all` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Sequence {
    Leveled,
    /// flush_mt_l0 skipped, overwrite without the wait.
    Universal,
}

/// How the reverse range steps scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ReverseSeek {
    /// Seek, then Prev, paying the change of direction.
    PrevFromSeek,
    /// SeekForPrev, then Prev.
    ForPrev,
}

/// benchmark_compare.sh's whole sequence for the compaction style.
fn whole_sequence(sequence: Sequence) -> impl Iterator<Item = Step> {
    LEVELED
        .into_iter()
        .filter_map(move |step| match (sequence, step) {
            (Sequence::Universal, Step::Flush) => None,
            (Sequence::Universal, Step::Overwriteandwait) => Some(Step::Overwrite),
            _ => Some(step),
        })
}

pub struct DbBench {
    num_keys: u64,
    key_size: usize,
    value_size: usize,
    compression_ratio: f64,
    seek_nexts: usize,
    multiread_batch: usize,
    /// The direction of the reverse range steps.
    reverse: Direction,
    seed: u64,
    steps: Steps<StepWork>,
    resolved: BTreeMap<String, String>,
}

fn build(params: &Params, clients: usize) -> anyhow::Result<Box<dyn Workload>> {
    Ok(Box::new(sequence(params, clients)?))
}

/// The steps `steps` names, in its order, `all` standing for benchmark_compare.sh's sequence
/// for the compaction style `sequence` names.
fn wanted_steps(steps: &[Step], sequence: Sequence) -> anyhow::Result<Vec<Step>> {
    let wanted: Vec<Step> = steps
        .iter()
        .flat_map(|&step| match step {
            Step::All => whole_sequence(sequence).collect(),
            one => vec![one],
        })
        .collect();
    if wanted.is_empty() {
        anyhow::bail!("parameter `steps`: no steps given");
    }
    Ok(wanted)
}

/// The sequence's steps for `clients`, from the parameters.
fn sequence(params: &Params, clients: usize) -> anyhow::Result<DbBench> {
    let mut p: DbBenchParams = params.read("dbbench")?;
    if p.num_keys == 0 {
        anyhow::bail!("parameter `num_keys`: must be at least 1");
    }
    if clients == 0 {
        anyhow::bail!("dbbench needs at least one client");
    }
    KeyFormat::new(p.key_size as usize)?;
    if !(0.0..=1.0).contains(&p.compression_ratio) {
        anyhow::bail!(
            "parameter `compression_ratio`: {} is not between 0 and 1",
            p.compression_ratio
        );
    }
    p.seed = seed_or_clock(p.seed);
    let wanted = wanted_steps(&p.steps, p.sequence)?;
    let mut d = DbBench {
        num_keys: p.num_keys,
        key_size: p.key_size as usize,
        value_size: p.value_size as usize,
        compression_ratio: p.compression_ratio,
        seek_nexts: p.seek_nexts as usize,
        multiread_batch: p.multiread_batch.max(1) as usize,
        reverse: match p.reverse_seek {
            ReverseSeek::PrevFromSeek => Direction::PrevFromSeek,
            ReverseSeek::ForPrev => Direction::Reverse,
        },
        seed: p.seed,
        steps: Steps::default(),
        resolved: record(&p),
    };
    let revrange_keys = match p.revrange_keys {
        0 => p.num_keys,
        n => n.min(p.num_keys),
    };
    let timing = Timing {
        num_keys: p.num_keys,
        duration: p.duration.value,
        warmup: p.warmup.value,
        write_rate: p.write_rate.value as f64,
        overwrites: p.num_keys as f64 * p.overwrite_fraction,
        reverse: d.reverse,
    };
    // Steps run in the order given, each (with `reopen`) on a database opened afresh, as
    // benchmark.sh runs one db_bench process per step.
    for (i, &step) in wanted.iter().enumerate() {
        let (plan, work, wal_off) = timing.step(step, clients);
        let own = p.fillseq_rocksdb_options.trim();
        let engine_options = if step == Step::Fillseq && p.reopen.value && !own.is_empty() {
            vec![StepOptions {
                syntax: Syntax::RocksDb,
                text: own.to_string(),
            }]
        } else {
            Vec::new()
        };
        let plan = StepPlan {
            reopen: p.reopen.value && i > 0,
            engine_options,
            ..plan
        };
        let key_space = match step {
            Step::Revrange => revrange_keys,
            _ => p.num_keys,
        };
        let own = StepWork {
            work,
            wal_off,
            key_space,
        };
        d.steps.push(plan, own);
    }
    Ok(d)
}

/// How the sequence's steps are timed and sized.
struct Timing {
    /// Keys fillseq loads.
    num_keys: u64,
    duration: Duration,
    warmup: Duration,
    /// The background writer's bytes per second.
    write_rate: f64,
    /// Keys overwritesome writes, over all clients.
    overwrites: f64,
    /// How the reverse range steps scan.
    reverse: Direction,
}

impl Timing {
    /// A step of `duration` (after `warmup`) with `kinds` of operations.
    fn timed(&self, name: &str, clients: usize, kinds: &[DbBenchKind]) -> StepPlan {
        StepPlan {
            name: name.to_string(),
            clients,
            duration: Some(self.duration),
            ops_per_client: None,
            warmup: self.warmup,
            kinds: StepKinds::of(kinds),
            background: None,
            ..Default::default()
        }
    }

    /// A step that runs `ops` operations per client to the end.
    fn counted(&self, name: &str, clients: usize, ops: u64, kinds: &[DbBenchKind]) -> StepPlan {
        StepPlan {
            duration: None,
            ops_per_client: Some(ops),
            warmup: Duration::ZERO,
            ..self.timed(name, clients, kinds)
        }
    }

    /// Step `step`'s plan, what its clients do, and whether it runs without the WAL.
    fn step(&self, step: Step, clients: usize) -> (StepPlan, Work, bool) {
        let name = &fathom_api::knobs::text(&step);
        match step {
            Step::Fillseq => (
                self.counted(name, 1, self.num_keys, &[DbBenchKind::Fill]),
                Work::FillSeq,
                true,
            ),
            Step::Revrange => (
                self.timed(name, 1, &[DbBenchKind::Seek]),
                Work::Seek(self.reverse),
                false,
            ),
            Step::Readrandom => (
                self.timed(name, clients, &[DbBenchKind::Get]),
                Work::Read,
                false,
            ),
            Step::Multireadrandom => (
                self.timed(name, clients, &[DbBenchKind::Get]),
                Work::MultiRead,
                false,
            ),
            Step::Fwdrange => (
                self.timed(name, clients, &[DbBenchKind::Seek]),
                Work::Seek(Direction::Forward),
                false,
            ),
            Step::Overwritesome => {
                let per_client = (self.overwrites / clients as f64).round().max(1.0) as u64;
                (
                    self.counted(name, clients, per_client, &[DbBenchKind::Put]),
                    Work::Overwrite,
                    false,
                )
            }
            Step::Flush => (
                StepPlan {
                    duration: None,
                    after: vec![
                        Maintenance::Flush,
                        Maintenance::WaitForCompaction,
                        Maintenance::CompactLevel0,
                        Maintenance::WaitForCompaction,
                    ],
                    warmup: Duration::ZERO,
                    ..self.timed(name, 0, &[])
                },
                Work::None,
                false,
            ),
            Step::Revrangewhilewriting | Step::Fwdrangewhilewriting | Step::Readwhilewriting => {
                let (kind, work) = match step {
                    Step::Readwhilewriting => (DbBenchKind::Get, Work::Read),
                    Step::Revrangewhilewriting => (DbBenchKind::Seek, Work::Seek(self.reverse)),
                    _ => (DbBenchKind::Seek, Work::Seek(Direction::Forward)),
                };
                let plan = StepPlan {
                    background: Some(Pace::BytesPerSec(self.write_rate)),
                    ..self.timed(name, clients, &[kind, DbBenchKind::BackgroundPut])
                };
                (plan, work, false)
            }
            Step::Overwriteandwait => (
                StepPlan {
                    after: vec![Maintenance::WaitForCompaction],
                    ..self.timed(name, clients, &[DbBenchKind::Put])
                },
                Work::Overwrite,
                false,
            ),
            Step::Overwrite => (
                self.timed(name, clients, &[DbBenchKind::Put]),
                Work::Overwrite,
                false,
            ),
            Step::All => unreachable!("`all` is expanded into the sequence's steps first"),
        }
    }
}

/// A step of the sequence on one engine: its clients share nothing.
type DbBenchStep<'a> = StepOn<'a, DbBench>;

impl<'a> DbBenchStep<'a> {
    fn thread_seed(&self, thread: usize) -> u64 {
        crate::params::thread_seed(self.workload.seed, self.index, thread)
    }

    fn client_for(&self, work: Work, keys: Keys, kind: DbBenchKind) -> NewClient<'a> {
        let w = self.workload;
        let options = SessionOptions {
            disable_wal: w.steps.work(self.index).wal_off,
        };
        let session = kv_session(self.engine, "dbbench", options)?;
        let action = match work {
            Work::FillSeq | Work::Overwrite => Action::Put {
                values: ValueSource::new(w.value_size, w.compression_ratio),
                value_size: w.value_size,
            },
            Work::Read => Action::Get,
            Work::MultiRead => Action::MultiGet {
                batch: w.multiread_batch,
                keys: Vec::new(),
            },
            Work::Seek(direction) => Action::Seek {
                nexts: w.seek_nexts,
                direction,
            },
            Work::None => anyhow::bail!("step {} has no clients", w.steps.plan(self.index).name),
        };
        Ok(Box::new(DbBenchClient {
            session,
            keys,
            format: KeyFormat::new(w.key_size)?,
            action,
            kind,
        }))
    }
}

impl<'a> PreparedStep<'a> for DbBenchStep<'a> {
    fn clients(&self) -> NewClients<'a> {
        alike(self.workload.steps.plan(self.index).clients, |n| {
            self.client(n)
        })
    }

    /// The *whilewriting steps' rate-limited writer.
    fn background(&self) -> NewBackground<'a> {
        if self.workload.steps.plan(self.index).background.is_none() {
            return Ok(Vec::new());
        }
        let keys = Keys::random(self.workload.num_keys, self.thread_seed(WRITER_THREAD));
        let client = self.client_for(Work::Overwrite, keys, DbBenchKind::BackgroundPut)?;
        Ok(vec![BackgroundClient {
            client,
            paced: true,
            ends_step: false,
        }])
    }
}

impl<'a> DbBenchStep<'a> {
    /// Client `n`: sequential keys for fillseq, its own stream of random keys otherwise.
    fn client(&self, n: usize) -> NewClient<'a> {
        let w = self.workload;
        let StepWork {
            work, key_space, ..
        } = *w.steps.work(self.index);
        let keys = match work {
            Work::FillSeq => Keys::Sequential {
                next: 0,
                end: w.num_keys,
            },
            _ => Keys::random(key_space, self.thread_seed(n)),
        };
        let kind = match work {
            Work::FillSeq => DbBenchKind::Fill,
            Work::Overwrite => DbBenchKind::Put,
            Work::Read | Work::MultiRead => DbBenchKind::Get,
            Work::Seek(_) | Work::None => DbBenchKind::Seek,
        };
        self.client_for(work, keys, kind)
    }
}

impl Workload for DbBench {
    fn steps(&self) -> &[StepPlan] {
        self.steps.plans()
    }

    /// On a document server fillseq starts from an empty collection, as it does on a fresh
    /// embedded database: a server keeps what earlier runs wrote.
    fn step<'a>(&'a self, engine: Db<'a>, index: usize, _: &Stop) -> NewStep<'a> {
        if let (Db::Doc(e), Work::FillSeq) = (engine, self.steps.work(index).work) {
            e.drop_collections(&[crate::dockv::COLLECTION])?;
        }
        StepOn::boxed(self, engine, index)
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.resolved.clone()
    }
}

#[cfg(test)]
mod tests;
