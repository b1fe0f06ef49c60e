//! TPC-C on the kv family (docs/workloads.md, "TPC-C on kv engines"): the nine tables laid out
//! with the shared row mapping (`crate::rows`), one key space per table and copy, keyed by the
//! table's primary key; the two secondary indexes the transactions read (customers by last
//! and first name, orders by customer) kept in the same transaction. Decimals are integers of
//! hundredths (every one of sysbench-tpcc's decimals has two places), times are seconds since
//! the epoch, and a NULL carrier or delivery date is 0.

pub mod check;
pub mod load;
pub mod txn;

use crate::rows::{decode_row, encode_row, index_id, key_int, Col, Key};

/// The tables, numbered for their key spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Warehouse = 0,
    District,
    Customer,
    History,
    NewOrders,
    Orders,
    OrderLine,
    Item,
    Stock,
}

/// Each table's stored row: true for an integer column, false for bytes.
impl Table {
    pub fn shape(self) -> &'static [bool] {
        const T: bool = true;
        const B: bool = false;
        match self {
            // ytd, tax, name, street 1 and 2, city, state, zip
            Table::Warehouse => &[T, T, B, B, B, B, B, B],
            // ytd, tax, next order, name, street 1 and 2, city, state, zip
            Table::District => &[T, T, T, B, B, B, B, B, B],
            // balance, ytd payment, payment count, delivery count, discount, credit limit,
            // since, first, middle, last, street 1 and 2, city, state, zip, phone, credit, data
            Table::Customer => &[T, T, T, T, T, T, T, B, B, B, B, B, B, B, B, B, B, B],
            // district, warehouse (where paid), date, amount, data
            Table::History => &[T, T, T, T, B],
            // an entry with no columns
            Table::NewOrders => &[],
            // customer, entry date, carrier, line count, all local
            Table::Orders => &[T, T, T, T, T],
            // item, supplying warehouse, delivery date, quantity, amount, district info
            Table::OrderLine => &[T, T, T, T, T, B],
            // image id, price, name, data
            Table::Item => &[T, T, B, B],
            // quantity, ytd, order count, remote count, dist 01 … 10, data
            Table::Stock => &[T, T, T, T, B, B, B, B, B, B, B, B, B, B, B],
        }
    }
}

/// Column positions the transactions read and write.
pub mod col {
    pub const YTD: usize = 0;
    pub const TAX: usize = 1;
    pub const NAME: usize = 2;
    pub const D_NEXT_O_ID: usize = 2;
    pub const D_NAME: usize = 3;
    pub const C_BALANCE: usize = 0;
    pub const C_YTD_PAYMENT: usize = 1;
    pub const C_DELIVERY_CNT: usize = 3;
    pub const C_DISCOUNT: usize = 4;
    pub const C_CREDIT: usize = 16;
    pub const C_DATA: usize = 17;
    pub const O_C_ID: usize = 0;
    pub const O_CARRIER_ID: usize = 2;
    pub const O_OL_CNT: usize = 3;
    pub const OL_I_ID: usize = 0;
    pub const OL_DELIVERY_D: usize = 2;
    pub const OL_AMOUNT: usize = 4;
    pub const I_PRICE: usize = 1;
    pub const S_QUANTITY: usize = 0;
    /// District `d`'s info (1-based).
    pub const fn s_dist(d: i64) -> usize {
        3 + d as usize
    }
}

/// The secondary indexes, after each table's primary (index 0).
pub const CUSTOMER_BY_NAME: u32 = 1;
pub const ORDER_BY_CUSTOMER: u32 = 1;

/// The index id of `index` of `table` in copy `t` (1-based): copies apart by 16 tables.
fn space(t: u32, table: Table, index: u32) -> u32 {
    index_id(t * 16 + table as u32, index)
}

/// Bytes of a key before its first column.
pub const KEY_HEAD: usize = 4;

/// A key of `index` of `table` in copy `t` with integer columns `ints`.
pub fn key(t: u32, table: Table, index: u32, ints: &[i64]) -> Vec<u8> {
    let mut k = Key::default();
    k.start(space(t, table, index));
    for &v in ints {
        k.int(v);
    }
    k.as_slice().to_vec()
}

/// The primary key of `table` in copy `t`.
pub fn pk(t: u32, table: Table, ints: &[i64]) -> Vec<u8> {
    key(t, table, 0, ints)
}

/// The customer-by-name index's key: (warehouse, district, last, first, id), or its prefix
/// for a last name when `first` is None.
pub fn name_key(t: u32, (w, d): (i64, i64), last: &str, first: Option<(&str, i64)>) -> Vec<u8> {
    let mut k = Key::default();
    k.start(space(t, Table::Customer, CUSTOMER_BY_NAME))
        .int(w)
        .int(d)
        .bytes(last.as_bytes());
    if let Some((first, c)) = first {
        k.bytes(first.as_bytes()).int(c);
    }
    k.as_slice().to_vec()
}

/// The integer column `n` (0-based) of a key of integer columns.
pub fn key_col(key: &[u8], n: usize) -> i64 {
    key_int(key, KEY_HEAD + 8 * n).unwrap_or(0)
}

/// The last integer of a key (the customer id of a name index entry).
pub fn key_last(key: &[u8]) -> i64 {
    key.len()
        .checked_sub(8)
        .and_then(|at| key_int(key, at))
        .unwrap_or(0)
}

/// A stored row's columns.
pub struct Stored<'a> {
    pub cols: Vec<Col<'a>>,
}

impl<'a> Stored<'a> {
    /// The row stored as `value`; an empty value (a row read and not found) is one of
    /// zeros and empty text.
    pub fn decode(table: Table, value: &'a [u8]) -> anyhow::Result<Stored<'a>> {
        if value.is_empty() {
            let zero = |&int: &bool| if int { Col::Int(0) } else { Col::Bytes(b"") };
            let cols = table.shape().iter().map(zero).collect();
            return Ok(Stored { cols });
        }
        let cols = decode_row(value, table.shape())
            .ok_or_else(|| anyhow::anyhow!("a {table:?} row is malformed"))?;
        Ok(Stored { cols })
    }

    pub fn int(&self, i: usize) -> i64 {
        match self.cols[i] {
            Col::Int(v) => v,
            Col::Bytes(_) => 0,
        }
    }

    pub fn bytes(&self, i: usize) -> &'a [u8] {
        match self.cols[i] {
            Col::Bytes(b) => b,
            Col::Int(_) => b"",
        }
    }

    pub fn text(&self, i: usize) -> &'a str {
        std::str::from_utf8(self.bytes(i)).unwrap_or("")
    }

    /// Sets column `i` to an integer.
    pub fn set(&mut self, i: usize, v: i64) {
        self.cols[i] = Col::Int(v);
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_row(&self.cols, out);
    }
}

/// A decimal as hundredths, rounded as the SQL column rounds it.
pub fn cents(v: f64) -> i64 {
    (v * 100.0).round() as i64
}

/// Now, as stored: seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_by_their_columns_and_give_them_back() {
        let a = pk(1, Table::OrderLine, &[1, 2, 3000, 4]);
        let b = pk(1, Table::OrderLine, &[1, 2, 3001, 1]);
        let other_copy = pk(2, Table::Warehouse, &[1]);
        assert!(a < b && b < other_copy);
        assert_eq!([0, 1, 2, 3].map(|n| key_col(&a, n)), [1, 2, 3000, 4]);
        // A last name's entries are under its prefix, in first-name order.
        let prefix = name_key(1, (1, 2), "BARBARBAR", None);
        let ann = name_key(1, (1, 2), "BARBARBAR", Some(("ann", 7)));
        let bob = name_key(1, (1, 2), "BARBARBAR", Some(("bob", 3)));
        let longer = name_key(1, (1, 2), "BARBARBARX", Some(("aaa", 1)));
        assert!(ann.starts_with(&prefix) && bob.starts_with(&prefix));
        assert!(!longer.starts_with(&prefix));
        assert!(ann < bob);
        assert_eq!((key_last(&ann), key_last(&bob)), (7, 3));
    }

    #[test]
    fn a_row_round_trips_and_an_absent_one_reads_as_zeros() {
        let cols = [
            Col::Int(1),
            Col::Int(-2),
            Col::Int(3),
            Col::Int(4),
            Col::Int(5),
        ];
        let mut value = Vec::new();
        encode_row(&cols, &mut value);
        let mut row = Stored::decode(Table::Orders, &value).unwrap();
        assert_eq!(row.int(col::O_OL_CNT), 4);
        row.set(col::O_CARRIER_ID, 9);
        let mut again = Vec::new();
        row.encode(&mut again);
        assert_eq!(
            Stored::decode(Table::Orders, &again)
                .unwrap()
                .int(col::O_CARRIER_ID),
            9
        );
        let none = Stored::decode(Table::Customer, b"").unwrap();
        assert_eq!((none.int(col::C_BALANCE), none.text(col::C_DATA)), (0, ""));
        assert!(Stored::decode(Table::Orders, &value[..12]).is_err());
        assert_eq!(cents(0.125), 13);
    }
}
