//! db_bench's keys and values (docs/workloads.md §4.3): a key is the integer's 8 bytes
//! big-endian padded with `'0'` to the key size; values are slices of a 1 MiB buffer built
//! from 100-byte fragments that compress to `compression_ratio`, from a Lehmer generator
//! seeded with 301, as db_bench's `RandomGenerator` does.

/// Writes db_bench keys into a reused buffer.
pub struct KeyFormat {
    buf: Vec<u8>,
}

impl KeyFormat {
    /// Keys of `size` bytes; db_bench needs at least the 8 bytes of the integer.
    pub fn new(size: usize) -> anyhow::Result<KeyFormat> {
        if size < 8 {
            anyhow::bail!(
                "parameter `key_size`: {size} is too small (db_bench keys are at least 8 bytes)"
            );
        }
        Ok(KeyFormat {
            buf: vec![b'0'; size],
        })
    }

    /// A key's bytes.
    pub fn size(&self) -> usize {
        self.buf.len()
    }

    /// The key for integer `v`.
    #[inline]
    pub fn key(&mut self, v: u64) -> &[u8] {
        let size = self.buf.len();
        write_key(v, size, &mut self.buf);
        &self.buf
    }
}

/// Writes the key of `size` bytes (8 or more) for integer `v` into `out`. The padding is
/// written when `out` is not `size` bytes long, so `out` must hold only such keys between
/// calls.
#[inline]
pub fn write_key(v: u64, size: usize, out: &mut Vec<u8>) {
    if out.len() != size {
        out.clear();
        out.resize(size, b'0');
    }
    out[..8].copy_from_slice(&v.to_be_bytes());
}

/// The minimal-standard Lehmer generator (multiplier 16807, modulus 2^31 - 1) that LevelDB's
/// and RocksDB's `Random` implement.
pub struct Lehmer {
    seed: u32,
}

impl Lehmer {
    const M: u32 = 2_147_483_647;

    pub fn new(seed: u32) -> Lehmer {
        let s = seed & Self::M;
        Lehmer {
            seed: if s == 0 || s == Self::M { 1 } else { s },
        }
    }

    pub fn next_u32(&mut self) -> u32 {
        let product = u64::from(self.seed) * 16807;
        let mut s = ((product >> 31) + (product & u64::from(Self::M))) as u32;
        if s > Self::M {
            s -= Self::M;
        }
        self.seed = s;
        s
    }

    pub fn uniform(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }
}

/// Round-robin slices of a compressible buffer.
#[derive(Clone, Debug)]
pub struct ValueSource {
    data: Vec<u8>,
    pos: usize,
}

impl ValueSource {
    pub fn new(value_size: usize, compression_ratio: f64) -> ValueSource {
        let mut rnd = Lehmer::new(301);
        let want = value_size.max(1 << 20);
        let mut data = Vec::with_capacity(want + 100);
        while data.len() < want {
            // A 100-byte fragment: `raw` random printable bytes, repeated to fill it.
            let raw = ((100.0 * compression_ratio) as usize).max(1);
            let piece: Vec<u8> = (0..raw).map(|_| b' ' + rnd.uniform(95) as u8).collect();
            data.extend(piece.iter().cycle().take(100));
        }
        ValueSource { data, pos: 0 }
    }

    /// The next value of `len` bytes.
    #[inline]
    pub fn next(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_big_endian_then_zero_padding() {
        let mut k = KeyFormat::new(20).unwrap();
        let key = k.key(0x0102).to_vec();
        assert_eq!(&key[..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&key[8..], b"000000000000");
        // Byte order is numeric order, so fillseq writes keys in sorted order.
        assert!(k.key(255).to_vec() < k.key(256).to_vec());
        assert!(KeyFormat::new(4).is_err());
    }

    #[test]
    fn lehmer_matches_the_minimal_standard() {
        // Park & Miller: from seed 1, the 10,000th value is 1043618065.
        let mut r = Lehmer::new(1);
        let mut v = 0;
        for _ in 0..10_000 {
            v = r.next_u32();
        }
        assert_eq!(v, 1_043_618_065);
    }

    #[test]
    fn values_compress_to_about_the_ratio() {
        let mut src = ValueSource::new(400, 0.5);
        let v = src.next(400).to_vec();
        assert_eq!(v.len(), 400);
        assert!(v.iter().all(|b| (b' '..=b'~').contains(b)));
        // Each 100-byte fragment is 50 random bytes written twice.
        assert_eq!(&v[..50], &v[50..100]);
        assert_ne!(src.next(400), &v[..]);
    }
}
