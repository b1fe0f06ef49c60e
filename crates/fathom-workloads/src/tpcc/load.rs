//! TPC-C's initial population on the sql family as sysbench-tpcc's `prepare` writes it: per
//! table copy the items, then per warehouse each table in turn, in multi-row INSERTs of up to
//! 512 KiB of SQL text (sysbench's bulk insert buffer), values written as its Lua writes them.

use super::gen::{Draws, DISTRICTS};
use super::population::{
    self, Address, Customer, Item, Order, OrderLine, Place, Rows, Stock, Units,
};
use super::TpccKind;
use fathom_api::kind::Done;
use fathom_api::sql::SqlConn;
use fathom_api::step::Client;
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

/// Rows written as sysbench-tpcc's INSERTs of table copy `t`, one table at a time.
struct Inserts<'a> {
    t: u32,
    now: &'a str,
    bulk: Option<Bulk>,
}

impl Inserts<'_> {
    /// The statements filled so far, the one being filled kept.
    fn full(&mut self) -> VecDeque<(String, u64)> {
        self.bulk
            .as_mut()
            .map(|b| std::mem::take(&mut b.out))
            .unwrap_or_default()
    }

    /// The bulk INSERT into `table` with `columns`, started at the table's first row.
    fn into(&mut self, table: &str, columns: &str) -> &mut Bulk {
        let t = self.t;
        self.bulk
            .get_or_insert_with(|| Bulk::new(format!("INSERT INTO {table}{t} ({columns}) values")))
    }

    fn done(self) -> VecDeque<(String, u64)> {
        self.bulk.map(Bulk::done).unwrap_or_default()
    }
}

fn address(a: &Address) -> String {
    format!(
        "'{}','{}','{}','{}','{}'",
        a.street[0], a.street[1], a.city, a.state, a.zip
    )
}

impl Rows for Inserts<'_> {
    fn item(&mut self, r: &Item) {
        let b = self.into("item", "i_id, i_im_id, i_name, i_price, i_data");
        b.row(&format!(
            "({},{},'{}',{:.2},'{}')",
            r.i, r.im, r.name, r.price, r.data
        ));
    }

    fn warehouse(&mut self, r: &Place) {
        let b = self.into(
            "warehouse",
            "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd",
        );
        let addr = address(&r.address);
        b.row(&format!(
            "({}, '{}',{addr}, {:.2},300000)",
            r.w, r.name, r.tax
        ));
    }

    fn district(&mut self, r: &Place) {
        let b = self.into(
            "district",
            "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, \
             d_ytd, d_next_o_id",
        );
        let addr = address(&r.address);
        b.row(&format!(
            "({}, {}, '{}',{addr}, {:.2},30000,3001)",
            r.d, r.w, r.name, r.tax
        ));
    }

    fn customer(&mut self, r: &Customer) {
        let now = self.now;
        let b = self.into(
            "customer",
            "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, \
             c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, \
             c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data",
        );
        let a = &r.address;
        b.row(&format!(
            "({}, {}, {}, '{}','OE','{}','{}', '{}', '{}', '{}', '{}','{}',{now},'{}',50000,\
             {:.2},-10,10,1,0,'{}' )",
            r.c,
            r.d,
            r.w,
            r.first,
            r.last,
            a.street[0],
            a.street[1],
            a.city,
            a.state,
            a.zip,
            r.phone,
            r.credit,
            r.discount,
            r.data
        ));
    }

    fn history(&mut self, w: i64, d: i64, c: i64, data: &str) {
        let now = self.now;
        let b = self.into(
            "history",
            "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data",
        );
        b.row(&format!("({c}, {d}, {w}, {d}, {w}, {now}, 10, '{data}' )"));
    }

    fn order(&mut self, r: &Order) {
        let now = self.now;
        let b = self.into(
            "orders",
            "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local",
        );
        let carrier = r.carrier.map_or("NULL".into(), |c| c.to_string());
        b.row(&format!(
            "({}, {}, {}, {}, {now}, {carrier}, {}, 1 )",
            r.o, r.d, r.w, r.c, r.lines
        ));
    }

    fn stock(&mut self, r: &Stock) {
        let dists: String = (1..=10).map(|i| format!("s_dist_{i:02}, ")).collect();
        let columns =
            format!("s_i_id, s_w_id, s_quantity, {dists}s_ytd, s_order_cnt, s_remote_cnt, s_data");
        let b = self.into("stock", &columns);
        b.row(&format!(
            "({}, {}, {},'{}',0,0,0,'{}')",
            r.i,
            r.w,
            r.quantity,
            r.dist.join("','"),
            r.data
        ));
    }

    fn new_orders(&mut self, w: i64) {
        let t = self.t;
        let b = self.bulk.get_or_insert_with(|| Bulk::new(String::new()));
        b.out.push_back((
            format!(
                "INSERT INTO new_orders{t} (no_o_id, no_d_id, no_w_id) SELECT o_id, o_d_id, \
                 o_w_id FROM orders{t} WHERE o_id>2100 and o_w_id={w}"
            ),
            (DISTRICTS * 900) as u64,
        ));
    }

    fn order_line(&mut self, r: &OrderLine) {
        let now = self.now;
        let b = self.into(
            "order_line",
            "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, \
             ol_quantity, ol_amount, ol_dist_info ",
        );
        let delivered = if r.delivered { now } else { "NULL" };
        b.row(&format!(
            "({}, {}, {}, {}, {}, {}, {delivered}, 5, {:.2}, '{}' )",
            r.o, r.d, r.w, r.number, r.item, r.w, r.amount, r.info
        ));
    }
}

/// The INSERTs of copy `t` of the item table.
pub fn items(d: &mut Draws, t: u32) -> VecDeque<(String, u64)> {
    let mut out = Inserts {
        t,
        now: "",
        bulk: None,
    };
    population::items(d, &mut out);
    out.done()
}

/// A client of the load: the warehouses given to it, every table copy of each.
pub struct Loader<'e> {
    conn: Box<dyn SqlConn + 'e>,
    draws: Draws,
    units: Units,
    statements: Statements,
}

impl<'e> Loader<'e> {
    pub fn new(
        conn: Box<dyn SqlConn + 'e>,
        draws: Draws,
        now: &'static str,
        (warehouses, tables): (Vec<i64>, u32),
    ) -> Loader<'e> {
        Loader {
            conn,
            draws,
            units: Units::new(warehouses, tables),
            statements: Statements::new(now),
        }
    }
}

impl Client for Loader<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let Some((sql, rows)) = self.statements.next(&mut self.draws, &mut self.units) else {
            return Ok(None);
        };
        self.conn.exec(&sql)?;
        Ok(Some(Done {
            rows,
            bytes: sql.len() as u64,
            ..Done::of(TpccKind::Load)
        }))
    }
}

/// A loader's INSERTs, generated a part of a table at a time: a statement spans the parts
/// of its table, as sysbench-tpcc's fills its buffer across a whole table.
pub struct Statements {
    now: &'static str,
    /// The table being generated.
    table: Option<Inserts<'static>>,
    ready: VecDeque<(String, u64)>,
}

impl Statements {
    fn new(now: &'static str) -> Statements {
        Statements {
            now,
            table: None,
            ready: VecDeque::new(),
        }
    }

    /// The next INSERT of `units`, and its rows; None when every unit is done.
    fn next(&mut self, d: &mut Draws, units: &mut Units) -> Option<(String, u64)> {
        while self.ready.is_empty() {
            let u = units.next()?;
            let now = self.now;
            let table = (self.table).get_or_insert(Inserts {
                t: u.t,
                now,
                bulk: None,
            });
            if u.next_stage(d, table) {
                self.ready = self.table.take().expect("set").done();
            } else {
                self.ready = table.full();
            }
        }
        self.ready.pop_front()
    }
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
        // The rows of each table of one warehouse, by the table each INSERT goes into.
        let (mut units, mut s) = (Units::new(vec![1], 1), Statements::new("NOW()"));
        let mut rows: Vec<(String, u64)> = Vec::new();
        while let Some((sql, n)) = s.next(&mut d, &mut units) {
            assert!(sql.len() <= BULK_BYTES);
            let table = sql.split_whitespace().nth(2).unwrap().to_string();
            match rows.last_mut() {
                Some((t, sum)) if *t == table => *sum += n,
                _ => rows.push((table, n)),
            }
        }
        let rows: Vec<u64> = rows.into_iter().map(|(_, n)| n).collect();
        assert_eq!(&rows[..7], [1, 10, 30_000, 30_000, 30_000, 100_000, 9_000]);
        // 5 to 15 lines an order: about 300,000.
        assert!((280_000..320_000).contains(&rows[7]), "{rows:?}");
    }

    /// No number in the load's statements has more than two decimals: every decimal column is
    /// decimal(N,2), and SQLite would keep what it is sent.
    #[test]
    fn decimals_are_sent_at_their_columns_scale() {
        let mut d = Draws::new(rand::rngs::SmallRng::seed_from_u64(2), Follow::SysbenchTpcc);
        let (mut units, mut s) = (Units::new(vec![1], 1), Statements::new("NOW()"));
        let mut sql: Vec<String> = items(&mut d, 1).into_iter().map(|(q, _)| q).collect();
        while let Some((q, _)) = s.next(&mut d, &mut units) {
            sql.push(q);
        }
        for q in &sql {
            // Outside quoted text (item names carry a price with six decimals, as in
            // sysbench-tpcc's loader), a number's decimals.
            let bare: String = q.split('\'').step_by(2).collect::<Vec<_>>().join(" ");
            let long = bare
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .find(|n| n.split_once('.').is_some_and(|(_, f)| f.len() > 2));
            assert!(long.is_none(), "{long:?} in {}", &q[..q.len().min(200)]);
        }
    }
}
