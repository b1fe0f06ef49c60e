//! TPC-C on the document family as py-tpcc's MongoDB driver maps it (mongodb-labs' py-tpcc,
//! with its defaults: denormalized, findAndModify, one transaction per TPC-C transaction):
//! a collection per table named as py-tpcc names them, a document per row with the table's
//! column names as fields, each order's lines embedded in its order (`ORDER_LINE`), and
//! py-tpcc's indexes. docs/workloads.md §5.8 has the mapping and where fathom departs.

pub mod check;
pub mod load;
pub mod txn;

use fathom_api::doc::bson::{doc, Bson, DateTime, Document, RawDocument};
use fathom_api::doc::{DocEngine, Index};

/// The collections, by their py-tpcc names.
pub const ITEM: &str = "ITEM";
pub const WAREHOUSE: &str = "WAREHOUSE";
pub const DISTRICT: &str = "DISTRICT";
pub const CUSTOMER: &str = "CUSTOMER";
pub const HISTORY: &str = "HISTORY";
pub const STOCK: &str = "STOCK";
pub const ORDERS: &str = "ORDERS";
pub const NEW_ORDER: &str = "NEW_ORDER";

const ALL: [&str; 8] = [
    ITEM, WAREHOUSE, DISTRICT, CUSTOMER, HISTORY, STOCK, ORDERS, NEW_ORDER,
];

/// Collection `name` of table copy `t`: py-tpcc's name for the first copy (it has no copies),
/// `NAME_t` for the others.
pub fn coll(name: &str, t: u32) -> String {
    match t {
        1 => name.to_string(),
        _ => format!("{name}_{t}"),
    }
}

/// py-tpcc's indexes of a collection (its TABLE_INDEXES), the first of each unique; a
/// descending key is -1.
fn indexes(name: &str) -> Vec<Document> {
    match name {
        ITEM => vec![doc! {"I_W_ID": 1, "I_ID": 1}],
        WAREHOUSE => vec![doc! {"W_ID": 1, "W_TAX": 1}],
        DISTRICT => vec![doc! {"D_W_ID": 1, "D_ID": 1, "D_NEXT_O_ID": 1, "D_TAX": 1}],
        CUSTOMER => vec![
            doc! {"C_W_ID": 1, "C_D_ID": 1, "C_ID": 1},
            doc! {"C_W_ID": 1, "C_D_ID": 1, "C_LAST": 1},
        ],
        STOCK => vec![
            doc! {"S_W_ID": 1, "S_I_ID": 1, "S_QUANTITY": 1},
            doc! {"S_I_ID": 1},
        ],
        ORDERS => vec![
            doc! {"O_W_ID": 1, "O_D_ID": 1, "O_ID": 1, "O_C_ID": 1},
            doc! {"O_C_ID": 1, "O_D_ID": 1, "O_W_ID": 1, "O_ID": -1, "O_CARRIER_ID": 1,
            "O_ENTRY_ID": 1},
        ],
        NEW_ORDER => vec![doc! {"NO_W_ID": 1, "NO_D_ID": 1, "NO_O_ID": 1}],
        _ => Vec::new(),
    }
}

/// Drops copy `t`'s collections and creates them with their indexes, as py-tpcc's `reset`
/// and its index creation before a load.
pub fn create(e: &dyn DocEngine, t: u32) -> anyhow::Result<()> {
    let names: Vec<String> = ALL.iter().map(|n| coll(n, t)).collect();
    e.drop_collections(&names.iter().map(String::as_str).collect::<Vec<_>>())?;
    for (name, full) in ALL.iter().zip(&names) {
        let all = indexes(name);
        let made: Vec<Index> = (all.into_iter().enumerate())
            .map(|(i, keys)| Index {
                name: index_name(&keys),
                keys,
                unique: i == 0,
            })
            .collect();
        if !made.is_empty() {
            e.create_indexes(full, &made)?;
        }
    }
    Ok(())
}

/// The name a driver gives an index: its keys and directions joined by `_`.
fn index_name(keys: &Document) -> String {
    let parts: Vec<String> = keys.iter().map(|(k, v)| format!("{k}_{v}")).collect();
    parts.join("_")
}

/// An integer as py-tpcc's Python writes it: a 32-bit integer.
pub fn int(v: i64) -> Bson {
    Bson::Int32(v as i32)
}

/// Now, as a BSON date (py-tpcc's `datetime.now()`).
pub fn now() -> Bson {
    Bson::DateTime(DateTime::now())
}

/// A numeric field of a document read back, whichever numeric type it was stored as; 0 when
/// it is missing.
pub fn num(d: &RawDocument, key: &str) -> f64 {
    match d.get(key).ok().flatten() {
        Some(v) => match v.as_i32() {
            Some(n) => n as f64,
            None => v
                .as_i64()
                .map(|n| n as f64)
                .or_else(|| v.as_f64())
                .unwrap_or(0.0),
        },
        None => 0.0,
    }
}

/// A string field of a document read back; empty when missing.
pub fn text<'a>(d: &'a RawDocument, key: &str) -> &'a str {
    d.get_str(key).unwrap_or("")
}
