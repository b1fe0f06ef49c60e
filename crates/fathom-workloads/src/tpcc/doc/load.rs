//! TPC-C's initial population on the document family: the rows of the shared generator as
//! py-tpcc's loader inserts them — items and stock 500 documents an `insert`, the other
//! tables one `insert` per district — with each order's lines embedded in the order, so the
//! orders wait for the warehouse's order lines (generated last) before they are written.

use super::WAREHOUSE;
use super::{coll, int, now, CUSTOMER, DISTRICT, HISTORY, ITEM, NEW_ORDER, ORDERS, STOCK};
use crate::tpcc::gen::{Draws, CUSTOMERS, DISTRICTS};
use crate::tpcc::population::{Customer, Item, Order, OrderLine, Place, Rows, Stock, Units};
use crate::tpcc::TpccKind;
use fathom_api::doc::bson::{doc, Bson, Document};
use fathom_api::doc::DocSession;
use fathom_api::kind::Done;
use fathom_api::step::Client;
use std::collections::VecDeque;

/// py-tpcc's loader's batch of items and stock.
const BATCH: usize = 500;

/// Documents of one `insert`.
pub struct Batch {
    coll: String,
    docs: Vec<Document>,
    /// What the documents are grouped by: the district, or the batch's number.
    group: i64,
}

impl Batch {
    /// Inserts the batch; its documents, as the load step counts rows.
    pub fn write(self, s: &mut dyn DocSession) -> anyhow::Result<Done> {
        s.insert(&self.coll, &self.docs, true)?;
        Ok(Done {
            rows: self.docs.len() as u64,
            ..Done::of(TpccKind::Load)
        })
    }
}

/// An order as generated, until its lines are.
struct Pending {
    o: i64,
    c: i64,
    carrier: i64,
    count: i64,
    lines: Vec<Document>,
}

/// Rows of copy `t` as documents in batches.
pub struct Docs {
    t: u32,
    now: Bson,
    pub batches: VecDeque<Batch>,
    /// The warehouse's orders by district, until their lines are generated.
    orders: Vec<Vec<Pending>>,
}

impl Docs {
    pub fn new(t: u32) -> Docs {
        Docs {
            t,
            now: now(),
            batches: VecDeque::new(),
            orders: Vec::new(),
        }
    }

    /// Adds `doc` to the last batch when it is of the same collection and group, else to a
    /// new one.
    fn push(&mut self, name: &str, group: i64, doc: Document) {
        let name = coll(name, self.t);
        let same = (self.batches.back()).is_some_and(|b| b.coll == name && b.group == group);
        if !same {
            self.batches.push_back(Batch {
                coll: name,
                docs: Vec::new(),
                group,
            });
        }
        self.batches.back_mut().expect("pushed").docs.push(doc);
    }

    /// The warehouse's orders with their lines, one batch per district.
    pub fn flush_orders(&mut self, w: i64) {
        let all = std::mem::take(&mut self.orders);
        for (d, orders) in (1..).zip(all) {
            for p in orders {
                let order = doc! {
                    "O_ID": int(p.o), "O_C_ID": int(p.c), "O_D_ID": int(d), "O_W_ID": int(w),
                    "O_ENTRY_D": self.now.clone(), "O_CARRIER_ID": int(p.carrier),
                    "O_OL_CNT": int(p.count), "O_ALL_LOCAL": int(1), "ORDER_LINE": p.lines,
                };
                self.push(ORDERS, d, order);
            }
        }
    }
}

/// A place's address fields, prefixed `W_` or `D_`.
fn place(prefix: &str, r: &Place) -> Document {
    let a = &r.address;
    let mut d = Document::new();
    d.insert(format!("{prefix}NAME"), r.name.as_str());
    d.insert(format!("{prefix}STREET_1"), a.street[0].as_str());
    d.insert(format!("{prefix}STREET_2"), a.street[1].as_str());
    d.insert(format!("{prefix}CITY"), a.city.as_str());
    d.insert(format!("{prefix}STATE"), a.state.as_str());
    d.insert(format!("{prefix}ZIP"), a.zip.as_str());
    d.insert(format!("{prefix}TAX"), r.tax);
    d
}

impl Rows for Docs {
    fn item(&mut self, r: &Item) {
        let d = doc! {
            "I_ID": int(r.i), "I_IM_ID": int(r.im), "I_NAME": r.name.as_str(), "I_PRICE": r.price,
            "I_DATA": r.data.as_str(), "I_W_ID": int(0),
        };
        self.push(ITEM, (r.i - 1) / BATCH as i64, d);
    }

    fn warehouse(&mut self, r: &Place) {
        let mut d = doc! {"W_ID": int(r.w)};
        d.extend(place("W_", r));
        d.insert("W_YTD", 300_000.0);
        self.push(WAREHOUSE, 0, d);
    }

    fn district(&mut self, r: &Place) {
        let mut d = doc! {"D_ID": int(r.d), "D_W_ID": int(r.w)};
        d.extend(place("D_", r));
        d.insert("D_YTD", 30_000.0);
        d.insert("D_NEXT_O_ID", int(CUSTOMERS + 1));
        self.push(DISTRICT, 0, d);
    }

    fn customer(&mut self, r: &Customer) {
        let a = &r.address;
        let d = doc! {
            "C_ID": int(r.c), "C_D_ID": int(r.d), "C_W_ID": int(r.w), "C_FIRST": r.first.as_str(),
            "C_MIDDLE": "OE", "C_LAST": r.last.as_str(), "C_STREET_1": a.street[0].as_str(),
            "C_STREET_2": a.street[1].as_str(), "C_CITY": a.city.as_str(), "C_STATE": a.state.as_str(), "C_ZIP": a.zip.as_str(),
            "C_PHONE": r.phone.as_str(), "C_SINCE": self.now.clone(), "C_CREDIT": r.credit,
            "C_CREDIT_LIM": 50_000.0, "C_DISCOUNT": r.discount, "C_BALANCE": -10.0,
            "C_YTD_PAYMENT": 10.0, "C_PAYMENT_CNT": int(1), "C_DELIVERY_CNT": int(0),
            "C_DATA": r.data.as_str(),
        };
        self.push(CUSTOMER, r.d, d);
    }

    fn history(&mut self, w: i64, d: i64, c: i64, data: &str) {
        let h = doc! {
            "H_C_ID": int(c), "H_C_D_ID": int(d), "H_C_W_ID": int(w), "H_D_ID": int(d),
            "H_W_ID": int(w), "H_DATE": self.now.clone(), "H_AMOUNT": 10.0, "H_DATA": data,
        };
        self.push(HISTORY, d, h);
    }

    fn order(&mut self, r: &Order) {
        let at = r.d as usize - 1;
        if self.orders.len() <= at {
            self.orders.resize_with(at + 1, Vec::new);
        }
        self.orders[at].push(Pending {
            o: r.o,
            c: r.c,
            carrier: r.carrier.unwrap_or(0),
            count: r.lines,
            lines: Vec::new(),
        });
    }

    fn stock(&mut self, r: &Stock) {
        let mut d = doc! {"S_I_ID": int(r.i), "S_W_ID": int(r.w), "S_QUANTITY": int(r.quantity)};
        for (i, dist) in (1..).zip(&r.dist) {
            d.insert(format!("S_DIST_{i:02}"), dist.as_str());
        }
        d.insert("S_YTD", int(0));
        d.insert("S_ORDER_CNT", int(0));
        d.insert("S_REMOTE_CNT", int(0));
        d.insert("S_DATA", r.data.as_str());
        self.push(STOCK, (r.i - 1) / BATCH as i64, d);
    }

    fn new_orders(&mut self, w: i64) {
        for d in 1..=DISTRICTS {
            for o in 2101..=CUSTOMERS {
                let n = doc! {"NO_O_ID": int(o), "NO_D_ID": int(d), "NO_W_ID": int(w)};
                self.push(NEW_ORDER, d, n);
            }
        }
    }

    /// A line inside its order, with the fields py-tpcc's loader keeps there.
    fn order_line(&mut self, r: &OrderLine) {
        let delivered = match r.delivered {
            true => self.now.clone(),
            false => Bson::Null,
        };
        let line = doc! {
            "OL_I_ID": int(r.item), "OL_SUPPLY_W_ID": int(r.w), "OL_DELIVERY_D": delivered,
            "OL_QUANTITY": int(5), "OL_AMOUNT": r.amount, "OL_DIST_INFO": r.info.as_str(),
        };
        let order =
            (self.orders.get_mut(r.d as usize - 1)).and_then(|os| os.get_mut(r.o as usize - 1));
        if let Some(p) = order {
            p.lines.push(line);
        }
    }
}

/// Copy `t`'s items as batches, written by the step before the warehouses load.
pub fn items(d: &mut Draws, t: u32) -> VecDeque<Batch> {
    let mut out = Docs::new(t);
    crate::tpcc::population::items(d, &mut out);
    out.batches
}

/// A client of the document load: its warehouses, every table copy of each.
pub struct DocLoader<'e> {
    session: Box<dyn DocSession + 'e>,
    draws: Draws,
    units: Units,
    /// The unit being generated: its copy and warehouse, and its rows so far.
    current: Option<(u32, i64, Docs)>,
    ready: VecDeque<Batch>,
}

impl<'e> DocLoader<'e> {
    pub fn new(
        session: Box<dyn DocSession + 'e>,
        draws: Draws,
        (warehouses, tables): (Vec<i64>, u32),
    ) -> DocLoader<'e> {
        DocLoader {
            session,
            draws,
            units: Units::new(warehouses, tables),
            current: None,
            ready: VecDeque::new(),
        }
    }
}

impl Client for DocLoader<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        while self.ready.is_empty() {
            let Some(u) = self.units.next() else {
                return Ok(None);
            };
            let (t, w) = (u.t, u.w);
            let same = matches!(&self.current, Some((ct, cw, _)) if (*ct, *cw) == (t, w));
            if !same {
                self.current = Some((t, w, Docs::new(t)));
            }
            let docs = &mut self.current.as_mut().expect("set").2;
            u.next_stage(&mut self.draws, docs);
            if u.done() {
                docs.flush_orders(w);
            }
            self.ready.append(&mut docs.batches);
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
    fn a_warehouse_embeds_its_order_lines_in_its_orders() {
        let mut d = Draws::new(rand::rngs::SmallRng::seed_from_u64(1), Follow::SysbenchTpcc);
        let mut u = Unit::new(1, 1);
        let mut out = Docs::new(1);
        while !u.done() {
            u.next_stage(&mut d, &mut out);
        }
        out.flush_orders(1);
        let count = |name: &str| -> usize {
            (out.batches.iter())
                .filter(|b| b.coll == name)
                .map(|b| b.docs.len())
                .sum()
        };
        assert_eq!(count(ORDERS), 30_000);
        assert_eq!(count(CUSTOMER), 30_000);
        assert_eq!(count(NEW_ORDER), 9_000);
        assert_eq!(count(STOCK), 100_000);
        // One insert per district of orders, and every order holds its O_OL_CNT lines.
        let orders: Vec<_> = out.batches.iter().filter(|b| b.coll == ORDERS).collect();
        assert_eq!(orders.len(), 10);
        for o in orders.iter().flat_map(|b| &b.docs) {
            let lines = o.get_array("ORDER_LINE").unwrap().len() as i32;
            assert_eq!(lines, o.get_i32("O_OL_CNT").unwrap());
        }
    }
}
