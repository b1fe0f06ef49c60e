//! Merging the client threads' interval snapshots, in order, into interval records written
//! as each interval completes.

use crate::recorder::Recorder;
use crate::sample::{Sample, Sampler};
use fathom_schema::latency::Latency;
use fathom_schema::result::IntervalRecord;
use std::collections::BTreeMap;
use std::time::Instant;

/// Merges thread snapshots into intervals, in order, and writes each one as it completes.
pub(super) struct Intervals<'a> {
    pub(super) threads: usize,
    /// Per interval: the merged recorder and which threads contributed.
    pub(super) pending: BTreeMap<usize, (Recorder, Vec<bool>)>,
    /// The epoch of each finished thread's final snapshot.
    pub(super) finished: Vec<Option<usize>>,
    /// Host samples at each boundary; `samples[k]` starts interval k.
    pub(super) samples: BTreeMap<usize, Sample>,
    pub(super) next_to_emit: usize,
    pub(super) step_total: Recorder,
    pub(super) kinds: &'a [fathom_api::kind::OpKind],
    pub(super) plan: &'a super::StepPlan,
    pub(super) out: std::io::BufWriter<std::fs::File>,
    pub(super) step: &'a str,
    pub(super) sampler: &'a Sampler,
    /// Asked at each interval boundary whether it can still serve (`Target::check`).
    pub(super) target: &'a dyn fathom_api::target::Target,
    pub(super) origin: Instant,
    /// Each emitted interval's histograms, compressed until the step's log is written: kept
    /// whole, a step of ten operation kinds held hundreds of MB over its intervals.
    pub(super) histograms: Vec<super::hlog::Compressed>,
    /// Where the intervals are written.
    pub(super) path: std::path::PathBuf,
}

impl<'a> Intervals<'a> {
    /// Intervals of a step of `threads` clients, measured from `origin`, written to `path`.
    pub(super) fn new(
        plan: &'a super::StepPlan,
        threads: usize,
        sampler: &'a Sampler,
        target: &'a dyn fathom_api::target::Target,
        origin: Instant,
        path: &std::path::Path,
    ) -> std::io::Result<Intervals<'a>> {
        Ok(Intervals {
            threads,
            pending: BTreeMap::new(),
            finished: vec![None; threads],
            samples: BTreeMap::new(),
            next_to_emit: 1,
            step_total: Recorder::new(plan.kinds.len()),
            kinds: plan.kinds.list(),
            plan,
            out: std::io::BufWriter::new(std::fs::File::create(path)?),
            step: &plan.name,
            sampler,
            target,
            origin,
            histograms: Vec::new(),
            path: path.to_path_buf(),
        })
    }

    /// Fails when the intervals file was removed (the results directory deleted under the
    /// run): writes to an unlinked file succeed, so without this the step would run to its end
    /// with nowhere to put its results.
    fn check_still_linked(&self) -> anyhow::Result<()> {
        use std::os::unix::fs::MetadataExt;
        if self.out.get_ref().metadata()?.nlink() == 0 {
            anyhow::bail!(
                "{} was removed while the step ran (the results directory was deleted); \
                 stopping the step",
                self.path.display()
            );
        }
        Ok(())
    }

    /// Adds a thread's snapshot. Epoch 0 is the warmup: whatever it holds was recorded after
    /// the warmup ended (before the thread saw epoch 1), so it joins interval 1 without counting
    /// as that thread's contribution to it. A snapshot of an interval already written (its
    /// thread was inside one long operation past the interval's grace) joins the next one.
    pub(super) fn add(&mut self, thread: usize, epoch: usize, rec: Recorder) {
        let late = epoch < self.next_to_emit;
        let entry = self.entry(epoch.max(1).max(self.next_to_emit));
        entry.0.merge(&rec);
        if epoch > 0 && !late {
            entry.1[thread] = true;
        }
    }

    /// Marks intervals that a thread's one operation spanned whole as contributed to.
    pub(super) fn spanned(&mut self, thread: usize, epochs: std::ops::Range<usize>) {
        let written = self.next_to_emit;
        for k in epochs.filter(|k| *k >= written) {
            self.entry(k).1[thread] = true;
        }
    }

    fn entry(&mut self, k: usize) -> &mut (Recorder, Vec<bool>) {
        let (kinds, threads) = (self.kinds.len(), self.threads);
        self.pending
            .entry(k)
            .or_insert_with(|| (Recorder::new(kinds), vec![false; threads]))
    }

    /// Whether interval `k` can be written: every thread has handed in its part, or has
    /// finished, or a whole interval more has passed (a thread still inside one operation
    /// finished nothing in it; what it did before that operation joins a later interval).
    fn complete(&self, k: usize) -> bool {
        let contributed = self.pending.get(&k).map(|(_, c)| c.as_slice());
        let waited = self.samples.contains_key(&(k + 2));
        waited
            || (0..self.threads).all(|t| {
                contributed.is_some_and(|c| c[t]) || self.finished[t].is_some_and(|f| f < k)
            })
    }

    /// Emits every interval whose end sample exists and whose snapshots have all arrived (or,
    /// with `flush`, every interval left, ending at `last`).
    pub(super) fn emit(
        &mut self,
        last: Option<&Sample>,
        on_interval: &mut dyn FnMut(&IntervalRecord),
    ) -> anyhow::Result<()> {
        use std::io::Write;
        loop {
            let k = self.next_to_emit;
            let Some(start) = self.samples.get(&k) else {
                return Ok(());
            };
            let end = match (self.samples.get(&(k + 1)), last) {
                (Some(e), _) if self.complete(k) || last.is_some() => e,
                (None, Some(l)) => l,
                _ => return Ok(()),
            };
            let rec = self
                .pending
                .remove(&k)
                .map(|(r, _)| r)
                .unwrap_or_else(|| Recorder::new(self.kinds.len()));
            let all = rec.combined();
            let f = self.sampler.figures(start, end, all.ops);
            let t_start = start.at.duration_since(self.origin).as_secs_f64();
            let t_end = end.at.duration_since(self.origin).as_secs_f64();
            let record = IntervalRecord {
                step: self.step.to_string(),
                interval: k,
                t_start,
                t_end,
                ops: all.ops,
                ops_per_sec: all.ops as f64 / f.seconds,
                latency_us: Latency::of(&all.latency),
                per_op: f.per_op,
                db_gb: f.db_gb,
                rss_gb: f.rss_gb,
                retries: all.retries,
                failed: all.failed,
                intended_ops_per_sec: self.plan.intended_rate((t_start + t_end) / 2.0),
                by_kind: rec
                    .kinds
                    .iter()
                    .zip(self.kinds)
                    .filter(|(r, _)| r.ops > 0)
                    .map(|(r, k)| fathom_schema::result::KindInterval {
                        kind: k.name,
                        ops: r.ops,
                        latency_us: Latency::of(&r.latency),
                    })
                    .collect(),
            };
            crate::sample::charge_results(|| -> anyhow::Result<()> {
                serde_json::to_writer(&mut self.out, &record)?;
                self.out.write_all(b"\n")?;
                self.out.flush()?;
                Ok(())
            })?;
            self.check_still_linked()?;
            on_interval(&record);
            self.step_total.merge(&rec);
            self.histograms.push(super::hlog::Compressed::of(k, &rec)?);
            self.next_to_emit += 1;
            if last.is_some() && !self.samples.contains_key(&(k + 1)) {
                return Ok(());
            }
        }
    }
}
