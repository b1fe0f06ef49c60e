//! The step's HdrHistogram interval log (V2, deflate): what `fathom merge` and other
//! HdrHistogram tools read to combine steps exactly.

use super::StepPlan;
use crate::recorder::Recorder;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Writes the step's HdrHistogram interval log: one histogram per kind per interval, tagged
/// with the kind's name, plus the background writer's whole-step histograms (`bg.<kind>`).
pub(super) fn write(
    path: &PathBuf,
    origin: SystemTime,
    interval: Duration,
    plan: &StepPlan,
    intervals: &[(usize, Recorder)],
    background: Option<&Recorder>,
) -> anyhow::Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(&format!("fathom step {}; values in nanoseconds", plan.name))
        .with_start_time(origin)
        .with_base_time(origin)
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
    for (k, rec) in intervals {
        let start = plan.warmup + interval * (*k as u32 - 1);
        for (name, kind) in plan.op_kinds.iter().zip(&rec.kinds) {
            if kind.ops > 0 {
                write(&mut log, &kind.latency, start, interval, name)?;
            }
        }
    }
    if let Some(bg) = background {
        for (name, kind) in plan.op_kinds.iter().zip(&bg.kinds) {
            if kind.ops > 0 {
                let len = plan.warmup + interval * intervals.len() as u32;
                write(
                    &mut log,
                    &kind.latency,
                    Duration::ZERO,
                    len,
                    &format!("bg.{name}"),
                )?;
            }
        }
    }
    drop(log);
    use std::io::Write;
    file.flush()?;
    Ok(())
}
