//! The step's HdrHistogram interval log (V2, deflate): what `fathom merge` and other
//! HdrHistogram tools read to combine steps exactly.

use super::StepPlan;
use crate::recorder::Recorder;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// One interval's non-empty histograms, V2-deflate serialized (a few KB each instead of the
/// few hundred KB a histogram of this range takes in memory).
pub(super) struct Compressed {
    interval: usize,
    kinds: Vec<(usize, Vec<u8>)>,
}

impl Compressed {
    pub(super) fn of(interval: usize, rec: &Recorder) -> anyhow::Result<Compressed> {
        let mut serializer = V2DeflateSerializer::new();
        let mut kinds = Vec::new();
        for (i, k) in rec.kinds.iter().enumerate().filter(|(_, k)| k.ops > 0) {
            let mut bytes = Vec::new();
            serializer
                .serialize(&k.latency, &mut bytes)
                .map_err(|e| anyhow::anyhow!("compressing a histogram: {e:?}"))?;
            kinds.push((i, bytes));
        }
        Ok(Compressed { interval, kinds })
    }
}

/// Writes the step's HdrHistogram interval log: one histogram per kind per interval, tagged
/// with the kind's name, plus the background writer's whole-step histograms (`bg.<kind>`).
/// Times are from the measured part's start (the log's base time: the step's start plus its
/// warmup), so interval k starts at (k - 1) intervals and `fathom merge` finds it there even
/// where a host logged nothing in an earlier interval.
pub(super) fn write(
    path: &PathBuf,
    origin: SystemTime,
    interval: Duration,
    plan: &StepPlan,
    intervals: &[Compressed],
    background: Option<&Recorder>,
) -> anyhow::Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(&format!("fathom step {}; values in nanoseconds", plan.name))
        .with_start_time(origin)
        .with_base_time(origin + plan.warmup)
        .with_max_value_divisor(1000.0)
        .begin_log_with(&mut file, &mut serializer)?;
    let write =
        |log: &mut hdrhistogram::serialization::interval_log::IntervalLogWriter<'_, '_, _, _>,
         h: &hdrhistogram::Histogram<u64>,
         start: Duration,
         len: Duration,
         tag: &str|
         -> anyhow::Result<()> {
            log.write_histogram(h, start, len, Tag::new(tag))
                .map_err(|e| anyhow::anyhow!("writing histogram log: {e:?}"))
        };
    let mut deserializer = Deserializer::new();
    for c in intervals {
        let start = interval * (c.interval as u32 - 1);
        for (i, bytes) in &c.kinds {
            let h: hdrhistogram::Histogram<u64> =
                deserializer
                    .deserialize(&mut bytes.as_slice())
                    .map_err(|e| anyhow::anyhow!("reading back a histogram: {e:?}"))?;
            write(&mut log, &h, start, interval, plan.kinds.list()[*i].name)?;
        }
    }
    if let Some(bg) = background {
        for (op, kind) in plan.kinds.list().iter().zip(&bg.kinds) {
            if kind.ops > 0 {
                let len = interval * intervals.len() as u32;
                write(
                    &mut log,
                    &kind.latency,
                    Duration::ZERO,
                    len,
                    &format!("bg.{}", op.name),
                )?;
            }
        }
    }
    drop(log);
    use std::io::Write;
    file.flush()?;
    Ok(())
}
