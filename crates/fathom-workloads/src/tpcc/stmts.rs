//! The statements of TPC-C's five transactions as sysbench-tpcc's `tpcc_run.lua` writes them,
//! for one table copy, prepared or kept as SQL text on one connection, one group per
//! transaction. `NOW()` is `CURRENT_TIMESTAMP` on SQLite, which also takes no `FOR UPDATE`.

use fathom_api::sql::{Dialect, SqlConn, Stmt};

/// One table copy's statements on one connection.
pub struct Stmts {
    pub new_order: NewOrder,
    pub payment: Payment,
    pub order_status: OrderStatus,
    pub delivery: Delivery,
    pub stock_level: StockLevel,
}

/// New-Order's statements.
#[derive(Clone, Copy)]
pub struct NewOrder {
    pub customer_warehouse: Stmt,
    pub district_for_update: Stmt,
    pub set_next_order: Stmt,
    pub insert_order: Stmt,
    pub insert_new_order: Stmt,
    pub item: Stmt,
    /// The stock row with the district's `s_dist_NN`, by district (1-based: `[d - 1]`).
    pub stock: [Stmt; 10],
    pub set_stock: Stmt,
    pub insert_line: Stmt,
}

/// Payment's statements.
#[derive(Clone, Copy)]
pub struct Payment {
    pub count_by_name: Stmt,
    pub warehouse_ytd: Stmt,
    pub warehouse_address: Stmt,
    pub district_ytd: Stmt,
    pub district_address: Stmt,
    pub ids_by_name: Stmt,
    pub customer_for_update: Stmt,
    pub customer_data: Stmt,
    pub pay_with_data: Stmt,
    pub pay: Stmt,
    pub insert_history: Stmt,
}

/// Order-Status's statements.
#[derive(Clone, Copy)]
pub struct OrderStatus {
    pub count_by_name: Stmt,
    pub balances_by_name: Stmt,
    pub customer_by_id: Stmt,
    pub last_order: Stmt,
    pub order_lines: Stmt,
}

/// Delivery's statements.
#[derive(Clone, Copy)]
pub struct Delivery {
    pub oldest_new_order: Stmt,
    pub delete_new_order: Stmt,
    pub order_customer: Stmt,
    pub set_carrier: Stmt,
    pub deliver_lines: Stmt,
    pub sum_lines: Stmt,
    pub credit_customer: Stmt,
}

/// Stock-Level's statements.
#[derive(Clone, Copy)]
pub struct StockLevel {
    pub next_order: Stmt,
    pub low_stock: Stmt,
}

/// How a connection keeps statements: prepared, or as text with the values written in.
pub struct Preparer<'c> {
    pub conn: &'c mut dyn SqlConn,
    pub text: bool,
    pub dialect: Dialect,
}

impl Preparer<'_> {
    fn keep(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        let (now, lock) = match self.dialect {
            Dialect::Sqlite => ("CURRENT_TIMESTAMP", ""),
            _ => ("NOW()", " FOR UPDATE"),
        };
        let sql = sql.replace("{now}", now).replace(" {lock}", lock);
        match self.text {
            true => self.conn.prepare_text(&sql),
            false => self.conn.prepare(&sql),
        }
    }

    /// Copy `t`'s statements (the count of customers by name serves Payment and Order-Status).
    pub fn stmts(&mut self, t: u32) -> anyhow::Result<Stmts> {
        let count_by_name = self.keep(&format!(
            "SELECT count(c_id) namecnt FROM customer{t} WHERE c_w_id = ? AND c_d_id= ? \
                 AND c_last=?"
        ))?;
        Ok(Stmts {
            new_order: self.new_order(t)?,
            payment: self.payment(t, count_by_name)?,
            order_status: self.order_status(t, count_by_name)?,
            delivery: self.delivery(t)?,
            stock_level: self.stock_level(t)?,
        })
    }

    fn new_order(&mut self, t: u32) -> anyhow::Result<NewOrder> {
        let mut k = |sql: String| self.keep(&sql);
        let mut stock = [Stmt(0); 10];
        for (d, slot) in (1..=10).zip(&mut stock) {
            *slot = k(format!(
                "SELECT s_quantity, s_data, s_dist_{d:02} s_dist FROM stock{t} WHERE \
                     s_i_id = ? AND s_w_id= ? {{lock}}"
            ))?;
        }
        Ok(NewOrder {
            customer_warehouse: k(format!(
                "SELECT c_discount, c_last, c_credit, w_tax FROM customer{t}, warehouse{t} \
                 WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"
            ))?,
            district_for_update: k(format!(
                "SELECT d_next_o_id, d_tax FROM district{t} WHERE d_w_id = ? AND d_id = ? {{lock}}"
            ))?,
            set_next_order: k(format!(
                "UPDATE district{t} SET d_next_o_id = ? WHERE d_id = ? AND d_w_id= ?"
            ))?,
            insert_order: k(format!(
                "INSERT INTO orders{t} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, \
                 o_all_local) VALUES (?,?,?,?,{{now}},?,?)"
            ))?,
            insert_new_order: k(format!(
                "INSERT INTO new_orders{t} (no_o_id, no_d_id, no_w_id) VALUES (?,?,?)"
            ))?,
            item: k(format!(
                "SELECT i_price, i_name, i_data FROM item{t} WHERE i_id = ?"
            ))?,
            stock,
            set_stock: k(format!(
                "UPDATE stock{t} SET s_quantity = ? WHERE s_i_id = ? AND s_w_id= ?"
            ))?,
            insert_line: k(format!(
                "INSERT INTO order_line{t} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
                 ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES \
                 (?,?,?,?,?,?,?,?,?)"
            ))?,
        })
    }

    fn payment(&mut self, t: u32, count_by_name: Stmt) -> anyhow::Result<Payment> {
        let mut k = |sql: String| self.keep(&sql);
        Ok(Payment {
            count_by_name,
            warehouse_ytd: k(format!(
                "UPDATE warehouse{t} SET w_ytd = w_ytd + ? WHERE w_id = ?"
            ))?,
            warehouse_address: k(format!(
                "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM \
                 warehouse{t} WHERE w_id = ?"
            ))?,
            district_ytd: k(format!(
                "UPDATE district{t} SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id= ?"
            ))?,
            district_address: k(format!(
                "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM \
                 district{t} WHERE d_w_id = ? AND d_id = ?"
            ))?,
            ids_by_name: k(format!(
                "SELECT c_id FROM customer{t} WHERE c_w_id = ? AND c_d_id= ? AND c_last=? \
                 ORDER BY c_first"
            ))?,
            customer_for_update: k(format!(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, \
                 c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, \
                 c_ytd_payment, c_since FROM customer{t} WHERE c_w_id = ? AND c_d_id= ? AND \
                 c_id=? {{lock}}"
            ))?,
            customer_data: k(format!(
                "SELECT c_data FROM customer{t} WHERE c_w_id = ? AND c_d_id=? AND c_id= ?"
            ))?,
            pay_with_data: k(format!(
                "UPDATE customer{t} SET c_balance=?, c_ytd_payment=?, c_data=? WHERE \
                 c_w_id = ? AND c_d_id=? AND c_id=?"
            ))?,
            pay: k(format!(
                "UPDATE customer{t} SET c_balance=?, c_ytd_payment=? WHERE c_w_id = ? AND \
                 c_d_id=? AND c_id=?"
            ))?,
            insert_history: k(format!(
                "INSERT INTO history{t} (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, \
                 h_amount, h_data) VALUES (?,?,?,?,?,{{now}},?,?)"
            ))?,
        })
    }

    fn order_status(&mut self, t: u32, count_by_name: Stmt) -> anyhow::Result<OrderStatus> {
        let mut k = |sql: String| self.keep(&sql);
        Ok(OrderStatus {
            count_by_name,
            balances_by_name: k(format!(
                "SELECT c_balance, c_first, c_middle, c_id FROM customer{t} WHERE c_w_id = ? \
                 AND c_d_id= ? AND c_last=? ORDER BY c_first"
            ))?,
            customer_by_id: k(format!(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer{t} WHERE \
                 c_w_id = ? AND c_d_id=? AND c_id=?"
            ))?,
            last_order: k(format!(
                "SELECT o_id, o_carrier_id, o_entry_d FROM orders{t} WHERE o_w_id = ? AND \
                 o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC"
            ))?,
            order_lines: k(format!(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM \
                 order_line{t} WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
            ))?,
        })
    }

    fn delivery(&mut self, t: u32) -> anyhow::Result<Delivery> {
        let mut k = |sql: String| self.keep(&sql);
        Ok(Delivery {
            oldest_new_order: k(format!(
                "SELECT no_o_id FROM new_orders{t} WHERE no_d_id = ? AND no_w_id = ? ORDER BY \
                 no_o_id ASC LIMIT 1 {{lock}}"
            ))?,
            delete_new_order: k(format!(
                "DELETE FROM new_orders{t} WHERE no_o_id = ? AND no_d_id = ? AND no_w_id = ?"
            ))?,
            order_customer: k(format!(
                "SELECT o_c_id FROM orders{t} WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?"
            ))?,
            set_carrier: k(format!(
                "UPDATE orders{t} SET o_carrier_id = ? WHERE o_id = ? AND o_d_id = ? AND \
                 o_w_id = ?"
            ))?,
            deliver_lines: k(format!(
                "UPDATE order_line{t} SET ol_delivery_d = {{now}} WHERE ol_o_id = ? AND \
                 ol_d_id = ? AND ol_w_id = ?"
            ))?,
            sum_lines: k(format!(
                "SELECT SUM(ol_amount) sm FROM order_line{t} WHERE ol_o_id = ? AND \
                 ol_d_id = ? AND ol_w_id = ?"
            ))?,
            credit_customer: k(format!(
                "UPDATE customer{t} SET c_balance = c_balance + ?, c_delivery_cnt = \
                 c_delivery_cnt + 1 WHERE c_id = ? AND c_d_id = ? AND c_w_id = ?"
            ))?,
        })
    }

    fn stock_level(&mut self, t: u32) -> anyhow::Result<StockLevel> {
        let mut k = |sql: String| self.keep(&sql);
        Ok(StockLevel {
            next_order: k(format!(
                "SELECT d_next_o_id FROM district{t} WHERE d_id = ? AND d_w_id= ?"
            ))?,
            low_stock: k(format!(
                "SELECT COUNT(DISTINCT (s_i_id)) FROM order_line{t}, stock{t} WHERE \
                 ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id= ? \
                 AND s_i_id=ol_i_id AND s_quantity < ?"
            ))?,
        })
    }
}
