//! The probes of a step's measured span, begun and ended in one place: the engine's counters,
//! the `--waits` sampler and the watches told of the span (`--profile`'s perf, and any meter a
//! caller adds). The span begins once — before the first operation without warmup, at the
//! warmup's end with one, or after the operations of a step that measured nothing — and each
//! probe ends where its figures end.

use super::Watch;
use crate::sample::waits::{Method, Ready, Sleep, WaitSampler, Waits};
use crate::sample::Sampler;
use anyhow::Context;
use fathom_api::target::{Counters, Target};

/// What the waits sampler leaves when the operations end: its figures, and (`--waits=bpf`)
/// the clients' long sleeps.
pub(super) type Ended = (Option<Waits>, Option<Vec<Sleep>>);

/// The probes of one step.
pub(super) struct Probes<'a> {
    watches: Vec<&'a mut (dyn Watch + 'static)>,
    /// `--waits`: ready before the step, started with the span.
    ready: Option<Ready>,
    waits: Option<WaitSampler>,
    /// The engine's counters when the span began; `None` before it.
    before: Option<Counters>,
}

impl<'a> Probes<'a> {
    /// The probes `watches` and `waits` ask for, ready to begin.
    pub(super) fn new(
        watches: Vec<&'a mut (dyn Watch + 'static)>,
        waits: Option<Method>,
    ) -> anyhow::Result<Probes<'a>> {
        Ok(Probes {
            watches,
            ready: Ready::new(waits)?,
            waits: None,
            before: None,
        })
    }

    /// Whether the span has begun.
    pub(super) fn begun(&self) -> bool {
        self.before.is_some()
    }

    /// The measured span begins: the watches told, the engine's counters read, the waits
    /// sampler started (an error says it could not start; the rest have begun). A second call
    /// does nothing.
    pub(super) fn begin(&mut self, target: &dyn Target, sampler: &Sampler) -> anyhow::Result<()> {
        if self.begun() {
            return Ok(());
        }
        for w in &mut self.watches {
            w.measuring();
        }
        self.before = Some(target.counters());
        if let Some(r) = self.ready.take() {
            let started = r.start(sampler.server_pids(), sampler.embedded());
            self.waits = Some(started.context("starting the --waits sampler")?);
        }
        Ok(())
    }

    /// The operations ended: what the step's sleeping threads waited on, its folded stacks
    /// written to `offcpu` first, and with `--waits=bpf` the clients' long sleeps, whole.
    pub(super) fn ops_ended(&mut self, offcpu: &std::path::Path) -> anyhow::Result<Ended> {
        let name = offcpu.file_name().unwrap_or_default().to_string_lossy();
        let in_run = format!("{}/{name}", fathom_schema::store::STEPS);
        let Some(mut finished) = self.waits.take().and_then(WaitSampler::finish) else {
            return Ok((None, None));
        };
        let timed = finished.waits.method != Method::Sample.name();
        let sleeps = timed.then(|| std::mem::take(&mut finished.sleeps));
        let waits = (finished.keep(offcpu, in_run))
            .with_context(|| format!("writing {}", offcpu.display()))?;
        Ok((Some(waits), sleeps))
    }

    /// The step's figures ended (after its maintenance): the watches told, the engine settled
    /// and its counters read; the counters at the span's two ends.
    pub(super) fn ended(mut self, target: &dyn Target) -> (Counters, Counters) {
        for w in &mut self.watches {
            w.ended();
        }
        target.settle();
        (self.before.unwrap_or_default(), target.counters())
    }
}
