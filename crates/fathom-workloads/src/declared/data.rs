//! A workload file's `[data]`: the records (YCSB's `recordcount`, `fieldcount`, `fieldlength`,
//! `insertorder`, …), how their keys and values are written (YCSB's or db_bench's), and the
//! checks that refuse a bad one by line and key.

use super::gen::LengthDistribution;
use super::refusal::{refuse, Refusal};
use serde::Deserialize;
use toml::Spanned;

/// The records (YCSB's `recordcount`, `fieldcount`, `fieldlength`, `insertorder`, ...).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Data {
    pub records: Spanned<u64>,
    pub fields: Spanned<u64>,
    pub field_prefix: String,
    pub field_length: Spanned<u64>,
    pub field_length_distribution: Spanned<LengthDistribution>,
    pub min_field_length: u64,
    /// The buckets of a `histogram` length (YCSB's `fieldlengthhistogram` file, written here).
    pub field_length_histogram: Option<Spanned<Histogram>>,
    /// Field bytes as db_bench's generator makes them, compressing to this ratio; none:
    /// YCSB's `RandomByteIterator`.
    pub compression_ratio: Option<Spanned<f64>>,
    /// YCSB's `user` and digits, or db_bench's fixed-width binary keys.
    pub key_format: Spanned<KeyFormat>,
    /// A binary key's bytes (db_bench's `key_size`).
    pub key_size: Option<Spanned<u64>>,
    pub key_prefix: String,
    pub insert_order: InsertOrder,
    pub zero_padding: u64,
    /// On kv engines: the fields packed as YCSB's RocksDB binding packs them, or the one
    /// field's bytes as the whole value (db_bench's).
    pub kv_value: Spanned<KvValue>,
    /// The table (SQL) or collection (documents) the records live in.
    pub table: String,
}

/// A histogram of field lengths: bucket i weighs `buckets[i]`; a draw that lands in bucket i
/// is (i + 1) × `block_size` bytes long, as YCSB's `HistogramGenerator` makes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Histogram {
    pub block_size: u64,
    pub buckets: Vec<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyFormat {
    /// `key_prefix` and the record's number in digits (YCSB's `buildKeyName`).
    Ycsb,
    /// The number's 8 bytes big-endian, padded with '0' to `key_size` (db_bench's).
    Binary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KvValue {
    Packed,
    Raw,
}

impl Default for Data {
    fn default() -> Self {
        Data {
            records: Spanned::new(0..0, 1000),
            fields: Spanned::new(0..0, 10),
            field_prefix: "field".into(),
            field_length: Spanned::new(0..0, 100),
            field_length_distribution: Spanned::new(0..0, LengthDistribution::Constant),
            min_field_length: 1,
            field_length_histogram: None,
            compression_ratio: None,
            key_format: Spanned::new(0..0, KeyFormat::Ycsb),
            key_size: None,
            key_prefix: "user".into(),
            insert_order: InsertOrder::Hashed,
            zero_padding: 1,
            kv_value: Spanned::new(0..0, KvValue::Packed),
            table: "usertable".into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InsertOrder {
    Hashed,
    Ordered,
}

/// Refuses `[data]` that cannot run: no records or fields, lengths out of order, a key
/// format, value bytes or length histogram written wrong.
pub(super) fn check(d: &Data) -> Result<(), Refusal> {
    if *d.records.get_ref() == 0 {
        return Err(refuse(&d.records, "data.records", "at least 1 record"));
    }
    if *d.fields.get_ref() == 0 {
        return Err(refuse(&d.fields, "data.fields", "at least 1 field"));
    }
    let lengths = *d.field_length_distribution.get_ref();
    if matches!(
        lengths,
        LengthDistribution::Uniform | LengthDistribution::Zipfian
    ) && d.min_field_length > *d.field_length.get_ref()
    {
        return Err(refuse(
            &d.field_length,
            "data.field_length",
            format!(
                "at least min_field_length ({}) for a {:?} length",
                d.min_field_length, lengths
            ),
        ));
    }
    check_formats(d)
}

/// The data's key format, value bytes and length histogram.
fn check_formats(d: &Data) -> Result<(), Refusal> {
    match (
        &d.field_length_histogram,
        *d.field_length_distribution.get_ref(),
    ) {
        (Some(h), LengthDistribution::Histogram) => {
            let Histogram {
                block_size,
                buckets,
            } = h.get_ref();
            if *block_size == 0 || buckets.is_empty() || buckets.iter().sum::<u64>() == 0 {
                let what = "{ block_size = BYTES above 0, buckets = [WEIGHT, ...] } with a \
                            weight above 0";
                return Err(refuse(h, "data.field_length_histogram", what));
            }
        }
        (Some(h), _) => {
            let what = "field_length_distribution = \"histogram\" beside it";
            return Err(refuse(h, "data.field_length_histogram", what));
        }
        (None, LengthDistribution::Histogram) => {
            let what = "field_length_histogram = { block_size = BYTES, buckets = [...] } for a \
                        histogram length";
            let at = &d.field_length_distribution;
            return Err(refuse(at, "data.field_length_histogram", what));
        }
        (None, _) => {}
    }
    if let Some(r) = &d.compression_ratio {
        if !(*r.get_ref() > 0.0 && *r.get_ref() <= 1.0) {
            let what = "a ratio above 0 and at most 1 (db_bench's 0.5: half the bytes random)";
            return Err(refuse(r, "data.compression_ratio", what));
        }
    }
    match (d.key_format.get_ref(), &d.key_size) {
        (KeyFormat::Binary, Some(k)) if *k.get_ref() < 8 => {
            let what = "at least 8 bytes (the record's number is 8 bytes)";
            return Err(refuse(k, "data.key_size", what));
        }
        (KeyFormat::Ycsb, Some(k)) => {
            let what = "key_format = \"binary\" beside it (a YCSB key is as long as its digits)";
            return Err(refuse(k, "data.key_size", what));
        }
        _ => {}
    }
    if *d.kv_value.get_ref() == KvValue::Raw && *d.fields.get_ref() != 1 {
        let what = "fields = 1 beside it: a raw value is one field's bytes";
        return Err(refuse(&d.kv_value, "data.kv_value", what));
    }
    Ok(())
}
