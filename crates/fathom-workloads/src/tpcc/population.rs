//! TPC-C's initial population as sysbench-tpcc's `prepare` draws it, row by row and in its
//! order of draws, handed to a [`Rows`] that writes it: as multi-row INSERTs on the sql family
//! (`load`), as keys and values on the kv family (`kv::load`). One generator, so both families
//! hold the same data for the same seed.

use super::gen::{last_name, Draws, CUSTOMERS, DISTRICTS, ITEMS};
use std::collections::VecDeque;

/// A street address: street 1 and 2, city, state, zip.
pub struct Address {
    pub street: [String; 2],
    pub city: String,
    pub state: String,
    pub zip: String,
}

impl Address {
    fn draw(d: &mut Draws) -> Address {
        Address {
            street: [
                d.string("street1-@@@@@@@@@@"),
                d.string("street2-@@@@@@@@@@"),
            ],
            city: d.string("city-@@@@@@@@@@"),
            state: d.string("@@"),
            zip: d.string("zip-#####"),
        }
    }
}

/// A warehouse or a district: its name, address and tax (their YTD and next order are fixed).
pub struct Place {
    pub w: i64,
    /// The district; 0 for the warehouse.
    pub d: i64,
    pub name: String,
    pub address: Address,
    pub tax: f64,
}

pub struct Customer {
    pub c: i64,
    pub d: i64,
    pub w: i64,
    pub first: String,
    pub last: String,
    pub address: Address,
    pub phone: String,
    pub credit: &'static str,
    pub discount: f64,
    pub data: String,
}

pub struct Order {
    pub o: i64,
    pub d: i64,
    pub w: i64,
    pub c: i64,
    /// None for the undelivered orders (above 2100).
    pub carrier: Option<i64>,
    pub lines: i64,
}

pub struct OrderLine {
    pub o: i64,
    pub d: i64,
    pub w: i64,
    pub number: i64,
    pub item: i64,
    pub delivered: bool,
    pub amount: f64,
    pub info: String,
}

pub struct Stock {
    pub i: i64,
    pub w: i64,
    pub quantity: i64,
    pub dist: Vec<String>,
    pub data: String,
}

pub struct Item {
    pub i: i64,
    pub im: i64,
    pub price: f64,
    pub name: String,
    pub data: String,
}

/// Where the generated rows go, one table at a time.
pub trait Rows {
    fn item(&mut self, r: &Item);
    fn warehouse(&mut self, r: &Place);
    fn district(&mut self, r: &Place);
    fn customer(&mut self, r: &Customer);
    /// A history row of customer (w, d, c), paid 10 at its own district.
    fn history(&mut self, w: i64, d: i64, c: i64, data: &str);
    fn order(&mut self, r: &Order);
    fn stock(&mut self, r: &Stock);
    /// Warehouse `w`'s new orders: every order above 2100 of each district.
    fn new_orders(&mut self, w: i64);
    fn order_line(&mut self, r: &OrderLine);
}

/// The first `n` characters (sysbench-tpcc's `sub(1, n)`; its strings are ASCII).
fn cut(s: &str, n: usize) -> String {
    s[..s.len().min(n)].to_string()
}

/// The 100,000 items of one table copy.
pub fn items(d: &mut Draws, out: &mut dyn Rows) {
    for i in 1..=ITEMS {
        let im = d.uniform(1, 10_000);
        let price = d.unit() * 100.0 + 1.0;
        // Not the specification's i_name: sysbench-tpcc's, "for a better compression".
        let name = format!("item-{im}-{price:.6}-{}", d.string("@@@@@"));
        let data = format!("data-{name}-{}", d.string("@@@@@"));
        let (name, data) = (cut(&name, 24), cut(&data, 50));
        out.item(&Item {
            i,
            im,
            price,
            name,
            data,
        });
    }
}

/// The stages of one warehouse's load, one table each, in sysbench-tpcc's order.
pub const STAGES: usize = 8;

/// Stock rows generated at a time (a tenth of the items).
const STOCK_PART: i64 = ITEMS / 10;

/// One warehouse's rows of one table copy, generated stage by stage, and a large stage part
/// by part (a district's rows, or a tenth of the stock) so a loader holds one part at a time.
/// The draws come in sysbench-tpcc's order whatever the parts.
pub struct Unit {
    pub t: u32,
    pub w: i64,
    /// The next stage: warehouse, district, customer, history, orders, stock, new_orders,
    /// order_line.
    pub stage: usize,
    /// The stage's next part: a district (from 0), or a tenth of the stock.
    part: i64,
    /// The orders' permutation of the customers, drawn once for every district.
    tab: Vec<i64>,
    /// Each order's line count, by district and order, for its order lines.
    lines: Vec<i64>,
}

impl Unit {
    pub fn new(t: u32, w: i64) -> Unit {
        Unit {
            t,
            w,
            stage: 0,
            part: 0,
            tab: Vec::new(),
            lines: Vec::new(),
        }
    }

    pub fn done(&self) -> bool {
        self.stage == STAGES
    }

    /// Generates the next part of the current stage into `out`; true when that part ended
    /// the stage (its table is complete).
    pub fn next_stage(&mut self, d: &mut Draws, out: &mut dyn Rows) -> bool {
        let w = self.w;
        let did = self.part + 1;
        let parts = match self.stage {
            0 => {
                let name = d.string("name-@@@@@");
                let address = Address::draw(d);
                let tax = d.unit() * 0.2;
                out.warehouse(&Place {
                    w,
                    d: 0,
                    name,
                    address,
                    tax,
                });
                1
            }
            1 => {
                for did in 1..=DISTRICTS {
                    let name = d.string("name-@@@@@");
                    let address = Address::draw(d);
                    let tax = d.unit() * 0.2;
                    out.district(&Place {
                        w,
                        d: did,
                        name,
                        address,
                        tax,
                    });
                }
                1
            }
            2 => {
                customers(d, (w, did), out);
                DISTRICTS
            }
            3 => {
                for cid in 1..=CUSTOMERS {
                    let n = d.uniform(12, 24);
                    out.history(w, did, cid, &d.letters(n));
                }
                DISTRICTS
            }
            4 => {
                self.orders(d, did, out);
                DISTRICTS
            }
            5 => {
                let first = self.part * STOCK_PART + 1;
                stock(d, w, first..=first + STOCK_PART - 1, out);
                ITEMS / STOCK_PART
            }
            6 => {
                out.new_orders(w);
                1
            }
            _ => {
                self.order_lines(d, did, out);
                DISTRICTS
            }
        };
        self.part += 1;
        let ended = self.part == parts;
        if ended {
            (self.stage, self.part) = (self.stage + 1, 0);
        }
        ended
    }

    /// District `did`'s orders; the first district draws the customers' permutation (
    /// sysbench-tpcc's `tab`) that every district uses.
    fn orders(&mut self, d: &mut Draws, did: i64, out: &mut dyn Rows) {
        if did == 1 {
            self.tab = (1..=CUSTOMERS).collect();
            for i in 0..CUSTOMERS as usize {
                let j = d.uniform(i as i64, CUSTOMERS - 1) as usize;
                self.tab.swap(i, j);
            }
            self.lines.clear();
        }
        for oid in 1..=CUSTOMERS {
            let lines = d.uniform(5, 15);
            self.lines.push(lines);
            let carrier = (oid < 2101).then(|| d.uniform(1, 10));
            out.order(&Order {
                o: oid,
                d: did,
                w: self.w,
                c: self.tab[oid as usize - 1],
                carrier,
                lines,
            });
        }
    }

    /// District `did`'s order lines.
    fn order_lines(&mut self, d: &mut Draws, did: i64, out: &mut dyn Rows) {
        let first = (did as usize - 1) * CUSTOMERS as usize;
        for oid in 1..=CUSTOMERS {
            let count = self
                .lines
                .get(first + oid as usize - 1)
                .copied()
                .unwrap_or(0);
            for number in 1..=count {
                let item = d.uniform(1, ITEMS);
                let delivered = oid < 2101;
                let amount = if delivered { 0.0 } else { d.unit() * 9999.99 };
                out.order_line(&OrderLine {
                    o: oid,
                    d: did,
                    w: self.w,
                    number,
                    item,
                    delivered,
                    amount,
                    info: d.letters(24),
                });
            }
        }
    }
}

/// A load client's units: every table copy of each of its warehouses, in order.
pub struct Units(VecDeque<Unit>);

impl Units {
    pub fn new(warehouses: Vec<i64>, tables: u32) -> Units {
        let all = (warehouses.into_iter())
            .flat_map(|w| (1..=tables).map(move |t| Unit::new(t, w)))
            .collect();
        Units(all)
    }

    /// The first unit with a stage left to generate; None when every unit is done.
    pub fn next(&mut self) -> Option<&mut Unit> {
        while self.0.front().is_some_and(Unit::done) {
            self.0.pop_front();
        }
        self.0.front_mut()
    }
}

/// District `did`'s customers.
fn customers(d: &mut Draws, (w, did): (i64, i64), out: &mut dyn Rows) {
    for cid in 1..=CUSTOMERS {
        let last = match cid {
            1..=1000 => last_name(cid - 1),
            _ => last_name(d.nurand(255, 0, 999)),
        };
        let first_len = d.uniform(2, 10);
        let first = d.string(&format!("first-{}", "@".repeat(first_len as usize)));
        let address = Address::draw(d);
        let phone = d.string(&"#".repeat(16));
        let credit = if d.uniform(1, 100) > 10 { "GC" } else { "BC" };
        let discount = d.unit() * 0.5;
        let n = d.uniform(300, 500);
        let data = d.letters(n);
        out.customer(&Customer {
            c: cid,
            d: did,
            w,
            first,
            last,
            address,
            phone,
            credit,
            discount,
            data,
        });
    }
}

/// The stock of items `items`.
fn stock(d: &mut Draws, w: i64, items: std::ops::RangeInclusive<i64>, out: &mut dyn Rows) {
    for i in items {
        let quantity = d.uniform(10, 100);
        let dist = (0..10).map(|_| d.letters(24)).collect();
        let n = d.uniform(26, 50);
        let data = d.letters(n);
        out.stock(&Stock {
            i,
            w,
            quantity,
            dist,
            data,
        });
    }
}
