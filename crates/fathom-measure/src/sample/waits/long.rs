//! `--waits=bpf`: the long sleeps the program sends whole, kept for the step's slowest
//! operations (the clients' only); with stacks, each long enough walked by DWARF, which places
//! a kept sleep (`Sleep::at`) and gives the folded stacks its whole user stack.

use super::{classify, group_of, Kind, Sleep, MAX_SLEEPS};
use crate::sample::threads::Whose;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A sleep's group, kind and stacks (process, kernel stack id, user stack id), as the folded
/// stacks tally them.
pub(super) type StackKey = (Whose, Kind, u32, i32, i32);

/// The walked long sleeps' time by their stacks' key in the folded tally, and under it by
/// their whole user stack (names, outermost first), ns.
pub(super) type Walked = BTreeMap<StackKey, BTreeMap<Vec<String>, u64>>;

/// A long sleep whose user stack may still come.
struct Awaited {
    /// Its index among the kept, if kept.
    kept: Option<usize>,
    key: StackKey,
    ns: u64,
}

/// The clients' long sleeps the program sent, kept whole up to `MAX_SLEEPS`; with stacks, the
/// long sleeps of fathom's own process walked.
#[derive(Default)]
pub(super) struct Sleeps {
    pub kept: Vec<Sleep>,
    pub left_out: u64,
    pub names: fathom_bpf::symbols::Symbols,
    /// Whether the program sends user stacks to walk (`bpf-stacks`).
    walks: bool,
    walker: fathom_bpf::unwind::Walker,
    /// Sleeps whose user stack may still come, by (thread, start).
    awaiting: HashMap<(u32, u64), Awaited>,
    pub walked: Walked,
}

impl Sleeps {
    /// With `stacks`, fathom's own files read now (their symbols and call frame
    /// information), before the step, not during it.
    pub fn new(stacks: bool) -> Sleeps {
        let mut s = Sleeps {
            walks: stacks,
            ..Sleeps::default()
        };
        if stacks {
            s.walker.know(&mut s.names, std::process::id());
            fathom_bpf::release_freed_heap();
        }
        s
    }

    /// Takes what the program sent since the last call: keeps the sleeps of fathom's own
    /// process (its clients are there, and a client born since `threads` was refreshed is not
    /// yet among them) but for the threads known not to be clients; and walks the user stacks
    /// sent.
    pub fn drain(&mut self, program: &mut fathom_bpf::Program, threads: &[(u32, Whose)]) {
        let me = std::process::id();
        for l in program.long_sleeps() {
            let k = l.key;
            if k.tgid != me {
                continue;
            }
            let whose = (threads.iter().find(|t| t.0 == k.tid)).map_or(Whose::Client, |t| t.1);
            let state = if k.uninterruptible == 1 { 'D' } else { 'S' };
            let kind =
                (k.nr != fathom_bpf::RUNNABLE_NR).then(|| classify(state, Some(i64::from(k.nr))));
            let kept = (whose == Whose::Client && self.kept.len() < MAX_SLEEPS).then(|| {
                self.kept.push(Sleep {
                    tid: k.tid,
                    kind,
                    start_ns: l.start,
                    end_ns: l.end,
                    at: None,
                });
                self.kept.len() - 1
            });
            self.left_out += u64::from(whose == Whose::Client && kept.is_none());
            let walked = self.walks && l.end - l.start >= fathom_bpf::USER_STACK_NS;
            if let (Some(kind), true) = (kind, walked) {
                let key = (group_of(whose), kind, k.tgid, k.kstack, k.ustack);
                let ns = l.end - l.start;
                self.awaiting
                    .insert((k.tid, l.start), Awaited { kept, key, ns });
            }
        }
        self.walk(program);
    }

    /// Walks each user stack the program sent for an awaited sleep: places it if kept, and
    /// adds its time to its whole stack's.
    fn walk(&mut self, program: &mut fathom_bpf::Program) {
        for u in program.user_stacks() {
            let Some(a) = self.awaiting.remove(&(u.tid, u.start)) else {
                continue;
            };
            let frames = self.walker.walk(&mut self.names, &u);
            if let Some(i) = a.kept {
                let at = fathom_bpf::unwind::place(&mut self.names, u.tgid, &frames);
                self.kept[i].at = at.map(Arc::from);
            }
            let user: Vec<String> = frames
                .iter()
                .rev()
                .map(|&f| self.names.user(u.tgid, f))
                .collect();
            *self
                .walked
                .entry(a.key)
                .or_default()
                .entry(user)
                .or_default() += a.ns;
        }
    }
}
