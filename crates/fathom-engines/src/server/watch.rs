//! What a server is doing in the background, read from its own views while it runs: a
//! thread of fathom's looks at them every few milliseconds on a connection of its own (the
//! `watch_ms` setting) and turns what it saw into events with a start and an end — for a
//! server whose log does not tell (MariaDB logs no lock wait, no flush, no purge). A look
//! sees what is going on at one moment, so an event spans every moment it may have been in:
//! from the look before it was first seen to the look that no longer saw it; and it surely
//! was there from the first look that saw it to the last (`seen_us`), what the time an
//! operation spent inside it is counted over. A wait seen by one look only is surely there
//! for no time at all: a lock wait shorter than the looks' gap cannot be named by its hold.

use fathom_api::events::EngineEvent;
use fathom_api::target::Counters;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One thing a look saw going on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The same for as long as it lasts (`lock 1234`: the waiting transaction).
    pub key: String,
    /// One of `fathom_api::events::WHATS`.
    pub what: &'static str,
    /// What it was; with `count`, what was counted (`pages written`).
    pub detail: String,
    /// How much of it was done since the look before (summed over the event and put before
    /// the detail: `1234 pages written`); 0 when nothing is counted.
    pub count: u64,
}

/// What one look saw, and what its connection has cost the server so far.
#[derive(Debug, Default)]
pub struct Looked {
    pub seen: Vec<Seen>,
    /// The watcher's own share of the server's counters (`questions`, the statements' time),
    /// cumulative, under the keys of `Target::counters`: taken out of the step's, since they
    /// are fathom's, not the workload's.
    pub own: Counters,
}

/// One look at a server's views: what is going on now, or an error when the server cannot
/// say. It owns its connection and whatever it remembers between looks.
pub type Look = Box<dyn FnMut() -> anyhow::Result<Looked> + Send>;

/// The events a watcher has put together so far.
#[derive(Debug, Default)]
pub struct Track {
    /// Going on at the last look, by key: when it may have begun, the looks that first and
    /// last saw it, and what it is, with its count so far.
    open: BTreeMap<String, (u64, [u64; 2], Seen)>,
    done: Vec<EngineEvent>,
    last_us: Option<u64>,
    /// Whether a look has succeeded (a server that refuses its views tells nothing).
    pub working: bool,
    /// The last look's `own`.
    own: Counters,
}

/// The most events a track keeps (the oldest are dropped past it).
const MAX_EVENTS: usize = 200_000;

impl Track {
    /// A look at `at_us` that saw `seen`.
    pub fn look(&mut self, at_us: u64, seen: Vec<Seen>) {
        self.working = true;
        let start = self.last_us.unwrap_or(at_us);
        let mut now: BTreeMap<String, Seen> = BTreeMap::new();
        for s in seen {
            match now.get_mut(&s.key) {
                Some(same) => same.count += s.count,
                None => {
                    now.insert(s.key.clone(), s);
                }
            }
        }
        let ended: Vec<String> = (self.open.keys())
            .filter(|k| !now.contains_key(*k))
            .cloned()
            .collect();
        for key in ended {
            let (start_us, seen_us, seen) = self.open.remove(&key).expect("open");
            self.done.push(event(start_us, at_us, seen_us, &seen));
        }
        for (key, s) in now {
            match self.open.get_mut(&key) {
                Some((_, seen_us, going)) => {
                    seen_us[1] = at_us;
                    going.count += s.count;
                    going.detail = s.detail;
                }
                None => {
                    self.open.insert(key, (start, [at_us, at_us], s));
                }
            }
        }
        if self.done.len() > MAX_EVENTS {
            self.done.drain(..self.done.len() - MAX_EVENTS);
        }
        self.last_us = Some(at_us);
    }

    /// The events that overlap `[from_us, to_us]`, oldest first; one still going ends at
    /// `to_us`.
    pub fn events(&self, from_us: u64, to_us: u64) -> Vec<EngineEvent> {
        let going = (self.open.values())
            .map(|(start, seen_us, s)| event(*start, to_us.max(*start), *seen_us, s));
        let mut out: Vec<EngineEvent> = (self.done.iter().cloned())
            .chain(going)
            .filter(|e| e.overlaps(from_us, to_us))
            .collect();
        out.sort_by_key(|e| (e.start_us, e.end_us));
        out
    }
}

fn event(start_us: u64, end_us: u64, seen_us: [u64; 2], s: &Seen) -> EngineEvent {
    EngineEvent {
        what: s.what.to_string(),
        start_us,
        end_us,
        detail: match s.count {
            0 => s.detail.clone(),
            n => format!("{n} {}", s.detail),
        },
        seen_us: Some(seen_us),
    }
}

/// A thread looking at a server's views every `every`, until dropped.
pub struct Watcher {
    track: Arc<Mutex<Track>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    /// Starts looking with `look`.
    pub fn start(every: Duration, mut look: Look) -> Watcher {
        let track = Arc::new(Mutex::new(Track::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (t, s) = (track.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("fathom-watch".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    let at = now_us();
                    match look() {
                        Ok(l) => {
                            let mut track = t.lock().unwrap_or_else(|p| p.into_inner());
                            track.look(at, l.seen);
                            track.own = l.own;
                        }
                        // A server that went away, or refuses its views: nothing more to see.
                        Err(_) => return,
                    }
                    std::thread::sleep(every);
                }
            })
            .ok();
        Watcher {
            track,
            stop,
            thread,
        }
    }

    /// The events seen that overlap `[from_us, to_us]`.
    pub fn events(&self, from_us: u64, to_us: u64) -> Vec<EngineEvent> {
        self.track().events(from_us, to_us)
    }

    /// Takes the watcher's own share out of the server's `counters`.
    pub fn discount(&self, counters: &mut Counters) {
        for (k, own) in &self.track().own {
            if let Some(c) = counters.get_mut(k) {
                *c = (*c - own).max(0.0);
            }
        }
    }

    /// Whether its looks have told anything.
    pub fn working(&self) -> bool {
        self.track().working
    }

    fn track(&self) -> std::sync::MutexGuard<'_, Track> {
        self.track.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Now, Unix microseconds (the clock steps' windows and engines' logs are on).
fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_api::events::{FLUSH, LOCK_WAIT};

    fn seen(key: &str, what: &'static str, count: u64) -> Seen {
        Seen {
            key: key.into(),
            what,
            detail: format!("{key} seen"),
            count,
        }
    }

    /// An event spans from the look before it was first seen to the look that no longer saw
    /// it; counts add up over its looks; one still going ends at the window's end.
    #[test]
    fn an_event_spans_every_moment_it_may_have_been_in() {
        let mut t = Track::default();
        t.look(1_000, vec![]);
        t.look(
            1_100,
            vec![seen("lock 7", LOCK_WAIT, 0), seen("flush", FLUSH, 3)],
        );
        t.look(
            1_200,
            vec![seen("lock 7", LOCK_WAIT, 0), seen("flush", FLUSH, 4)],
        );
        t.look(1_300, vec![seen("flush", FLUSH, 1)]);
        let events = t.events(0, 5_000);
        assert_eq!(events.len(), 2, "{events:?}");
        let lock = events.iter().find(|e| e.what == LOCK_WAIT).unwrap();
        assert_eq!((lock.start_us, lock.end_us), (1_000, 1_300));
        assert_eq!(lock.seen_us, Some([1_100, 1_200]));
        assert_eq!(lock.detail, "lock 7 seen");
        let flush = events.iter().find(|e| e.what == FLUSH).unwrap();
        assert_eq!((flush.start_us, flush.end_us), (1_000, 5_000));
        assert_eq!(flush.detail, "8 flush seen");
        assert!(t.events(1_301, 1_400).iter().all(|e| e.what == FLUSH));
    }

    /// The same key seen twice in one look is one event (two sessions waiting on one lock are
    /// told apart by their keys).
    #[test]
    fn one_key_in_a_look_is_one_event() {
        let mut t = Track::default();
        t.look(10, vec![seen("a", FLUSH, 1), seen("a", FLUSH, 2)]);
        t.look(20, vec![]);
        let events = t.events(0, 100);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].detail, "3 a seen");
    }
}
