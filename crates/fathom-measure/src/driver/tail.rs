//! A step's tail as recorded: its slowest operations on the wall clock, and what the engine
//! says it did over the measured window (`Target::events`).

use crate::recorder::Recorder;
use crate::slow::KEPT;
use crate::tick::Tick;
use fathom_api::step::StepPlan;
use fathom_api::target::Target;
use fathom_schema::result::tail::{SlowOp, Tail};
use std::time::{Instant, SystemTime};

/// A moment read on both clocks at once, to put the operations' ticks on the wall clock.
#[derive(Clone, Copy)]
pub(super) struct Origin {
    at: Instant,
    unix_us: u64,
}

impl Origin {
    pub(super) fn now() -> Origin {
        let unix_us = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        Origin {
            at: Instant::now(),
            unix_us,
        }
    }

    /// `i` in Unix microseconds.
    pub(super) fn unix_us(&self, i: Instant) -> u64 {
        match i.checked_duration_since(self.at) {
            Some(after) => self.unix_us + after.as_micros() as u64,
            None => self
                .unix_us
                .saturating_sub(self.at.duration_since(i).as_micros() as u64),
        }
    }

    fn tick_us(&self, t: Tick) -> u64 {
        self.unix_us(t.to_instant())
    }
}

/// The step's slowest operations of each kind (over `total`'s clients) and the engine's events
/// between `from` and `to`; `None` for a step without operations.
pub(super) fn of_step(
    plan: &StepPlan,
    total: &Recorder,
    origin: Origin,
    (from, to): (Instant, Instant),
    target: &dyn Target,
) -> Option<Tail> {
    let mut slowest = Vec::new();
    for (slot, kind) in plan.kinds.list().iter().enumerate() {
        for s in total.slow.slowest(slot) {
            let end = origin.tick_us(s.end);
            let latency_us = s.latency_ns as f64 / 1e3;
            slowest.push(SlowOp {
                kind: kind.name.to_string(),
                client: s.client as usize,
                start_us: end.saturating_sub(latency_us.round() as u64),
                latency_us,
            });
        }
    }
    if slowest.is_empty() {
        return None;
    }
    let window_us = [origin.unix_us(from), origin.unix_us(to)];
    let events = target.events(window_us[0], window_us[1]);
    Some(Tail {
        slowest,
        kept: KEPT,
        window_us,
        engine_tells: target.keeps_events(),
        events,
    })
}
