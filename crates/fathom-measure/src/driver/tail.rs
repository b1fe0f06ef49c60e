//! A step's tail as recorded: its slowest operations on the wall clock, with (`--waits=bpf`)
//! what their client threads slept in, or waited for a CPU, during each, what the engine says it
//! did over the measured window (`Target::events`), and what each did inside it (its counters,
//! or a server's log of statements).

use crate::recorder::Recorder;
use crate::sample::waits::Sleep;
use crate::slow::KEPT;
use crate::tick::Tick;
use fathom_api::step::StepPlan;
use fathom_api::target::Target;
use fathom_schema::result::tail::{Asleep, SlowOp, Tail, WorkCount};
use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};

/// A moment read on both clocks at once, to put the operations' ticks on the wall clock.
#[derive(Clone, Copy)]
pub(super) struct Origin {
    at: Instant,
    unix_us: u64,
    /// The same moment on CLOCK_MONOTONIC, ns (the eBPF program's clock).
    mono_ns: u64,
}

impl Origin {
    pub(super) fn now() -> Origin {
        let unix_us = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        Origin {
            at: Instant::now(),
            unix_us,
            mono_ns: crate::tick::clock_ns(libc::CLOCK_MONOTONIC),
        }
    }

    /// A CLOCK_MONOTONIC moment (ns) in Unix microseconds.
    fn mono_us(&self, ns: u64) -> u64 {
        let us = |n: u64| n / 1_000;
        (self.unix_us + us(ns)).saturating_sub(us(self.mono_ns))
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

/// The step's slowest operations of each kind (over `total`'s clients), each with its client's
/// `sleeps` during it, and the engine's events between `from` and `to`; `None` for a step
/// without operations. `sleeps` is `None` when they were not timed.
pub(super) fn of_step(
    plan: &StepPlan,
    total: &Recorder,
    origin: Origin,
    (from, to): (Instant, Instant),
    target: &dyn Target,
    sleeps: Option<&[Sleep]>,
) -> Option<Tail> {
    let mut slowest = Vec::new();
    let counted = target.work_meter().map_or(0, |m| m.names().len());
    for (slot, kind) in plan.kinds.list().iter().enumerate() {
        for s in total.slow.slowest(slot) {
            let end = origin.tick_us(s.end);
            let latency_us = s.latency_ns as f64 / 1e3;
            let start_us = end.saturating_sub(latency_us.round() as u64);
            let asleep = sleeps.map_or_else(Vec::new, |all| {
                asleep_during(all, s.tid, (start_us, end), &origin)
            });
            let work: Vec<WorkCount> = s.work.map_or_else(Vec::new, |w| {
                (0..counted)
                    .map(|c| WorkCount {
                        n: w.counts[c],
                        median: w.nearby_median[c],
                        at_least: u32::from(w.at_least[c]),
                    })
                    .collect()
            });
            slowest.push(SlowOp {
                kind: kind.name.to_string(),
                client: s.client as usize,
                start_us,
                latency_us,
                tid: s.tid,
                session: s.session,
                asleep,
                work,
                nearby: s.work.map_or(0, |w| u32::from(w.nearby)),
            });
        }
    }
    if slowest.is_empty() {
        return None;
    }
    let window_us = [origin.unix_us(from), origin.unix_us(to)];
    let events = target.events(window_us[0], window_us[1]);
    let mut work: Vec<String> = (target.work_meter()).map_or_else(Vec::new, |m| {
        m.names().iter().map(|n| n.to_string()).collect()
    });
    if work.is_empty() {
        if let Some(log) = target.statements(window_us[0], window_us[1]) {
            super::joined::join(&log, &mut slowest);
            work = log.names.iter().map(|n| n.to_string()).collect();
        }
    }
    Some(Tail {
        slowest,
        kept: KEPT,
        window_us,
        engine_tells: target.keeps_events(),
        sleeps_timed: sleeps.is_some(),
        events,
        work,
    })
}

/// Thread `tid`'s time asleep, or waiting for a CPU, within `[start_us, end_us]`, by kind of
/// wait, longest first; each kind named where its longest sleep with a known place slept.
fn asleep_during(
    sleeps: &[Sleep],
    tid: u32,
    (start_us, end_us): (u64, u64),
    origin: &Origin,
) -> Vec<Asleep> {
    // Each kind's time, and its longest placed sleep's part and place.
    type Placed<'a> = Option<(u64, &'a str)>;
    let mut by: BTreeMap<&str, (u64, Placed)> = BTreeMap::new();
    for s in sleeps.iter().filter(|s| s.tid == tid) {
        let (a, b) = (origin.mono_us(s.start_ns), origin.mono_us(s.end_ns));
        let overlap = b.min(end_us).saturating_sub(a.max(start_us));
        if overlap == 0 {
            continue;
        }
        let (us, placed) = by.entry(s.what()).or_default();
        *us += overlap;
        if let Some(at) = s.at.as_deref() {
            *placed = (*placed).max(Some((overlap, at)));
        }
    }
    let mut by_kind: Vec<Asleep> = (by.into_iter())
        .map(|(kind, (us, placed))| Asleep {
            kind: kind.to_string(),
            us: us as f64,
            at: placed.map(|(_, at)| at.to_string()),
        })
        .collect();
    by_kind.sort_by(|a, b| b.us.total_cmp(&a.us));
    by_kind
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::waits::Kind;

    /// Only the operation's thread's sleeps count, and only their part inside it.
    #[test]
    fn sleeps_count_by_thread_and_overlap() {
        let origin = Origin {
            at: Instant::now(),
            unix_us: 1_000_000_000,
            mono_ns: 5_000_000_000,
        };
        // On the monotonic clock, the operation runs from 5.010 s to 5.020 s.
        let sleep = |tid, kind, from_ms: u64, to_ms: u64| Sleep {
            tid,
            kind,
            start_ns: 5_000_000_000 + from_ms * 1_000_000,
            end_ns: 5_000_000_000 + to_ms * 1_000_000,
            at: None,
        };
        let placed = |from_ms, to_ms, at: &str| Sleep {
            at: Some(at.into()),
            ..sleep(7, Some(Kind::Io), from_ms, to_ms)
        };
        let sleeps = [
            placed(8, 14, "longest"),            // 4 ms inside
            placed(15, 17, "shorter"),           // 2 ms
            sleep(7, Some(Kind::Futex), 19, 25), // 1 ms
            sleep(8, Some(Kind::Io), 10, 20),    // another thread
            sleep(7, Some(Kind::Io), 30, 40),    // after
            sleep(7, None, 17, 18),              // waiting for a CPU, 1 ms
        ];
        let op = (1_000_010_000, 1_000_020_000);
        let got = asleep_during(&sleeps, 7, op, &origin);
        // Each kind is placed where its longest placed sleep within the operation was.
        assert_eq!(got[0].at.as_deref(), Some("longest"));
        assert_eq!(got[1].at, None);
        let got: Vec<(&str, f64)> = got.iter().map(|a| (a.kind.as_str(), a.us)).collect();
        let want = [
            ("io", 6_000.0),
            ("futex", 1_000.0),
            ("waiting for a cpu", 1_000.0),
        ];
        assert_eq!(got, want);
    }
}
