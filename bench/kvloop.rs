//! The minimal loop fathom's dbbench steps are held against (bench/compare-loops.sh): the
//! engine opened exactly as fathom opens it (same data directory, options and settings), then
//! only the engine calls of one step in a tight loop per thread, with the keys and values
//! fathom's dbbench draws. No recorder, histogram, sampler, rate or progress: what it reaches is
//! the engine's, and fathom's shortfall from it is the harness's.
//!
//!   kvloop --engine rocksdb --data-dir D --step fillseq --num-keys 1000000
//!   kvloop --engine lmdb --data-dir D --step readrandom --threads 2 --duration 10
//!
//! Prints one line: `STEP OPS_PER_SEC OPS SECONDS`.

use anyhow::Context;
use clap::Parser;
use fathom_api::family::Engine;
use fathom_api::kv::{Direction, KvEngine, Seek, SessionOptions};
use fathom_engines::EngineConfig;
use fathom_workloads::dbbench::data::{KeyFormat, ValueSource};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    engine: String,
    #[arg(long)]
    data_dir: PathBuf,
    /// fillseq, readrandom or fwdrange
    #[arg(long)]
    step: String,
    /// The engine's options string, or @FILE, as fathom's --setup
    #[arg(long, default_value = "")]
    setup: String,
    /// name=value, as fathom's --set
    #[arg(long)]
    set: Vec<String>,
    #[arg(long, default_value_t = 1_000_000)]
    num_keys: u64,
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds of the timed steps
    #[arg(long, default_value_t = 10)]
    duration: u64,
    #[arg(long, default_value_t = 10)]
    seek_nexts: usize,
}

/// db_bench's defaults, as fathom's dbbench: 20-byte keys, 400-byte values half-compressible.
const KEY_SIZE: usize = 20;
const VALUE_SIZE: usize = 400;
const COMPRESSION_RATIO: f64 = 0.5;

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let entry = fathom_engines::find(&a.engine)?;
    let mut options = match a.setup.strip_prefix('@') {
        Some(file) => std::fs::read_to_string(file).with_context(|| format!("--setup {file}"))?,
        None => a.setup.clone(),
    };
    // fillseq's own RocksDB options, as fathom's dbbench reopens with them.
    if a.step == "fillseq" && a.engine == "rocksdb" {
        let own = fathom_workloads::dbbench::FILLSEQ_ROCKSDB_OPTIONS;
        options = if options.trim().is_empty() {
            own.to_string()
        } else {
            format!("{};{own}", options.trim().trim_end_matches(';'))
        };
    }
    let settings = a
        .set
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => anyhow::bail!("--set {kv}: expected name=value"),
        })
        .collect::<anyhow::Result<_>>()?;
    std::fs::create_dir_all(&a.data_dir)?;
    let config = EngineConfig {
        data_dir: a.data_dir.clone(),
        options,
        settings,
        ..Default::default()
    };
    let Engine::Kv(engine) = fathom_engines::open(entry, &config)? else {
        anyhow::bail!("{} is not a kv engine", a.engine);
    };
    let started = Instant::now();
    let ops = match a.step.as_str() {
        // On a thread of its own, as fathom's client and db_bench's run one: the kernel's
        // per-call work on a file descriptor (fdget/fput) is dearer in a process of several
        // threads, which the engine pays on every write (docs/performance.md).
        "fillseq" => std::thread::scope(|s| {
            let thread = s.spawn(|| fillseq(&*engine, a.num_keys));
            thread.join().expect("the fillseq thread panicked")
        })?,
        "readrandom" | "fwdrange" => timed(&*engine, &a)?,
        other => anyhow::bail!("--step {other}: expected fillseq, readrandom or fwdrange"),
    };
    let secs = started.elapsed().as_secs_f64();
    println!("{} {:.0} {ops} {secs:.3}", a.step, ops as f64 / secs);
    Ok(())
}

/// Puts keys 0..num in order from one thread, the WAL off (fathom's fillseq session).
fn fillseq(engine: &dyn KvEngine, num: u64) -> anyhow::Result<u64> {
    let mut s = engine.session(SessionOptions { disable_wal: true })?;
    let mut keys = KeyFormat::new(KEY_SIZE)?;
    let mut values = ValueSource::new(VALUE_SIZE, COMPRESSION_RATIO);
    for k in 0..num {
        s.put(keys.key(k), values.next(VALUE_SIZE))?;
    }
    Ok(num)
}

/// Gets or seeks at uniformly random keys from every thread for the step's duration.
fn timed(engine: &dyn KvEngine, a: &Args) -> anyhow::Result<u64> {
    let deadline = Instant::now() + Duration::from_secs(a.duration);
    let seek = a.step == "fwdrange";
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..a.threads)
            .map(|t| {
                scope.spawn(move || -> anyhow::Result<u64> {
                    let mut s = engine.session(SessionOptions::default())?;
                    let mut keys = KeyFormat::new(KEY_SIZE)?;
                    let mut rng = SplitMix(0x9E37_79B9 ^ t as u64);
                    let mut ops = 0u64;
                    let mut bytes = 0u64;
                    loop {
                        // The clock read every 64 operations, not every one.
                        for _ in 0..64 {
                            let key = keys.key(rng.next() % a.num_keys);
                            if seek {
                                let at = Seek::new(key, Direction::Forward, a.seek_nexts);
                                s.scan(at, &mut |k, v| {
                                    bytes += (k.len() + v.len()) as u64;
                                    true
                                })?;
                            } else {
                                bytes += s.get(key)?.unwrap_or(0) as u64;
                            }
                        }
                        ops += 64;
                        if Instant::now() >= deadline {
                            std::hint::black_box(bytes);
                            return Ok(ops);
                        }
                    }
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a loop thread panicked"))
            .sum()
    })
}

/// SplitMix64: a fast uniform generator for the random keys.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
