//! TPC-C's initial population on the kv family: the rows sysbench-tpcc's `prepare` draws (the
//! shared generator), each written under its primary key with its secondary index entries, in
//! atomic batches of blind puts of up to 512 KiB (the sql load's statement size).

use super::{cents, key, name_key, now, pk, Table, ORDER_BY_CUSTOMER};
use crate::rows::{encode_row, Col};
use crate::tpcc::gen::{Draws, CUSTOMERS, DISTRICTS};
use crate::tpcc::population::{
    Address, Customer, Item, Order, OrderLine, Place, Rows, Stock, Units,
};
use crate::tpcc::TpccKind;
use fathom_api::kind::Done;
use fathom_api::kv::{BatchOp, KvSession};
use fathom_api::step::Client;
use std::collections::VecDeque;

const BATCH_BYTES: usize = 512 * 1024;

/// Entries of one atomic batch, and the table rows they hold.
#[derive(Default)]
pub struct Batch {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    bytes: usize,
    rows: u64,
}

impl Batch {
    /// Writes the batch; its rows and bytes, as the load step counts them.
    pub fn write(self, session: &mut dyn KvSession) -> anyhow::Result<Done> {
        let ops: Vec<BatchOp> = (self.entries.iter())
            .map(|(k, v)| BatchOp::Put(k, v))
            .collect();
        session.write_batch(&ops)?;
        Ok(Done {
            rows: self.rows,
            bytes: self.bytes as u64,
            ..Done::of(TpccKind::Load)
        })
    }
}

/// Rows as entries of copy `t`, cut into batches.
pub struct Entries {
    t: u32,
    now: i64,
    value: Vec<u8>,
    pub batches: VecDeque<Batch>,
}

impl Entries {
    pub fn new(t: u32) -> Entries {
        Entries {
            t,
            now: now(),
            value: Vec::new(),
            batches: VecDeque::new(),
        }
    }

    /// A row under `key` with its columns, and its index entries.
    fn row(&mut self, key: Vec<u8>, cols: &[Col], index: &[Vec<u8>]) {
        encode_row(cols, &mut self.value);
        let size = key.len() + self.value.len() + index.iter().map(Vec::len).sum::<usize>();
        let full = self
            .batches
            .back()
            .is_none_or(|b| b.bytes + size > BATCH_BYTES);
        if full {
            self.batches.push_back(Batch::default());
        }
        let b = self.batches.back_mut().expect("pushed");
        b.entries.push((key, self.value.clone()));
        b.entries
            .extend(index.iter().map(|k| (k.clone(), Vec::new())));
        b.bytes += size;
        b.rows += 1;
    }
}

/// An address's five columns.
fn address(a: &Address) -> [Col<'_>; 5] {
    [
        Col::Bytes(a.street[0].as_bytes()),
        Col::Bytes(a.street[1].as_bytes()),
        Col::Bytes(a.city.as_bytes()),
        Col::Bytes(a.state.as_bytes()),
        Col::Bytes(a.zip.as_bytes()),
    ]
}

impl Rows for Entries {
    fn item(&mut self, r: &Item) {
        let key = pk(self.t, Table::Item, &[r.i]);
        let cols = [
            Col::Int(r.im),
            Col::Int(cents(r.price)),
            Col::Bytes(r.name.as_bytes()),
            Col::Bytes(r.data.as_bytes()),
        ];
        self.row(key, &cols, &[]);
    }

    fn warehouse(&mut self, r: &Place) {
        let key = pk(self.t, Table::Warehouse, &[r.w]);
        let mut cols = vec![
            Col::Int(cents(300_000.0)),
            Col::Int(cents(r.tax)),
            Col::Bytes(r.name.as_bytes()),
        ];
        cols.extend(address(&r.address));
        self.row(key, &cols, &[]);
    }

    fn district(&mut self, r: &Place) {
        let key = pk(self.t, Table::District, &[r.w, r.d]);
        let mut cols = vec![
            Col::Int(cents(30_000.0)),
            Col::Int(cents(r.tax)),
            Col::Int(3001),
            Col::Bytes(r.name.as_bytes()),
        ];
        cols.extend(address(&r.address));
        self.row(key, &cols, &[]);
    }

    fn customer(&mut self, r: &Customer) {
        let key = pk(self.t, Table::Customer, &[r.w, r.d, r.c]);
        let index = name_key(self.t, (r.w, r.d), &r.last, Some((&r.first, r.c)));
        let mut cols = vec![
            Col::Int(cents(-10.0)),
            Col::Int(cents(10.0)),
            Col::Int(1),
            Col::Int(0),
            Col::Int(cents(r.discount)),
            Col::Int(50_000),
            Col::Int(self.now),
            Col::Bytes(r.first.as_bytes()),
            Col::Bytes(b"OE"),
            Col::Bytes(r.last.as_bytes()),
        ];
        cols.extend(address(&r.address));
        cols.extend([
            Col::Bytes(r.phone.as_bytes()),
            Col::Bytes(r.credit.as_bytes()),
            Col::Bytes(r.data.as_bytes()),
        ]);
        self.row(key, &cols, &[index]);
    }

    fn history(&mut self, w: i64, d: i64, c: i64, data: &str) {
        // History has no key: the customer's, then a time and a source (0, the load).
        let key = pk(self.t, Table::History, &[w, d, c, 0, 0]);
        let cols = [
            Col::Int(d),
            Col::Int(w),
            Col::Int(self.now),
            Col::Int(cents(10.0)),
            Col::Bytes(data.as_bytes()),
        ];
        self.row(key, &cols, &[]);
    }

    fn order(&mut self, r: &Order) {
        let key = pk(self.t, Table::Orders, &[r.w, r.d, r.o]);
        let index = key_of_order_by_customer(self.t, r.w, r.d, r.c, r.o);
        let cols = [
            Col::Int(r.c),
            Col::Int(self.now),
            Col::Int(r.carrier.unwrap_or(0)),
            Col::Int(r.lines),
            Col::Int(1),
        ];
        self.row(key, &cols, &[index]);
    }

    fn stock(&mut self, r: &Stock) {
        let key = pk(self.t, Table::Stock, &[r.w, r.i]);
        let mut cols = vec![Col::Int(r.quantity), Col::Int(0), Col::Int(0), Col::Int(0)];
        cols.extend(r.dist.iter().map(|s| Col::Bytes(s.as_bytes())));
        cols.push(Col::Bytes(r.data.as_bytes()));
        self.row(key, &cols, &[]);
    }

    fn new_orders(&mut self, w: i64) {
        for d in 1..=DISTRICTS {
            for o in 2101..=CUSTOMERS {
                let key = pk(self.t, Table::NewOrders, &[w, d, o]);
                self.row(key, &[], &[]);
            }
        }
    }

    fn order_line(&mut self, r: &OrderLine) {
        let key = pk(self.t, Table::OrderLine, &[r.w, r.d, r.o, r.number]);
        let cols = [
            Col::Int(r.item),
            Col::Int(r.w),
            Col::Int(if r.delivered { self.now } else { 0 }),
            Col::Int(5),
            Col::Int(cents(r.amount)),
            Col::Bytes(r.info.as_bytes()),
        ];
        self.row(key, &cols, &[]);
    }
}

/// The orders-by-customer index entry of order `o` of customer (w, d, c).
pub fn key_of_order_by_customer(t: u32, w: i64, d: i64, c: i64, o: i64) -> Vec<u8> {
    key(t, Table::Orders, ORDER_BY_CUSTOMER, &[w, d, c, o])
}

/// Copy `t`'s items as batches, written by the step before the warehouses load.
pub fn items(d: &mut Draws, t: u32) -> VecDeque<Batch> {
    let mut out = Entries::new(t);
    crate::tpcc::population::items(d, &mut out);
    out.batches
}

/// A client of the kv load: its warehouses, every table copy of each.
pub struct KvLoader<'e> {
    session: Box<dyn KvSession + 'e>,
    draws: Draws,
    units: Units,
    ready: VecDeque<Batch>,
}

impl<'e> KvLoader<'e> {
    pub fn new(
        session: Box<dyn KvSession + 'e>,
        draws: Draws,
        (warehouses, tables): (Vec<i64>, u32),
    ) -> KvLoader<'e> {
        KvLoader {
            session,
            draws,
            units: Units::new(warehouses, tables),
            ready: VecDeque::new(),
        }
    }
}

impl Client for KvLoader<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        while self.ready.is_empty() {
            let Some(u) = self.units.next() else {
                return Ok(None);
            };
            let mut out = Entries::new(u.t);
            u.next_stage(&mut self.draws, &mut out);
            self.ready = out.batches;
        }
        let batch = self.ready.pop_front().expect("refilled");
        batch.write(self.session.as_mut()).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::gen::Follow;
    use crate::tpcc::population::Unit;
    use rand::SeedableRng;

    #[test]
    fn a_warehouse_is_about_half_a_million_rows_in_batches_under_the_limit() {
        let mut d = Draws::new(rand::rngs::SmallRng::seed_from_u64(1), Follow::SysbenchTpcc);
        let mut u = Unit::new(1, 1);
        let (mut rows, mut entries) = (0, 0);
        while !u.done() {
            let mut out = Entries::new(1);
            u.next_stage(&mut d, &mut out);
            for b in out.batches {
                assert!(b.bytes <= BATCH_BYTES);
                rows += b.rows;
                entries += b.entries.len();
            }
        }
        assert!((480_000..520_000).contains(&rows), "{rows}");
        // The 30,000 customers and as many orders have an index entry each.
        assert_eq!(entries as u64, rows + 60_000);
    }
}
