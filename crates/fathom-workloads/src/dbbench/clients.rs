//! The per-thread clients of the dbbench steps: which key each operation takes (sequential or
//! uniform random, as db_bench's `rand.Next() % num`) is decided apart from the session, so the
//! choice can be tested without an engine.

use super::data::{KeyFormat, ValueSource};
use fathom_api::kind::Done;
use fathom_api::kv::{Direction, KvSession, Seek};
use fathom_api::step::Client;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Which integer key the next operation uses.
pub enum Keys {
    /// `next`, `next + 1`, ... up to `end` (exclusive), then done.
    Sequential { next: u64, end: u64 },
    /// Uniform over `[0, num)`.
    Random { rng: SmallRng, num: u64 },
}

impl Keys {
    pub fn random(num: u64, seed: u64) -> Keys {
        Keys::Random {
            rng: SmallRng::seed_from_u64(seed),
            num,
        }
    }

    #[inline]
    pub fn next(&mut self) -> Option<u64> {
        match self {
            Keys::Sequential { next, end } => (*next < *end).then(|| {
                *next += 1;
                *next - 1
            }),
            Keys::Random { rng, num } => Some(rng.gen_range(0..*num)),
        }
    }
}

/// What each operation does with its key.
pub enum Action {
    /// Put a fresh value (fillseq, overwrite, the background writer).
    Put {
        values: ValueSource,
        value_size: usize,
    },
    /// Point read (readrandom, readwhilewriting).
    Get,
    /// `batch` random keys read in one call (multireadrandom), counted as `batch` operations
    /// and timed once, as db_bench's; `keys` holds them between calls.
    MultiGet { batch: usize, keys: Vec<Vec<u8>> },
    /// Seek, then read up to `nexts` entries from there (fwdrange, revrange and their
    /// *whilewriting).
    Seek { nexts: usize, direction: Direction },
}

/// A dbbench client: a key chooser, an action and a session.
pub struct DbBenchClient<'e> {
    pub session: Box<dyn KvSession + 'e>,
    pub keys: Keys,
    pub format: KeyFormat,
    pub action: Action,
    /// The kind recorded for this client's operations.
    pub kind: super::DbBenchKind,
}

impl Client for DbBenchClient<'_> {
    #[inline]
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let Some(v) = self.keys.next() else {
            return Ok(None);
        };
        let mut counts_as = 1;
        let bytes = match &mut self.action {
            Action::Put { values, value_size } => {
                let key = self.format.key(v);
                let value = values.next(*value_size);
                self.session.put(key, value)?;
                (key.len() + value.len()) as u64
            }
            Action::Get => {
                let key = self.format.key(v);
                self.session.get(key)?.map_or(0, |n| (key.len() + n) as u64)
            }
            Action::Seek { nexts, direction } => {
                let key = self.format.key(v);
                let mut bytes = 0u64;
                // db_bench's seekrandom reads `seek_nexts` entries from the one it seeks to
                // (reading each, then stepping past it).
                self.session
                    .scan(Seek::new(key, *direction, *nexts), &mut |k, v| {
                        bytes += (k.len() + v.len()) as u64;
                        true
                    })?;
                bytes
            }
            Action::MultiGet { batch, keys } => {
                counts_as = *batch as u32;
                let key_size = self.format.size();
                let (found, bytes) = multi_get(
                    self.session.as_mut(),
                    &mut self.keys,
                    &mut self.format,
                    v,
                    *batch,
                    keys,
                )?;
                (found * key_size) as u64 + bytes
            }
        };
        Ok(Some(Done {
            bytes,
            counts_as,
            ..Done::of(self.kind)
        }))
    }
}

/// Draws `batch` keys, `first` among them, into `keys` and reads them in one call; returns how
/// many were found and their values' bytes.
fn multi_get(
    session: &mut dyn KvSession,
    chooser: &mut Keys,
    format: &mut KeyFormat,
    first: u64,
    batch: usize,
    keys: &mut Vec<Vec<u8>>,
) -> anyhow::Result<(usize, u64)> {
    keys.resize_with(batch, Vec::new);
    for (i, key) in keys.iter_mut().enumerate() {
        let v = match i {
            0 => first,
            _ => chooser.next().unwrap_or(first),
        };
        key.clear();
        key.extend_from_slice(format.key(v));
    }
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    session.multi_get(&refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// multireadrandom: one call reads `batch` random keys and counts as that many operations.
    #[test]
    fn a_multiget_counts_as_its_batch() {
        let entry = fathom_engines::find("null").unwrap();
        let config = fathom_engines::EngineConfig::default();
        let fathom_api::family::Engine::Kv(engine) = fathom_engines::open(entry, &config).unwrap()
        else {
            panic!("null is a kv engine")
        };
        let mut client = DbBenchClient {
            session: engine.session(Default::default()).unwrap(),
            keys: Keys::random(1000, 7),
            format: KeyFormat::new(20).unwrap(),
            action: Action::MultiGet {
                batch: 10,
                keys: Vec::new(),
            },
            kind: crate::dbbench::DbBenchKind::Get,
        };
        let done = client.next().unwrap().unwrap();
        assert_eq!(done.counts_as, 10);
        let Action::MultiGet { keys, .. } = &client.action else {
            unreachable!()
        };
        let mut expected = Keys::random(1000, 7);
        let mut format = KeyFormat::new(20).unwrap();
        for key in keys {
            assert_eq!(key.as_slice(), format.key(expected.next().unwrap()));
        }
        assert_eq!(keys.len(), 10);
    }

    #[test]
    fn sequential_keys_stop_at_the_end() {
        let mut k = Keys::Sequential { next: 3, end: 5 };
        assert_eq!((k.next(), k.next(), k.next()), (Some(3), Some(4), None));
    }

    #[test]
    fn random_keys_stay_in_range_and_cover_it() {
        let mut k = Keys::random(10, 42);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[k.next().unwrap() as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }
}
