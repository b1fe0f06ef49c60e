//! TPC-C's five transactions on a SQL connection, as sysbench-tpcc's `tpcc_run.lua` runs them:
//! its inputs, its statements in its order inside BEGIN and COMMIT, the values it computes
//! from what it read. A deadlock or serialization failure rolls back and runs the kind again
//! with fresh inputs, counted as the kind's retry.

use super::gen::{by_name_row, Follow, DISTRICTS};
use super::input::{self, Inputs};
use super::stmts::{self, Stmts};
use super::TpccKind;
use fathom_api::kind::Done;
use fathom_api::retry::retryable;
use fathom_api::sql::{Row, SqlConn, Value};
use fathom_api::step::Client;

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
        let input::NewOrder {
            t,
            w,
            d,
            c,
            lines: items,
            all_local,
        } = self.inputs.new_order();
        let lines = items.len() as i64;
        self.conn.exec(self.begin_write)?;
        let s = self.stmts[t].new_order;
        self.row(
            s.customer_warehouse,
            &[Value::Int(w), Value::Int(d), Value::Int(c)],
            0,
        )?;
        let (discount, w_tax) = (self.float(0)?, self.float(3)?);
        self.row(s.district_for_update, &[Value::Int(w), Value::Int(d)], 0)?;
        let (o, d_tax) = (self.int(0)?, self.float(1)?);
        self.run(
            s.set_next_order,
            &[Value::Int(o + 1), Value::Int(d), Value::Int(w)],
        )?;
        let ints = [o, d, w, c, lines, all_local].map(Value::Int);
        self.run(s.insert_order, &ints)?;
        self.run(
            s.insert_new_order,
            &[Value::Int(o), Value::Int(d), Value::Int(w)],
        )?;
        for (number, (item, supply, quantity)) in (1..).zip(items) {
            if !self.row(s.item, &[Value::Int(item)], 0)? {
                self.conn.exec("ROLLBACK")?;
                return Ok(TpccKind::NewOrderRollback);
            }
            let price = self.float(0)?;
            self.row(
                s.stock[d as usize - 1],
                &[Value::Int(item), Value::Int(supply)],
                0,
            )?;
            let mut left = self.int(0)?;
            let info = self.text(2)?.to_string();
            left = if left > quantity {
                left - quantity
            } else {
                left - quantity + 91
            };
            self.run(
                s.set_stock,
                &[Value::Int(left), Value::Int(item), Value::Int(supply)],
            )?;
            let follow = self.inputs.follow();
            let amount = input::line_amount(follow, quantity, price, w_tax + d_tax, discount);
            // sysbench-tpcc writes the amount with %d: its whole part.
            let amount = match follow {
                Follow::SysbenchTpcc => format!("{}", amount as i64),
                Follow::Spec => format!("{amount:.2}"),
            };
            let ints = [o, d, w, number, item, supply, quantity].map(Value::Int);
            let mut params = ints.to_vec();
            params.push(Value::Number(&amount));
            params.push(Value::Text(&info));
            self.run(s.insert_line, &params)?;
        }
        self.conn.exec("COMMIT")?;
        Ok(TpccKind::NewOrder)
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
        let (t, w, d, mut c, amount) = (p.t, p.w, p.d, p.c, p.amount);
        let (cw, cd) = (p.cw, p.cd);
        self.conn.exec(self.begin_write)?;
        let s = self.stmts[t].payment;
        self.run(s.warehouse_ytd, &[Value::Int(amount), Value::Int(w)])?;
        self.row(s.warehouse_address, &[Value::Int(w)], 0)?;
        let w_name = self.text(5)?.to_string();
        self.run(
            s.district_ytd,
            &[Value::Int(amount), Value::Int(w), Value::Int(d)],
        )?;
        self.row(s.district_address, &[Value::Int(w), Value::Int(d)], 0)?;
        let d_name = self.text(5)?.to_string();
        if p.by_name {
            c = self.by_name((s.count_by_name, s.ids_by_name), (cw, cd), &p.last, 0)?;
        }
        self.pay_customer(&s, &p, c)?;
        let h_data = format!("{w_name:>10} {d_name:>10}   ");
        let ints = [cd, cw, c, d, w, amount].map(Value::Int);
        let mut params = ints.to_vec();
        params.push(Value::Text(&h_data));
        self.run(s.insert_history, &params)?;
        self.conn.exec("COMMIT")
    }

    /// Payment's customer, read for update and paid: balance and YTD payment written, and a
    /// `BC` customer's `c_data` prefixed with the payment (500 characters kept).
    fn pay_customer(
        &mut self,
        s: &stmts::Payment,
        p: &input::Payment,
        c: i64,
    ) -> anyhow::Result<()> {
        let amount = p.amount;
        let key = [Value::Int(p.cw), Value::Int(p.cd), Value::Int(c)];
        self.row(s.customer_for_update, &key, 0)?;
        let credit = self.text(9)?.to_string();
        let balance = format!("{:.2}", self.float(12)? - amount as f64);
        let ytd = format!("{:.2}", self.float(13)? + amount as f64);
        let (balance, ytd) = (Value::Number(&balance), Value::Number(&ytd));
        if credit != "BC" {
            self.run(s.pay, &[balance, ytd, key[0], key[1], key[2]])?;
            return Ok(());
        }
        self.row(s.customer_data, &key, 0)?;
        let new = input::bad_credit_data(p, c, self.text(0)?);
        let params = [balance, ytd, Value::Text(&new), key[0], key[1], key[2]];
        self.run(s.pay_with_data, &params)?;
        Ok(())
    }

    fn order_status(&mut self) -> anyhow::Result<()> {
        let input::OrderStatus {
            t,
            w,
            d,
            mut c,
            last,
            by_name,
        } = self.inputs.order_status();
        self.conn.exec("BEGIN")?;
        let s = self.stmts[t].order_status;
        if by_name {
            c = self.by_name((s.count_by_name, s.balances_by_name), (w, d), &last, 3)?;
        } else {
            self.row(
                s.customer_by_id,
                &[Value::Int(w), Value::Int(d), Value::Int(c)],
                0,
            )?;
        }
        self.row(
            s.last_order,
            &[Value::Int(w), Value::Int(d), Value::Int(c)],
            0,
        )?;
        let order = input::status_lines_of(self.inputs.follow(), d, self.int(0)?);
        self.run(
            s.order_lines,
            &[Value::Int(w), Value::Int(d), Value::Int(order)],
        )?;
        self.conn.exec("COMMIT")
    }

    fn delivery(&mut self) -> anyhow::Result<()> {
        let input::Delivery { t, w, carrier } = self.inputs.delivery();
        self.conn.exec(self.begin_write)?;
        let s = self.stmts[t].delivery;
        for d in 1..=DISTRICTS {
            if !self.row(s.oldest_new_order, &[Value::Int(d), Value::Int(w)], 0)? {
                continue;
            }
            let o = self.int(0)?;
            let order = [o, d, w].map(Value::Int);
            self.run(s.delete_new_order, &order)?;
            self.row(s.order_customer, &order, 0)?;
            let c = self.int(0)?;
            self.run(
                s.set_carrier,
                &[Value::Int(carrier), order[0], order[1], order[2]],
            )?;
            self.run(s.deliver_lines, &order)?;
            self.row(s.sum_lines, &order, 0)?;
            // No lines, or the null engine: SUM is NULL.
            let total = format!("{:.6}", self.float(0).unwrap_or(0.0));
            let params = [
                Value::Number(&total),
                Value::Int(c),
                Value::Int(d),
                Value::Int(w),
            ];
            self.run(s.credit_customer, &params)?;
        }
        self.conn.exec("COMMIT")
    }

    fn stock_level(&mut self) -> anyhow::Result<()> {
        let input::StockLevel { t, w, d, level } = self.inputs.stock_level();
        self.conn.exec("BEGIN")?;
        let s = self.stmts[t].stock_level;
        self.row(s.next_order, &[Value::Int(d), Value::Int(w)], 0)?;
        let o = self.int(0)?;
        let params = [w, d, o, o - 20, w, level].map(Value::Int);
        self.run(s.low_stock, &params)?;
        self.conn.exec("COMMIT")
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
