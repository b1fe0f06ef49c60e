//! The kv row/index mapping every workload shares (docs/results.md, "The kv mapping"), as MyRocks
//! and MongoRocks lay rows out: a key is an index id (4 bytes, big-endian), then the indexed
//! columns memcomparable-encoded, then the primary key; a primary index entry's value holds
//! the row, a secondary index entry's value is empty. Keeping a secondary index is then a blind
//! put and delete.

/// Index ids: table `t`'s primary index is `t * 16`, its secondary indexes `t * 16 + n`.
pub fn index_id(table: u32, index: u32) -> u32 {
    table * 16 + index
}

/// Builds one key, reusing its buffer.
#[derive(Clone, Debug, Default)]
pub struct Key {
    buf: Vec<u8>,
}

impl Key {
    /// Starts a key in index `id`.
    pub fn start(&mut self, id: u32) -> &mut Key {
        self.buf.clear();
        self.buf.extend_from_slice(&id.to_be_bytes());
        self
    }

    /// Appends a signed integer so byte order is numeric order.
    pub fn int(&mut self, v: i64) -> &mut Key {
        self.buf
            .extend_from_slice(&((v as u64) ^ (1 << 63)).to_be_bytes());
        self
    }

    /// Appends bytes so byte order is the bytes' order and no value is a prefix of another:
    /// 0x00 becomes 0x00 0xff, and 0x00 0x00 ends the value.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Key {
        for &b in v {
            self.buf.push(b);
            if b == 0 {
                self.buf.push(0xff);
            }
        }
        self.buf.extend_from_slice(&[0, 0]);
        self
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }
}

/// Reads back an integer appended by [`Key::int`] at `offset`.
pub fn key_int(key: &[u8], offset: usize) -> Option<i64> {
    let b: [u8; 8] = key.get(offset..offset + 8)?.try_into().ok()?;
    Some((u64::from_be_bytes(b) ^ (1 << 63)) as i64)
}

/// A column value of a stored row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

/// Encodes a row: an integer as 8 bytes, bytes as a 4-byte length and the bytes.
pub fn encode_row(cols: &[Col<'_>], out: &mut Vec<u8>) {
    out.clear();
    for c in cols {
        match c {
            Col::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
            Col::Bytes(b) => {
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
}

/// Decodes a row whose column types are `ints` (true for an integer, false for bytes).
pub fn decode_row<'a>(mut row: &'a [u8], ints: &[bool]) -> Option<Vec<Col<'a>>> {
    let mut cols = Vec::with_capacity(ints.len());
    for &is_int in ints {
        if is_int {
            let (v, rest) = row.split_at_checked(8)?;
            cols.push(Col::Int(i64::from_le_bytes(v.try_into().ok()?)));
            row = rest;
        } else {
            let (n, rest) = row.split_at_checked(4)?;
            let n = u32::from_le_bytes(n.try_into().ok()?) as usize;
            let (v, rest) = rest.split_at_checked(n)?;
            cols.push(Col::Bytes(v));
            row = rest;
        }
    }
    Some(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_keys_sort_numerically() {
        let mut keys: Vec<Vec<u8>> = [-5i64, 3, 0, -1, 1 << 40, i64::MIN]
            .iter()
            .map(|&v| Key::default().start(7).int(v).as_slice().to_vec())
            .collect();
        keys.sort();
        let back: Vec<i64> = keys.iter().map(|k| key_int(k, 4).unwrap()).collect();
        assert_eq!(back, vec![i64::MIN, -5, -1, 0, 3, 1 << 40]);
    }

    #[test]
    fn byte_keys_sort_and_are_prefix_free() {
        let enc = |b: &[u8]| Key::default().start(1).bytes(b).int(9).as_slice().to_vec();
        assert!(enc(b"ab") < enc(b"ab\0"));
        assert!(enc(b"ab\0") < enc(b"abc"));
        assert!(enc(b"a") < enc(b"b"));
    }

    #[test]
    fn rows_round_trip() {
        let mut buf = Vec::new();
        encode_row(&[Col::Int(-3), Col::Bytes(b"xyz"), Col::Int(7)], &mut buf);
        assert_eq!(
            decode_row(&buf, &[true, false, true]).unwrap(),
            vec![Col::Int(-3), Col::Bytes(b"xyz"), Col::Int(7)]
        );
        assert!(decode_row(&buf[..5], &[true, false]).is_none());
    }
}
