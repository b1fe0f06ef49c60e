//! LinkBench's payload generator (docs/workloads.md §1.6): bytes from an alphabet, in chunks
//! that are either fresh or copied from a motif buffer made on first use, so payloads compress
//! about as Facebook's did. The original always uses a 512-byte motif (its `motif_length` key is
//! never found); `motif_length` honours the configured length instead.

use super::dist::log_normal;
use super::jrand::JavaRandom;

/// The original's motif size, whatever the configuration says.
pub const ORIGINAL_MOTIF_BYTES: usize = 512;
const CHUNK: usize = 128;

#[derive(Clone, Debug)]
pub struct Motif {
    start: u8,
    range: i32,
    uniqueness: f64,
    motif_bytes: usize,
    motif: Vec<u8>,
}

impl Motif {
    /// Bytes in `[start, end]`; a chunk is fresh with probability `uniqueness`.
    pub fn new(start: u8, end: u8, uniqueness: f64, motif_bytes: usize) -> Motif {
        Motif {
            start,
            range: i32::from(end) - i32::from(start) + 1,
            uniqueness,
            motif_bytes: motif_bytes.max(1),
            motif: Vec::new(),
        }
    }

    /// Link payloads: bytes 32..100, 22.5% unique.
    pub fn link(motif_bytes: usize) -> Motif {
        Motif::new(32, 100, 0.225, motif_bytes)
    }

    /// Node payloads: bytes 50..220, 63% unique.
    pub fn node(motif_bytes: usize) -> Motif {
        Motif::new(50, 220, 0.63, motif_bytes)
    }

    fn byte(&self, rng: &mut JavaRandom) -> u8 {
        (i32::from(self.start) + rng.next_int_bound(self.range)) as u8
    }

    /// Fills `out` with a payload whose length LinkBench draws log-normally (σ 1) around
    /// `median`, at most `max` bytes: the draw comes first, then the bytes, as the original.
    pub fn payload(&mut self, rng: &mut JavaRandom, median: f64, max: i64, out: &mut Vec<u8>) {
        let len = log_normal(rng, median, 1.0, 0, max);
        self.fill(rng, len as usize, out);
    }

    /// Fills `out` with `len` bytes.
    pub fn fill(&mut self, rng: &mut JavaRandom, len: usize, out: &mut Vec<u8>) {
        if self.motif.is_empty() {
            self.motif = (0..self.motif_bytes).map(|_| self.byte(rng)).collect();
        }
        out.clear();
        let chunk = CHUNK.min(self.motif_bytes);
        while out.len() < len {
            let this = chunk.min(len - out.len());
            if rng.next_double() < self.uniqueness {
                for _ in 0..this {
                    let b = self.byte(rng);
                    out.push(b);
                }
            } else {
                let at = rng.next_int_bound((self.motif_bytes - this + 1) as i32) as usize;
                out.extend_from_slice(&self.motif[at..at + this]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_stay_in_the_alphabet_and_repeat_the_motif() {
        let mut m = Motif::node(ORIGINAL_MOTIF_BYTES);
        let mut r = JavaRandom::new(11);
        let mut out = Vec::new();
        m.fill(&mut r, 4000, &mut out);
        assert_eq!(out.len(), 4000);
        assert!(out.iter().all(|b| (50..=220).contains(b)));
        // About 37% of the 128-byte chunks are copies of the 512-byte motif.
        let copies = out
            .chunks(128)
            .filter(|c| m.motif.windows(c.len()).any(|w| w == *c))
            .count();
        assert!((5..=20).contains(&copies), "{copies} of 32 chunks copied");
    }
}
