//! TPC-C's five transactions on a SQL connection, as sysbench-tpcc's `tpcc_run.lua` runs them:
//! its inputs, its statements in its order inside BEGIN and COMMIT, the values it computes
//! from what it read. A deadlock or serialization failure rolls back and runs the kind again
//! with fresh inputs, counted as the kind's retry.

use super::delivery::{self, DeliveryStore, StockLevelStore};
use super::gen::{by_name_row, Follow};
use super::input::{self, Inputs};
use super::new_order::{self, Items, Line, NewOrderStore, Original, Rates, Taken};
use super::order_status::{self, OrderStatusStore};
use super::payment::{self, PaymentStore};
use super::stmts::{self, Stmts};
use super::TpccKind;
use fathom_api::kind::Done;
use fathom_api::retry::retryable;
use fathom_api::sql::{Row, SqlConn, Value};
use fathom_api::step::Client;

/// Payment's statements as sysbench-tpcc sends them, on one terminal.
struct SqlPayment<'t, 'e> {
    term: &'t mut Terminal<'e>,
    s: stmts::Payment,
}

impl PaymentStore for SqlPayment<'_, '_> {
    /// The customer's credit, balance and year-to-date payment as read.
    type Customer = (String, f64, f64);

    fn original(&self) -> Original {
        Original::SysbenchTpcc
    }

    fn warehouse(&mut self, p: &input::Payment) -> anyhow::Result<String> {
        let (s, t) = (self.s, &mut *self.term);
        t.run(s.warehouse_ytd, &[Value::Int(p.amount), Value::Int(p.w)])?;
        t.row(s.warehouse_address, &[Value::Int(p.w)], 0)?;
        Ok(t.text(5)?.to_string())
    }

    fn district(&mut self, p: &input::Payment) -> anyhow::Result<String> {
        let (s, t) = (self.s, &mut *self.term);
        let wd = [Value::Int(p.w), Value::Int(p.d)];
        t.run(s.district_ytd, &[Value::Int(p.amount), wd[0], wd[1]])?;
        t.row(s.district_address, &wd, 0)?;
        Ok(t.text(5)?.to_string())
    }

    fn customer(&mut self, p: &input::Payment, _: Follow) -> anyhow::Result<(i64, Self::Customer)> {
        let (s, t) = (self.s, &mut *self.term);
        let c = match p.by_name {
            true => t.by_name((s.count_by_name, s.ids_by_name), (p.cw, p.cd), &p.last, 0)?,
            false => p.c,
        };
        let key = [Value::Int(p.cw), Value::Int(p.cd), Value::Int(c)];
        t.row(s.customer_for_update, &key, 0)?;
        let customer = (t.text(9)?.to_string(), t.float(12)?, t.float(13)?);
        Ok((c, customer))
    }

    fn bad_credit(&self, (credit, ..): &Self::Customer) -> bool {
        credit == "BC"
    }

    fn data(&mut self, p: &input::Payment, c: i64, _: &Self::Customer) -> anyhow::Result<String> {
        let key = [Value::Int(p.cw), Value::Int(p.cd), Value::Int(c)];
        self.term.row(self.s.customer_data, &key, 0)?;
        Ok(self.term.text(0)?.to_string())
    }

    fn pay(
        &mut self,
        p: &input::Payment,
        c: i64,
        (_, balance, ytd): Self::Customer,
        data: Option<&str>,
    ) -> anyhow::Result<()> {
        let balance = format!("{:.2}", balance - p.amount as f64);
        let ytd = format!("{:.2}", ytd + p.amount as f64);
        let (balance, ytd) = (Value::Number(&balance), Value::Number(&ytd));
        let key = [Value::Int(p.cw), Value::Int(p.cd), Value::Int(c)];
        match data {
            None => self
                .term
                .run(self.s.pay, &[balance, ytd, key[0], key[1], key[2]])?,
            Some(data) => {
                let params = [balance, ytd, Value::Text(data), key[0], key[1], key[2]];
                self.term.run(self.s.pay_with_data, &params)?
            }
        };
        Ok(())
    }

    fn history(&mut self, p: &input::Payment, c: i64, h_data: &str) -> anyhow::Result<()> {
        let ints = [p.cd, p.cw, c, p.d, p.w, p.amount].map(Value::Int);
        let mut params = ints.to_vec();
        params.push(Value::Text(h_data));
        self.term.run(self.s.insert_history, &params)?;
        Ok(())
    }
}

/// Order-Status's statements as sysbench-tpcc sends them, on one terminal.
struct SqlOrderStatus<'t, 'e> {
    term: &'t mut Terminal<'e>,
    s: stmts::OrderStatus,
}

impl OrderStatusStore for SqlOrderStatus<'_, '_> {
    fn customer(&mut self, st: &input::OrderStatus, _: Follow) -> anyhow::Result<i64> {
        let (s, t) = (self.s, &mut *self.term);
        if st.by_name {
            return t.by_name(
                (s.count_by_name, s.balances_by_name),
                (st.w, st.d),
                &st.last,
                3,
            );
        }
        let key = [Value::Int(st.w), Value::Int(st.d), Value::Int(st.c)];
        t.row(s.customer_by_id, &key, 0)?;
        Ok(st.c)
    }

    fn last_order(&mut self, st: &input::OrderStatus, c: i64) -> anyhow::Result<i64> {
        let key = [Value::Int(st.w), Value::Int(st.d), Value::Int(c)];
        self.term.row(self.s.last_order, &key, 0)?;
        self.term.int(0)
    }

    fn lines(&mut self, st: &input::OrderStatus, o: i64) -> anyhow::Result<()> {
        let key = [Value::Int(st.w), Value::Int(st.d), Value::Int(o)];
        self.term.run(self.s.order_lines, &key)?;
        Ok(())
    }
}

/// A client of the run: its connection, its statements per table copy, its draws.
pub struct Terminal<'e> {
    pub conn: Box<dyn SqlConn + 'e>,
    pub stmts: Vec<Stmts>,
    pub inputs: Inputs,
    /// How a transaction that writes begins: `BEGIN`, or on SQLite `BEGIN IMMEDIATE`, which
    /// waits for the write lock at the start (busy_timeout) where a deferred transaction's
    /// upgrade would fail at once against another writer, over and over.
    begin_write: &'static str,
    row: Row,
    /// Bytes the transaction's statements returned.
    bytes: u64,
}

impl<'e> Terminal<'e> {
    pub fn new(
        conn: Box<dyn SqlConn + 'e>,
        stmts: Vec<Stmts>,
        inputs: Inputs,
        begin_write: &'static str,
    ) -> Terminal<'e> {
        Terminal {
            conn,
            stmts,
            inputs,
            begin_write,
            row: Row::default(),
            bytes: 0,
        }
    }

    /// Runs `sql` with `params` and keeps row `n`'s values in `self.row`.
    fn row(
        &mut self,
        stmt: fathom_api::sql::Stmt,
        params: &[Value<'_>],
        n: u64,
    ) -> anyhow::Result<bool> {
        let out = self.conn.run_row(stmt, params, n, &mut self.row)?;
        self.bytes += out.bytes;
        Ok(!self.row.is_empty())
    }

    fn run(&mut self, stmt: fathom_api::sql::Stmt, params: &[Value<'_>]) -> anyhow::Result<u64> {
        let out = self.conn.run(stmt, params)?;
        self.bytes += out.bytes;
        Ok(out.rows)
    }

    /// Column `i` of the row read last as an integer; 0 when no row came back (only the null
    /// engine, which returns none, leaves a lookup empty that finds a row on a database).
    fn int(&self, i: usize) -> anyhow::Result<i64> {
        match self.row.is_empty() {
            true => Ok(0),
            false => self.row.int(i),
        }
    }

    fn float(&self, i: usize) -> anyhow::Result<f64> {
        match self.row.is_empty() {
            true => Ok(0.0),
            false => self.row.float(i),
        }
    }

    fn text(&self, i: usize) -> anyhow::Result<&str> {
        match self.row.is_empty() {
            true => Ok(""),
            false => self.row.text(i),
        }
    }

    /// One transaction of `kind`; the kind that it was (a New-Order may roll back).
    fn transaction(&mut self, kind: TpccKind) -> anyhow::Result<TpccKind> {
        self.bytes = 0;
        match kind {
            TpccKind::NewOrder => self.new_order(),
            TpccKind::Payment => self.payment().map(|()| kind),
            TpccKind::OrderStatus => self.order_status().map(|()| kind),
            TpccKind::Delivery => self.delivery().map(|()| kind),
            _ => self.stock_level().map(|()| kind),
        }
    }

    fn new_order(&mut self) -> anyhow::Result<TpccKind> {
        let order = self.inputs.new_order();
        let follow = self.inputs.follow();
        self.conn.exec(self.begin_write)?;
        let s = self.stmts[order.t].new_order;
        let mut store = SqlNewOrder {
            term: self,
            s,
            follow,
        };
        if new_order::run(&mut store, &order, follow)? {
            self.conn.exec("COMMIT")?;
            return Ok(TpccKind::NewOrder);
        }
        self.conn.exec("ROLLBACK")?;
        Ok(TpccKind::NewOrderRollback)
    }

    /// The customer a Payment or Order-Status names by last name: row `by_name_row` of the
    /// customers of that name, ordered by first name; column `id` of it is the id.
    fn by_name(
        &mut self,
        (count, ids): (fathom_api::sql::Stmt, fathom_api::sql::Stmt),
        (w, d): (i64, i64),
        last: &str,
        id: usize,
    ) -> anyhow::Result<i64> {
        let key = [Value::Int(w), Value::Int(d), Value::Text(last)];
        self.row(count, &key, 0)?;
        let n = self.int(0)?;
        let at = by_name_row(n, self.inputs.follow());
        self.row(ids, &key, at)?;
        self.int(id)
    }

    fn payment(&mut self) -> anyhow::Result<()> {
        let p = self.inputs.payment();
        let follow = self.inputs.follow();
        self.conn.exec(self.begin_write)?;
        let s = self.stmts[p.t].payment;
        payment::run(&mut SqlPayment { term: self, s }, &p, follow)?;
        self.conn.exec("COMMIT")
    }

    fn order_status(&mut self) -> anyhow::Result<()> {
        let st = self.inputs.order_status();
        let follow = self.inputs.follow();
        self.conn.exec("BEGIN")?;
        let s = self.stmts[st.t].order_status;
        order_status::run(&mut SqlOrderStatus { term: self, s }, &st, follow)?;
        self.conn.exec("COMMIT")
    }

    fn delivery(&mut self) -> anyhow::Result<()> {
        let i = self.inputs.delivery();
        self.conn.exec(self.begin_write)?;
        let s = self.stmts[i.t].delivery;
        delivery::deliver(&mut SqlDelivery { term: self, s }, &i)?;
        self.conn.exec("COMMIT")
    }

    fn stock_level(&mut self) -> anyhow::Result<()> {
        let i = self.inputs.stock_level();
        self.conn.exec("BEGIN")?;
        let s = self.stmts[i.t].stock_level;
        delivery::stock_level(&mut SqlStockLevel { term: self, s }, &i)?;
        self.conn.exec("COMMIT")
    }
}

/// Delivery's statements as sysbench-tpcc sends them, on one terminal.
struct SqlDelivery<'t, 'e> {
    term: &'t mut Terminal<'e>,
    s: stmts::Delivery,
}

impl DeliveryStore for SqlDelivery<'_, '_> {
    type Total = f64;

    fn take_oldest(&mut self, i: &input::Delivery, d: i64) -> anyhow::Result<Option<i64>> {
        let (s, t) = (self.s, &mut *self.term);
        if !t.row(s.oldest_new_order, &[Value::Int(d), Value::Int(i.w)], 0)? {
            return Ok(None);
        }
        let o = t.int(0)?;
        t.run(s.delete_new_order, &[o, d, i.w].map(Value::Int))?;
        Ok(Some(o))
    }

    fn deliver(&mut self, i: &input::Delivery, d: i64, o: i64) -> anyhow::Result<(i64, f64)> {
        let (s, t) = (self.s, &mut *self.term);
        let order = [o, d, i.w].map(Value::Int);
        t.row(s.order_customer, &order, 0)?;
        let c = t.int(0)?;
        let carrier = [Value::Int(i.carrier), order[0], order[1], order[2]];
        t.run(s.set_carrier, &carrier)?;
        t.run(s.deliver_lines, &order)?;
        t.row(s.sum_lines, &order, 0)?;
        // No lines, or the null engine: SUM is NULL.
        Ok((c, t.float(0).unwrap_or(0.0)))
    }

    fn credit(&mut self, i: &input::Delivery, d: i64, c: i64, total: f64) -> anyhow::Result<()> {
        let total = format!("{total:.6}");
        let params = [
            Value::Number(&total),
            Value::Int(c),
            Value::Int(d),
            Value::Int(i.w),
        ];
        self.term.run(self.s.credit_customer, &params)?;
        Ok(())
    }
}

/// Stock-Level's statements as sysbench-tpcc sends them (the count in one join), on one
/// terminal.
struct SqlStockLevel<'t, 'e> {
    term: &'t mut Terminal<'e>,
    s: stmts::StockLevel,
}

impl StockLevelStore for SqlStockLevel<'_, '_> {
    fn next_order(&mut self, i: &input::StockLevel) -> anyhow::Result<i64> {
        self.term
            .row(self.s.next_order, &[Value::Int(i.d), Value::Int(i.w)], 0)?;
        self.term.int(0)
    }

    fn low_stock(
        &mut self,
        i: &input::StockLevel,
        orders: std::ops::Range<i64>,
    ) -> anyhow::Result<()> {
        let params = [i.w, i.d, orders.end, orders.start, i.w, i.level].map(Value::Int);
        self.term.run(self.s.low_stock, &params)?;
        Ok(())
    }
}

/// New-Order's reads and writes as sysbench-tpcc's statements, on a terminal's connection.
struct SqlNewOrder<'t, 'e> {
    term: &'t mut Terminal<'e>,
    s: stmts::NewOrder,
    follow: Follow,
}

impl NewOrderStore for SqlNewOrder<'_, '_> {
    /// The row's `s_dist_NN`.
    type Stock = String;

    fn original(&self) -> Original {
        Original::SysbenchTpcc
    }

    fn items(&self) -> Items {
        Items::PerLine
    }

    fn price(&mut self, item: i64) -> anyhow::Result<Option<f64>> {
        match self.term.row(self.s.item, &[Value::Int(item)], 0)? {
            true => Ok(Some(self.term.float(0)?)),
            false => Ok(None),
        }
    }

    fn rates(&mut self, o: &input::NewOrder) -> anyhow::Result<Rates> {
        let key = [o.w, o.d, o.c].map(Value::Int);
        self.term.row(self.s.customer_warehouse, &key, 0)?;
        Ok(Rates {
            discount: self.term.float(0)?,
            w_tax: self.term.float(3)?,
        })
    }

    fn take(&mut self, o: &input::NewOrder) -> anyhow::Result<Taken> {
        let (w, d) = (Value::Int(o.w), Value::Int(o.d));
        self.term.row(self.s.district_for_update, &[w, d], 0)?;
        let taken = Taken {
            o: self.term.int(0)?,
            d_tax: self.term.float(1)?,
        };
        let next = Value::Int(taken.o + 1);
        self.term.run(self.s.set_next_order, &[next, d, w])?;
        Ok(taken)
    }

    fn open(&mut self, i: &input::NewOrder, o: i64) -> anyhow::Result<()> {
        let lines = i.lines.len() as i64;
        let row = [o, i.d, i.w, i.c, lines, i.all_local].map(Value::Int);
        self.term.run(self.s.insert_order, &row)?;
        let key = [o, i.d, i.w].map(Value::Int);
        self.term.run(self.s.insert_new_order, &key)?;
        Ok(())
    }

    fn stock(
        &mut self,
        i: &input::NewOrder,
        item: i64,
        supply: i64,
    ) -> anyhow::Result<(i64, String)> {
        let stmt = self.s.stock[i.d as usize - 1];
        self.term
            .row(stmt, &[Value::Int(item), Value::Int(supply)], 0)?;
        Ok((self.term.int(0)?, self.term.text(2)?.to_string()))
    }

    fn line(&mut self, i: &input::NewOrder, line: &Line, info: String) -> anyhow::Result<()> {
        let (item, supply) = (Value::Int(line.item), Value::Int(line.supply));
        let left = Value::Int(line.left);
        self.term.run(self.s.set_stock, &[left, item, supply])?;
        // sysbench-tpcc writes the amount with %d: its whole part.
        let amount = match self.follow {
            Follow::SysbenchTpcc => format!("{}", line.amount as i64),
            Follow::Spec => format!("{:.2}", line.amount),
        };
        let ints = [
            line.o,
            i.d,
            i.w,
            line.number,
            line.item,
            line.supply,
            line.quantity,
        ];
        let mut params = ints.map(Value::Int).to_vec();
        params.push(Value::Number(&amount));
        params.push(Value::Text(&info));
        self.term.run(self.s.insert_line, &params)?;
        Ok(())
    }
}

impl Client for Terminal<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let kind = self.inputs.kind();
        let ran = input::attempt(self.inputs.follow(), kind, || {
            self.transaction(kind).inspect_err(|e| {
                if retryable(e) {
                    let _ = self.conn.exec("ROLLBACK");
                }
            })
        })?;
        Ok(input::done(ran, self.bytes))
    }
}
