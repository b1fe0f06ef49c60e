//! TPC-C's initial population as sysbench-tpcc's `prepare` writes it: per table copy the
//! 100,000 items (`items`), then per warehouse its row, 10 districts, 30,000 customers and as
//! many history rows and orders, 100,000 stock rows, the 9,000 new orders and about 300,000
//! order lines, each table in multi-row INSERTs of up to 512 KiB of SQL text (sysbench's bulk
//! insert buffer), values and quirks as its Lua writes them.

use super::gen::{last_name, Draws, CUSTOMERS, DISTRICTS, ITEMS};
use super::TpccKind;
use fathom_core::driver::{Client, Done};
use fathom_core::sql::SqlConn;
use std::collections::VecDeque;

/// sysbench's bulk insert buffer: a statement grows until the next row would pass it.
const BULK_BYTES: usize = 512 * 1024;

/// Rows appended to one INSERT until it is full, then the next.
struct Bulk {
    head: String,
    sql: String,
    rows: u64,
    out: VecDeque<(String, u64)>,
}

impl Bulk {
    fn new(head: String) -> Bulk {
        Bulk {
            head,
            sql: String::new(),
            rows: 0,
            out: VecDeque::new(),
        }
    }

    fn row(&mut self, row: &str) {
        if self.rows > 0 && self.sql.len() + row.len() + 2 > BULK_BYTES {
            self.flush();
        }
        if self.rows == 0 {
            self.sql.push_str(&self.head);
        } else {
            self.sql.push(',');
        }
        self.sql.push_str(row);
        self.rows += 1;
    }

    fn flush(&mut self) {
        if self.rows > 0 {
            self.out.push_back((
                std::mem::take(&mut self.sql),
                std::mem::take(&mut self.rows),
            ));
        }
    }

    /// The statements, the last one flushed.
    fn done(mut self) -> VecDeque<(String, u64)> {
        self.flush();
        self.out
    }
}

/// The INSERTs of copy `t` of the item table.
pub fn items(d: &mut Draws, t: u32) -> VecDeque<(String, u64)> {
    let mut b = Bulk::new(format!(
        "INSERT INTO item{t} (i_id, i_im_id, i_name, i_price, i_data) values"
    ));
    for j in 1..=ITEMS {
        let im = d.uniform(1, 10_000);
        let price = d.unit() * 100.0 + 1.0;
        // Not the specification's i_name: sysbench-tpcc's, "for a better compression".
        let name = format!("item-{im}-{price:.6}-{}", d.string("@@@@@"));
        let data = format!("data-{name}-{}", d.string("@@@@@"));
        b.row(&format!(
            "({j},{im},'{}',{price:.6},'{}')",
            cut(&name, 24),
            cut(&data, 50)
        ));
    }
    b.done()
}

/// The first `n` characters (sysbench-tpcc's `sub(1, n)`; its strings are ASCII).
fn cut(s: &str, n: usize) -> &str {
    &s[..s.len().min(n)]
}

/// One warehouse's rows in one table copy, table by table.
struct Unit {
    t: u32,
    w: i64,
    /// The next table to write: warehouse, district, customer, history, orders, stock,
    /// new_orders, order_line.
    stage: usize,
    /// Each order's line count, by district and order, for its order lines.
    lines: Vec<i64>,
}

/// A client of the load: the warehouses given to it, every table copy of each.
pub struct Loader<'e> {
    conn: Box<dyn SqlConn + 'e>,
    draws: Draws,
    now: &'static str,
    units: VecDeque<Unit>,
    ready: VecDeque<(String, u64)>,
}

impl<'e> Loader<'e> {
    pub fn new(
        conn: Box<dyn SqlConn + 'e>,
        draws: Draws,
        now: &'static str,
        (warehouses, tables): (Vec<i64>, u32),
    ) -> Loader<'e> {
        let units = (warehouses.into_iter())
            .flat_map(|w| {
                (1..=tables).map(move |t| Unit {
                    t,
                    w,
                    stage: 0,
                    lines: Vec::new(),
                })
            })
            .collect();
        Loader {
            conn,
            draws,
            now,
            units,
            ready: VecDeque::new(),
        }
    }

    /// The statements of the current unit's next table; false when every unit is done.
    fn refill(&mut self) -> bool {
        while self.ready.is_empty() {
            let Some(u) = self.units.front_mut() else {
                return false;
            };
            if u.stage == 8 {
                self.units.pop_front();
                continue;
            }
            self.ready = stage(&mut self.draws, u, self.now);
            u.stage += 1;
        }
        true
    }
}

impl Client for Loader<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if !self.refill() {
            return Ok(None);
        }
        let (sql, rows) = self.ready.pop_front().expect("refilled");
        self.conn.exec(&sql)?;
        Ok(Some(Done {
            rows,
            bytes: sql.len() as u64,
            ..Done::of(TpccKind::Load)
        }))
    }
}

/// The INSERTs of the unit's table at `u.stage`.
fn stage(d: &mut Draws, u: &mut Unit, now: &str) -> VecDeque<(String, u64)> {
    let (t, w) = (u.t, u.w);
    let address = |d: &mut Draws| {
        format!(
            "'{}','{}','{}','{}','{}'",
            d.string("street1-@@@@@@@@@@"),
            d.string("street2-@@@@@@@@@@"),
            d.string("city-@@@@@@@@@@"),
            d.string("@@"),
            d.string("zip-#####")
        )
    };
    match u.stage {
        0 => {
            let mut b = Bulk::new(format!(
                "INSERT INTO warehouse{t} (w_id, w_name, w_street_1, w_street_2, w_city, \
                 w_state, w_zip, w_tax, w_ytd) values"
            ));
            let name = d.string("name-@@@@@");
            let addr = address(d);
            b.row(&format!(
                "({w}, '{name}',{addr}, {:.6},300000)",
                d.unit() * 0.2
            ));
            b.done()
        }
        1 => {
            let mut b = Bulk::new(format!(
                "INSERT INTO district{t} (d_id, d_w_id, d_name, d_street_1, d_street_2, \
                 d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id) values"
            ));
            for did in 1..=DISTRICTS {
                let name = d.string("name-@@@@@");
                let addr = address(d);
                let tax = d.unit() * 0.2;
                b.row(&format!(
                    "({did}, {w}, '{name}',{addr}, {tax:.6},30000,3001)"
                ));
            }
            b.done()
        }
        2 => customers(d, t, w, now),
        3 => {
            let mut b = Bulk::new(format!(
                "INSERT INTO history{t} (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, \
                 h_amount, h_data) values"
            ));
            for did in 1..=DISTRICTS {
                for cid in 1..=CUSTOMERS {
                    let n = d.uniform(12, 24);
                    let data = d.letters(n);
                    b.row(&format!(
                        "({cid}, {did}, {w}, {did}, {w}, {now}, 10, '{data}' )"
                    ));
                }
            }
            b.done()
        }
        4 => orders(d, u, now),
        5 => stock(d, t, w),
        6 => VecDeque::from([(
            format!(
                "INSERT INTO new_orders{t} (no_o_id, no_d_id, no_w_id) SELECT o_id, o_d_id, \
                 o_w_id FROM orders{t} WHERE o_id>2100 and o_w_id={w}"
            ),
            (DISTRICTS * 900) as u64,
        )]),
        _ => order_lines(d, u, now),
    }
}

fn customers(d: &mut Draws, t: u32, w: i64, now: &str) -> VecDeque<(String, u64)> {
    let mut b = Bulk::new(format!(
        "INSERT INTO customer{t} (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, \
         c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, \
         c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, \
         c_data) values"
    ));
    for did in 1..=DISTRICTS {
        for cid in 1..=CUSTOMERS {
            let last = match cid {
                1..=1000 => last_name(cid - 1),
                _ => last_name(d.nurand(255, 0, 999)),
            };
            let first_len = d.uniform(2, 10);
            let first = d.string(&format!("first-{}", "@".repeat(first_len as usize)));
            let s1 = d.string("street1-@@@@@@@@@@");
            let s2 = d.string("street2-@@@@@@@@@@");
            let city = d.string("city-@@@@@@@@@@");
            let state = d.string("@@");
            let zip = d.string("zip-#####");
            let phone = d.string(&"#".repeat(16));
            let credit = if d.uniform(1, 100) > 10 { "GC" } else { "BC" };
            let discount = d.unit() * 0.5;
            let n = d.uniform(300, 500);
            let data = d.letters(n);
            b.row(&format!(
                "({cid}, {did}, {w}, '{first}','OE','{last}','{s1}', '{s2}', '{city}', \
                 '{state}', '{zip}','{phone}',{now},'{credit}',50000,{discount:.6},-10,10,1,0,\
                 '{data}' )"
            ));
        }
    }
    b.done()
}

fn orders(d: &mut Draws, u: &mut Unit, now: &str) -> VecDeque<(String, u64)> {
    let (t, w) = (u.t, u.w);
    // One permutation of the customers for every district (sysbench-tpcc's `tab`).
    let mut tab: Vec<i64> = (1..=CUSTOMERS).collect();
    for i in 0..CUSTOMERS as usize {
        let j = d.uniform(i as i64, CUSTOMERS - 1) as usize;
        tab.swap(i, j);
    }
    let mut b = Bulk::new(format!(
        "INSERT INTO orders{t} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, \
         o_ol_cnt, o_all_local) values"
    ));
    u.lines.clear();
    for did in 1..=DISTRICTS {
        for oid in 1..=CUSTOMERS {
            let lines = d.uniform(5, 15);
            u.lines.push(lines);
            let carrier = match oid < 2101 {
                true => d.uniform(1, 10).to_string(),
                false => "NULL".into(),
            };
            let c = tab[oid as usize - 1];
            b.row(&format!(
                "({oid}, {did}, {w}, {c}, {now}, {carrier}, {lines}, 1 )"
            ));
        }
    }
    b.done()
}

fn stock(d: &mut Draws, t: u32, w: i64) -> VecDeque<(String, u64)> {
    let dists: String = (1..=10).map(|i| format!("s_dist_{i:02}, ")).collect();
    let mut b = Bulk::new(format!(
        "INSERT INTO stock{t} (s_i_id, s_w_id, s_quantity, {dists}s_ytd, s_order_cnt, \
         s_remote_cnt, s_data) values"
    ));
    for sid in 1..=ITEMS {
        let quantity = d.uniform(10, 100);
        let dist: Vec<String> = (0..10).map(|_| d.letters(24)).collect();
        let n = d.uniform(26, 50);
        let data = d.letters(n);
        b.row(&format!(
            "({sid}, {w}, {quantity},'{}',0,0,0,'{data}')",
            dist.join("','")
        ));
    }
    b.done()
}

fn order_lines(d: &mut Draws, u: &mut Unit, now: &str) -> VecDeque<(String, u64)> {
    let (t, w) = (u.t, u.w);
    let mut b = Bulk::new(format!(
        "INSERT INTO order_line{t} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
         ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info ) values"
    ));
    let mut lines = u.lines.iter();
    for did in 1..=DISTRICTS {
        for oid in 1..=CUSTOMERS {
            let count = lines.next().copied().unwrap_or(0);
            for ol in 1..=count {
                let item = d.uniform(1, ITEMS);
                let (delivered, amount) = match oid < 2101 {
                    true => (now, 0.0),
                    false => ("NULL", d.unit() * 9999.99),
                };
                let info = d.letters(24);
                b.row(&format!(
                    "({oid}, {did}, {w}, {ol}, {item}, {w}, {delivered}, 5, {amount:.6}, \
                     '{info}' )"
                ));
            }
        }
    }
    b.done()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::gen::Follow;
    use rand::SeedableRng;

    #[test]
    fn bulk_inserts_stay_under_sysbenchs_buffer() {
        let mut d = Draws::new(rand::rngs::SmallRng::seed_from_u64(1), Follow::SysbenchTpcc);
        let items = items(&mut d, 1);
        assert_eq!(items.iter().map(|(_, n)| n).sum::<u64>(), 100_000);
        assert!(items.iter().all(|(sql, _)| sql.len() <= BULK_BYTES));
        assert!(items[0]
            .0
            .starts_with("INSERT INTO item1 (i_id, i_im_id, i_name, i_price, i_data) values(1,"));
        let mut u = Unit {
            t: 1,
            w: 1,
            stage: 0,
            lines: Vec::new(),
        };
        let mut rows = Vec::new();
        for s in 0..8 {
            u.stage = s;
            rows.push(
                stage(&mut d, &mut u, "NOW()")
                    .iter()
                    .map(|(_, n)| n)
                    .sum::<u64>(),
            );
        }
        assert_eq!(&rows[..7], [1, 10, 30_000, 30_000, 30_000, 100_000, 9_000]);
        // 5 to 15 lines an order: about 300,000.
        assert!((280_000..320_000).contains(&rows[7]), "{rows:?}");
    }
}
