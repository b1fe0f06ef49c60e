//! TPC-C's five transactions on a SQL connection, as sysbench-tpcc's `tpcc_run.lua` runs them:
//! its inputs, its statements in its order inside BEGIN and COMMIT, the values it computes
//! from what it read. A deadlock or serialization failure rolls back and runs the kind again
//! with fresh inputs, counted as the kind's retry.

use super::gen::{by_name_row, Follow, DISTRICTS};
use super::input::{self, Inputs};
use super::new_order::{self, Items, Line, NewOrderStore, Original, Rates, Taken};
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
