//! What a declared workload's client does next, decided apart from any engine: the load's next
//! record, or a phase's next operation (its kind from the mix, its record from the phase's
//! distribution, a scan's length, which field an update writes). The kv and sql clients only
//! carry out what this decides.

use super::gen::{Chooser, Length};
use super::record::{Fields, Keys};
use super::YcsbKind;
use fathom_api::kind::Done;
use fathom_api::step::Client;
use rand::rngs::SmallRng;
use rand::Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a step's clients share: the next record the load inserts, the next a phase's insert
/// takes, and how many of those are done (the newest record `latest` and every chooser may
/// draw, as YCSB's acknowledged insert counter).
#[derive(Debug)]
pub struct Shared {
    pub records: u64,
    load_next: AtomicU64,
    insert_next: AtomicU64,
    inserted: AtomicU64,
}

impl Shared {
    pub fn new(records: u64) -> Arc<Shared> {
        Arc::new(Shared {
            records,
            load_next: AtomicU64::new(0),
            insert_next: AtomicU64::new(records),
            inserted: AtomicU64::new(0),
        })
    }

    /// The highest record number inserted so far.
    #[inline]
    fn newest(&self) -> u64 {
        self.records - 1 + self.inserted.load(Ordering::Relaxed)
    }

    /// An insert of a phase has finished: its record may now be drawn.
    #[inline]
    fn inserted(&self) {
        self.inserted.fetch_add(1, Ordering::Relaxed);
    }
}

/// One phase's operation choices for one client.
pub struct Plan {
    /// Cumulative shares of read, update, insert, scan, read-modify-write, delete.
    pub cumulative: [f64; 6],
    /// The one kind with weight, when the mix has one.
    pub only: Option<YcsbKind>,
    pub chooser: Chooser,
    pub scan_length: Length,
    /// A read returns every field (YCSB's `readallfields`), else one chosen uniformly.
    pub read_all_fields: bool,
    /// An update writes every field (YCSB's `writeallfields`), else one chosen uniformly.
    pub write_all_fields: bool,
    /// Operations this client performs; `None` until the step's time is up.
    pub quota: Option<u64>,
}

/// What the client does: load its share of the records, or run a phase's mix.
pub enum Work {
    Load,
    Run(Box<Plan>),
}

/// One operation to carry out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: YcsbKind,
    /// The record's number.
    pub record: u64,
    /// Records a scan reads at most.
    pub scan_length: usize,
    /// The field an update writes; `None` for all of them.
    pub field: Option<usize>,
    /// The field a read (or scan) returns; `None` for all of them.
    pub read_field: Option<usize>,
}

/// The kinds a phase mixes, in the order of its weights.
pub const KINDS: [YcsbKind; 6] = [
    YcsbKind::Read,
    YcsbKind::Update,
    YcsbKind::Insert,
    YcsbKind::Scan,
    YcsbKind::ReadModifyWrite,
    YcsbKind::Delete,
];

impl Work {
    /// The next operation, for a client with `fields` fields; `None` when this client is
    /// done. An insert's record is taken here, and counted as inserted once it is written.
    #[inline(always)]
    pub fn next(&mut self, shared: &Shared, rng: &mut SmallRng, fields: usize) -> Option<Op> {
        let plan = match self {
            Work::Load => {
                let n = shared.load_next.fetch_add(1, Ordering::Relaxed);
                return (n < shared.records).then_some(Op {
                    kind: YcsbKind::Load,
                    record: n,
                    scan_length: 0,
                    field: None,
                    read_field: None,
                });
            }
            Work::Run(plan) => plan,
        };
        if let Some(q) = &mut plan.quota {
            if *q == 0 {
                return None;
            }
            *q -= 1;
        }
        // YCSB's operation chooser: the first kind whose cumulative share passes the draw (no
        // draw when one kind has all the weight).
        let kind = match plan.only {
            Some(kind) => kind,
            None => {
                let u: f64 = rng.gen();
                let at = plan.cumulative.iter().position(|&c| u < c);
                KINDS[at.unwrap_or(KINDS.len() - 1)]
            }
        };
        let mut op = Op {
            kind,
            record: 0,
            scan_length: 0,
            field: None,
            read_field: None,
        };
        match kind {
            YcsbKind::Insert => {
                op.record = shared.insert_next.fetch_add(1, Ordering::Relaxed);
                return Some(op);
            }
            YcsbKind::Scan => {
                op.record = plan.chooser.next(rng, shared.newest());
                op.scan_length = plan.scan_length.next(rng) as usize;
            }
            _ => op.record = plan.chooser.next(rng, shared.newest()),
        }
        // YCSB draws the field a read returns, then (read-modify-write) the one it writes.
        let reads = matches!(
            kind,
            YcsbKind::Read | YcsbKind::Scan | YcsbKind::ReadModifyWrite
        );
        if reads && !plan.read_all_fields {
            op.read_field = Some(rng.gen_range(0..fields));
        }
        if matches!(kind, YcsbKind::Update | YcsbKind::ReadModifyWrite) && !plan.write_all_fields {
            op.field = Some(rng.gen_range(0..fields));
        }
        Some(op)
    }
}

/// What every declared client holds beside its store: the step's shared counters, how keys
/// and fields are made, its random source, its work, and the key of the operation at hand.
pub struct Core {
    pub shared: Arc<Shared>,
    pub keys: Keys,
    pub fields: Fields,
    pub rng: SmallRng,
    pub work: Work,
    /// The current operation's key (ASCII).
    pub key: Vec<u8>,
}

impl Core {
    pub fn new(shared: Arc<Shared>, keys: Keys, fields: Fields, rng: SmallRng, work: Work) -> Core {
        Core {
            shared,
            keys,
            fields,
            rng,
            work,
            key: Vec::new(),
        }
    }

    /// Fresh bytes for one field, into `out`.
    pub fn fresh(&mut self, out: &mut Vec<u8>) {
        out.clear();
        self.fields.fresh(&mut self.rng, out);
    }

    /// The current key as text.
    pub fn key_text(&self) -> anyhow::Result<&str> {
        Ok(std::str::from_utf8(&self.key)?)
    }
}

/// A family's way of carrying out an operation (`kv.rs`, `sql.rs`, `doc.rs`), its key already
/// in `core.key`.
pub trait Carry: Send {
    fn carry_out(&mut self, core: &mut Core, op: Op) -> anyhow::Result<Done>;
}

/// A declared workload's client: the core decides each operation, the store carries it out.
pub struct Driven<C> {
    pub core: Core,
    pub store: C,
}

impl<C: Carry> Client for Driven<C> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let core = &mut self.core;
        let fields = core.fields.names.len();
        let Some(op) = core.work.next(&core.shared, &mut core.rng, fields) else {
            return Ok(None);
        };
        core.keys.key(op.record, &mut core.key);
        let done = self.store.carry_out(core, op)?;
        if op.kind == YcsbKind::Insert {
            core.shared.inserted();
        }
        Ok(Some(done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_counted_phase_stops_at_its_quota_and_inserts_take_new_records() {
        let shared = Shared::new(100);
        let mut work = Work::Run(Box::new(Plan {
            cumulative: [0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
            only: Some(YcsbKind::Insert),
            chooser: Chooser::Uniform { min: 0, span: 100 },
            scan_length: Length::Constant(1),
            read_all_fields: true,
            write_all_fields: false,
            quota: Some(3),
        }));
        let mut rng = SmallRng::seed_from_u64(1);
        let records: Vec<u64> = std::iter::from_fn(|| work.next(&shared, &mut rng, 10))
            .map(|op| op.record)
            .collect();
        assert_eq!(records, [100, 101, 102]);
    }

    #[test]
    fn the_load_takes_every_record_once_across_clients() {
        let shared = Shared::new(5);
        let (mut a, mut b) = (Work::Load, Work::Load);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut seen = Vec::new();
        while let Some(op) = a.next(&shared, &mut rng, 1) {
            seen.push(op.record);
            if let Some(op) = b.next(&shared, &mut rng, 1) {
                seen.push(op.record);
            }
        }
        assert_eq!(seen, [0, 1, 2, 3, 4]);
    }
}
