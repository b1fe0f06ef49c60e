//! Payment and Order-Status, the customer's transactions, with py-tpcc's commands.

use super::super::{int, now, num, text, CUSTOMER, DISTRICT, HISTORY, ORDERS, WAREHOUSE};
use super::{field, Tx};
use crate::tpcc::gen::Follow;
use crate::tpcc::input;
use crate::tpcc::new_order::Original;
use crate::tpcc::order_status::OrderStatusStore;
use crate::tpcc::payment::PaymentStore;
use fathom_api::doc::bson::{doc, Document, RawDocumentBuf};
use fathom_api::doc::{Find, Modify};

/// Payment as py-tpcc's `_doPaymentTxn`: it looks the customer up in the home warehouse and
/// district (`w_id`, `d_id`), and its history document holds no customer.
pub(super) struct DocPayment<'x, 'a> {
    pub(super) x: &'x mut Tx<'a>,
}

const PAYMENT_COMMENT: &str = "PAYMENT";

impl PaymentStore for DocPayment<'_, '_> {
    type Customer = RawDocumentBuf;

    fn original(&self) -> Original {
        Original::PyTpcc
    }

    fn warehouse(&mut self, p: &input::Payment) -> anyhow::Result<String> {
        let filter = doc! {"W_ID": int(p.w), "$comment": PAYMENT_COMMENT};
        let warehouse = pay(self.x, (WAREHOUSE, "W_"), &filter, p.amount as f64)?;
        Ok(text(&warehouse, "W_NAME").to_string())
    }

    fn district(&mut self, p: &input::Payment) -> anyhow::Result<String> {
        let filter = doc! {"D_ID": int(p.d), "D_W_ID": int(p.w), "$comment": PAYMENT_COMMENT};
        let district = pay(self.x, (DISTRICT, "D_"), &filter, p.amount as f64)?;
        Ok(text(&district, "D_NAME").to_string())
    }

    fn customer(&mut self, p: &input::Payment, _: Follow) -> anyhow::Result<(i64, RawDocumentBuf)> {
        let search = doc! {"C_W_ID": int(p.w), "C_D_ID": int(p.d), "$comment": PAYMENT_COMMENT};
        let without = doc! {"C_BALANCE": 0, "C_YTD_PAYMENT": 0, "C_PAYMENT_CNT": 0};
        let last = p.by_name.then_some(p.last.as_str());
        let customer = self.x.find_customer(search, &without, p.c, last)?;
        Ok((num(&customer, "C_ID") as i64, customer))
    }

    fn bad_credit(&self, customer: &RawDocumentBuf) -> bool {
        text(customer, "C_CREDIT") == "BC"
    }

    fn data(
        &mut self,
        _: &input::Payment,
        _: i64,
        customer: &RawDocumentBuf,
    ) -> anyhow::Result<String> {
        Ok(text(customer, "C_DATA").to_string())
    }

    fn pay(
        &mut self,
        p: &input::Payment,
        _: i64,
        customer: RawDocumentBuf,
        data: Option<&str>,
    ) -> anyhow::Result<()> {
        let amount = p.amount as f64;
        let mut update = doc! {"$inc": {"C_BALANCE": -amount, "C_YTD_PAYMENT": amount,
        "C_PAYMENT_CNT": 1}};
        if let Some(data) = data {
            update.insert("$set", doc! {"C_DATA": data});
        }
        let filter = doc! {"_id": field(&customer, "_id"), "$comment": PAYMENT_COMMENT};
        self.x.update(CUSTOMER, &filter, &update)
    }

    fn history(&mut self, p: &input::Payment, _: i64, h_data: &str) -> anyhow::Result<()> {
        let history = doc! {"H_D_ID": int(p.d), "H_W_ID": int(p.w), "H_DATE": now(),
        "H_AMOUNT": p.amount as f64, "H_DATA": h_data};
        self.x.insert(HISTORY, history)
    }
}

/// Payment's findAndModify of the district or the warehouse (its `prefix`): `$inc` of its
/// YTD by `amount`, its name and address read as they were.
fn pay(
    x: &mut Tx,
    (name, prefix): (&str, &str),
    filter: &Document,
    amount: f64,
) -> anyhow::Result<RawDocumentBuf> {
    let mut projection = Document::new();
    for field in ["NAME", "STREET_1", "STREET_2", "CITY", "STATE", "ZIP"] {
        projection.insert(format!("{prefix}{field}"), 1);
    }
    let inc = doc! {"$inc": {format!("{prefix}YTD"): amount}};
    let m = Modify {
        filter,
        sort: None,
        projection: Some(&projection),
        update: Some(&inc),
    };
    Ok(x.modify(name, m)?.unwrap_or_default())
}

/// Order-Status as py-tpcc's `_doOrderStatusTxn`: the customer, then its last order with
/// the order's lines inside it.
const ORDER_STATUS_COMMENT: &str = "ORDER_STATUS";

impl OrderStatusStore for Tx<'_> {
    fn customer(&mut self, s: &input::OrderStatus, _: Follow) -> anyhow::Result<i64> {
        let search =
            doc! {"C_W_ID": int(s.w), "C_D_ID": int(s.d), "$comment": ORDER_STATUS_COMMENT};
        let fields = doc! {"_id": 0, "C_ID": 1, "C_FIRST": 1, "C_MIDDLE": 1, "C_LAST": 1,
        "C_BALANCE": 1};
        let last = s.by_name.then_some(s.last.as_str());
        let customer = self.find_customer(search, &fields, s.c, last)?;
        Ok(num(&customer, "C_ID") as i64)
    }

    fn last_order(&mut self, s: &input::OrderStatus, c: i64) -> anyhow::Result<i64> {
        let filter = doc! {"O_W_ID": int(s.w), "O_D_ID": int(s.d), "O_C_ID": int(c),
        "$comment": ORDER_STATUS_COMMENT};
        let fields = doc! {"O_ID": 1, "O_CARRIER_ID": 1, "O_ENTRY_D": 1, "ORDER_LINE": 1};
        let newest = doc! {"O_ID": -1};
        let find = Find::new(&filter).project(&fields).sort(&newest).limit(1);
        let order = self.find(ORDERS, find)?;
        Ok(order.first().map_or(0, |o| num(o, "O_ID") as i64))
    }

    /// The last order held its lines.
    fn lines(&mut self, _: &input::OrderStatus, _: i64) -> anyhow::Result<()> {
        Ok(())
    }
}
