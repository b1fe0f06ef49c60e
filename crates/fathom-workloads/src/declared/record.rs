//! A declared workload's records as YCSB writes them: the key of record n (`user` and its
//! number, hashed unless inserts are ordered, zero-padded; or db_bench's binary key), each
//! field's random printable bytes as YCSB's `RandomByteIterator` makes them (or db_bench's
//! compressible ones), and on kv engines the fields packed into one value as YCSB's RocksDB
//! binding packs them (per field: a 4-byte length, the name, a 4-byte length, the bytes).

use super::gen::{fnv_hash64, Length};
use crate::dbbench::data::{write_key, ValueSource};
use rand::rngs::SmallRng;
use rand::Rng;

/// How record numbers become keys.
#[derive(Clone, Debug)]
pub struct Keys {
    /// Numbers hashed (YCSB's `insertorder=hashed`) or kept in order.
    pub hashed: bool,
    pub form: KeyForm,
}

/// How a (hashed or ordered) number is written.
#[derive(Clone, Debug)]
pub enum KeyForm {
    /// The prefix, then the number's digits padded with zeros to `zero_padding` (YCSB's).
    Ycsb { prefix: String, zero_padding: usize },
    /// The number's 8 bytes big-endian, padded with '0' to `size` bytes (db_bench's).
    Binary { size: usize },
}

impl Keys {
    /// Record `n`'s key, written into `out`.
    #[inline(always)]
    pub fn key(&self, n: u64, out: &mut Vec<u8>) {
        let v = if self.hashed { fnv_hash64(n) } else { n };
        match &self.form {
            KeyForm::Ycsb {
                prefix,
                zero_padding,
            } => ycsb_key(prefix, *zero_padding, v, out),
            KeyForm::Binary { size } => write_key(v, *size, out),
        }
    }
}

/// YCSB's key of number `v`: `prefix`, then its digits zero-padded to `zero_padding`.
#[inline]
fn ycsb_key(prefix: &str, zero_padding: usize, mut v: u64, out: &mut Vec<u8>) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    out.clear();
    out.extend_from_slice(prefix.as_bytes());
    // The digits from the last, two at a time (a formatter costs more than the rest).
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[v as usize * 2..v as usize * 2 + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + v as u8;
    }
    for _ in digits.len() - at..zero_padding {
        out.push(b'0');
    }
    out.extend_from_slice(&digits[at..]);
}

/// The fields of a record: their names, how long each value is and where its bytes come from.
#[derive(Clone, Debug)]
pub struct Fields {
    pub names: Vec<String>,
    pub length: Length,
    pub bytes: FieldBytes,
}

/// Where a field's bytes come from.
#[derive(Clone, Debug)]
pub enum FieldBytes {
    /// YCSB's `RandomByteIterator`.
    Ycsb,
    /// db_bench's generator: slices of a buffer that compresses to its ratio.
    Compressible(Box<ValueSource>),
}

impl Fields {
    /// YCSB's `field0` … `field{count-1}`, with YCSB's random bytes.
    pub fn new(prefix: &str, count: usize, length: Length) -> Fields {
        Fields {
            names: (0..count).map(|i| format!("{prefix}{i}")).collect(),
            length,
            bytes: FieldBytes::Ycsb,
        }
    }

    /// Fields whose bytes compress to `ratio`, as db_bench's values do.
    pub fn compressible(mut self, ratio: f64) -> Fields {
        let longest = self.length.max() as usize;
        self.bytes = FieldBytes::Compressible(Box::new(ValueSource::new(longest, ratio)));
        self
    }

    /// Appends one field's fresh bytes, of a length drawn from the fields' distribution.
    #[inline]
    pub fn fresh(&mut self, rng: &mut SmallRng, out: &mut Vec<u8>) {
        let len = self.length.next(rng) as usize;
        match &mut self.bytes {
            FieldBytes::Ycsb => random_bytes(rng, len, out),
            FieldBytes::Compressible(src) => out.extend_from_slice(src.next(len)),
        }
    }
}

/// Appends `len` bytes as `RandomByteIterator` makes them: six printable bytes from each 32-bit
/// draw, so values compress as YCSB's do.
pub fn random_bytes(rng: &mut SmallRng, len: usize, out: &mut Vec<u8>) {
    let mut left = len;
    while left > 0 {
        let b: u32 = rng.gen();
        let six = [
            b & 31,
            (b >> 5) & 63,
            (b >> 10) & 95,
            (b >> 15) & 31,
            (b >> 20) & 63,
            (b >> 25) & 95,
        ];
        let n = left.min(6);
        out.extend(six[..n].iter().map(|&x| x as u8 + b' '));
        left -= n;
    }
}

/// Appends one field as YCSB's RocksDB binding serialises it.
pub fn pack_field(name: &str, value: &[u8], out: &mut Vec<u8>) {
    pack_raw(name.as_bytes(), value, out);
}

/// Calls `each` with every packed field of a value, as (name, value) slices of `packed`,
/// without allocating; false when the bytes are not a packing (a value another workload
/// wrote).
pub fn each_field<'p>(packed: &'p [u8], mut each: impl FnMut(&'p [u8], &'p [u8])) -> bool {
    let take = |at: &mut usize| -> Option<&[u8]> {
        let len = u32::from_be_bytes(packed.get(*at..*at + 4)?.try_into().ok()?) as usize;
        let bytes = packed.get(*at + 4..*at + 4 + len)?;
        *at += 4 + len;
        Some(bytes)
    };
    let mut at = 0;
    while at < packed.len() {
        let (Some(name), Some(value)) = (take(&mut at), take(&mut at)) else {
            return false;
        };
        each(name, value);
    }
    true
}

/// The packed fields of a value, collected (`each_field` without the allocation is what the
/// clients use).
#[cfg(test)]
pub fn unpack(packed: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut out = Vec::new();
    each_field(packed, |n, v| out.push((n, v))).then_some(out)
}

/// Appends one field of a raw name as the binding serialises it.
fn pack_raw(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(name.len() as u32).to_be_bytes());
    out.extend_from_slice(name);
    out.extend_from_slice(&(value.len() as u32).to_be_bytes());
    out.extend_from_slice(value);
}

/// A whole record packed: every field with fresh bytes.
pub fn pack_record(
    fields: &mut Fields,
    rng: &mut SmallRng,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) {
    out.clear();
    for i in 0..fields.names.len() {
        scratch.clear();
        fields.fresh(rng, scratch);
        pack_field(&fields.names[i], scratch, out);
    }
}

/// `packed` with field number `field` given fresh bytes (YCSB's update of one field: read,
/// merge, write back), into `out`.
pub fn repack_one(
    packed: &[u8],
    field: usize,
    fields: &mut Fields,
    rng: &mut SmallRng,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) {
    out.clear();
    scratch.clear();
    fields.fresh(rng, scratch);
    let field = fields.names[field].as_bytes();
    let mut written = false;
    each_field(packed, |name, value| {
        if name == field {
            pack_raw(field, scratch, out);
            written = true;
        } else {
            pack_raw(name, value, out);
        }
    });
    if !written {
        pack_raw(field, scratch, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn keys_are_ycsbs() {
        let mut k = Vec::new();
        let ycsb = |prefix: &str, zero_padding| KeyForm::Ycsb {
            prefix: prefix.into(),
            zero_padding,
        };
        let hashed = Keys {
            hashed: true,
            form: ycsb("user", 1),
        };
        hashed.key(0, &mut k);
        assert_eq!(k, b"user6284781860667377211");
        let ordered = Keys {
            hashed: false,
            form: ycsb("user", 5),
        };
        ordered.key(42, &mut k);
        assert_eq!(k, b"user00042");
        for n in [0, 7, 10, 99, 100, 12345, u64::MAX / 3] {
            ordered.key(n, &mut k);
            assert_eq!(k, format!("user{n:05}").as_bytes());
        }
        // db_bench's: 8 bytes big-endian, '0' to the size, in the number's order.
        let binary = Keys {
            hashed: false,
            form: KeyForm::Binary { size: 16 },
        };
        binary.key(258, &mut k);
        assert_eq!(k, b"\0\0\0\0\0\0\x01\x0200000000");
        let mut after = Vec::new();
        binary.key(259, &mut after);
        assert!(k < after);
    }

    #[test]
    fn compressible_fields_are_db_benchs_values() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut fields = Fields::new("field", 1, Length::Constant(100)).compressible(0.5);
        let mut v = Vec::new();
        fields.fresh(&mut rng, &mut v);
        assert_eq!(v.len(), 100);
        // db_bench's fragment at ratio 0.5: 50 random printable bytes, written twice.
        assert_eq!(v[..50], v[50..]);
        let first = v.clone();
        v.clear();
        fields.fresh(&mut rng, &mut v);
        assert_ne!(v, first);
    }

    #[test]
    fn a_record_packs_and_unpacks_and_one_field_is_replaced() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut fields = Fields::new("field", 10, Length::Constant(100));
        let (mut scratch, mut packed, mut again) = (Vec::new(), Vec::new(), Vec::new());
        pack_record(&mut fields, &mut rng, &mut scratch, &mut packed);
        // YCSB's RocksDB binding: 10 × (4 + 6 + 4 + 100) bytes.
        assert_eq!(packed.len(), 1140);
        let parts = unpack(&packed).unwrap();
        assert_eq!(parts.len(), 10);
        assert!(parts
            .iter()
            .all(|(_, v)| v.iter().all(|b| (32..128).contains(b))));
        repack_one(&packed, 3, &mut fields, &mut rng, &mut scratch, &mut again);
        let after = unpack(&again).unwrap();
        assert_eq!(after.len(), 10);
        assert_ne!(after[3].1, parts[3].1);
        assert_eq!(after[4].1, parts[4].1);
        assert!(unpack(b"\0\0\0\x09abc").is_none());
    }
}
