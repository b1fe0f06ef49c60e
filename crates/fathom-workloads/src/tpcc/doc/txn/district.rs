//! Delivery and Stock-Level, the district's transactions, with py-tpcc's commands.

use super::super::{coll, int, num, CUSTOMER, DISTRICT, NEW_ORDER, ORDERS, STOCK};
use super::{field, ints, Tx};
use crate::tpcc::delivery::{DeliveryStore, StockLevelStore};
use crate::tpcc::input;
use fathom_api::doc::bson::{doc, Bson, Document};
use fathom_api::doc::{Find, Modify};
use std::collections::BTreeSet;

/// Delivery as py-tpcc's `_doDelivery10Txn`: per district the oldest new order taken and
/// deleted, its order given the carrier and every line the delivery date, the customer
/// credited with the lines' total; `date` the delivery date every line gets.
pub(super) struct DocDelivery<'x, 'a> {
    pub(super) x: &'x mut Tx<'a>,
    pub(super) date: Bson,
}

/// py-tpcc's comment on district `d`'s commands of a Delivery.
fn delivery_comment(d: i64) -> String {
    format!("DELIVERY {d}")
}

impl DeliveryStore for DocDelivery<'_, '_> {
    type Total = f64;

    fn take_oldest(&mut self, i: &input::Delivery, d: i64) -> anyhow::Result<Option<i64>> {
        let comment = delivery_comment(d);
        let filter = doc! {"NO_D_ID": int(d), "NO_W_ID": int(i.w), "$comment": comment.as_str()};
        let projection = doc! {"_id": 0, "NO_D_ID": 1, "NO_W_ID": 1, "NO_O_ID": 1};
        let oldest = doc! {"NO_O_ID": 1};
        let taken = self.x.modify(
            NEW_ORDER,
            Modify {
                filter: &filter,
                sort: Some(&oldest),
                projection: Some(&projection),
                update: None,
            },
        )?;
        Ok(taken.map(|t| num(&t, "NO_O_ID") as i64))
    }

    fn deliver(&mut self, i: &input::Delivery, d: i64, o: i64) -> anyhow::Result<(i64, f64)> {
        let (x, w, date) = (&mut *self.x, i.w, &self.date);
        let comment = delivery_comment(d);
        let filter = doc! {"O_ID": int(o), "O_D_ID": int(d), "O_W_ID": int(w),
        "$comment": comment.as_str()};
        let order = match x.server.all_positional {
            true => {
                let set = doc! {"$set": {"O_CARRIER_ID": int(i.carrier),
                "ORDER_LINE.$[].OL_DELIVERY_D": date.clone()}};
                x.modify(ORDERS, Modify::update(&filter, &set))?
            }
            false => {
                // Without `$[]`: the carrier set as the order is read, then each line's date
                // by its position, in a second command.
                let set = doc! {"$set": {"O_CARRIER_ID": int(i.carrier)}};
                let order = x.modify(ORDERS, Modify::update(&filter, &set))?;
                if let Some(order) = &order {
                    let mut dates = Document::new();
                    for n in 0..order.get_array("ORDER_LINE")?.into_iter().count() {
                        dates.insert(format!("ORDER_LINE.{n}.OL_DELIVERY_D"), date.clone());
                    }
                    let by_id = doc! {"_id": field(order, "_id"), "$comment": comment.as_str()};
                    x.update(ORDERS, &by_id, &doc! {"$set": dates})?;
                }
                order
            }
        };
        let order = order.unwrap_or_default();
        let mut total = 0.0;
        for line in order.get_array("ORDER_LINE")? {
            if let Some(line) = line?.as_document() {
                total += num(line, "OL_AMOUNT");
            }
        }
        Ok((num(&order, "O_C_ID") as i64, total))
    }

    fn credit(&mut self, i: &input::Delivery, d: i64, c: i64, total: f64) -> anyhow::Result<()> {
        let comment = delivery_comment(d);
        let filter = doc! {"C_ID": int(c), "C_D_ID": int(d), "C_W_ID": int(i.w),
        "$comment": comment.as_str()};
        self.x
            .update(CUSTOMER, &filter, &doc! {"$inc": {"C_BALANCE": total}})
    }
}

/// Stock-Level as py-tpcc's `_doStockLevelTxn`: the district's next order, the item ids of
/// its last 20 orders' lines, and a count of their stock below the threshold.
const STOCK_LEVEL_COMMENT: &str = "STOCK_LEVEL";

impl StockLevelStore for Tx<'_> {
    fn next_order(&mut self, i: &input::StockLevel) -> anyhow::Result<i64> {
        let filter = doc! {"D_W_ID": int(i.w), "D_ID": int(i.d), "$comment": STOCK_LEVEL_COMMENT};
        let district = self.find_one(DISTRICT, &filter, &doc! {"_id": 0, "D_NEXT_O_ID": 1})?;
        Ok(num(&district, "D_NEXT_O_ID") as i64)
    }

    fn low_stock(
        &mut self,
        i: &input::StockLevel,
        orders: std::ops::Range<i64>,
    ) -> anyhow::Result<()> {
        let filter = doc! {"O_W_ID": int(i.w), "O_D_ID": int(i.d),
        "O_ID": {"$lt": int(orders.end), "$gte": int(orders.start)}, "$comment": STOCK_LEVEL_COMMENT};
        let fields = doc! {"ORDER_LINE.OL_I_ID": 1};
        let mut items = BTreeSet::new();
        for order in self.find(ORDERS, Find::new(&filter).project(&fields))? {
            for line in order.get_array("ORDER_LINE")? {
                if let Some(line) = line?.as_document() {
                    items.insert(num(line, "OL_I_ID") as i64);
                }
            }
        }
        let filter = doc! {"S_W_ID": int(i.w), "S_I_ID": {"$in": ints(items)},
        "S_QUANTITY": {"$lt": int(i.level)}, "$comment": STOCK_LEVEL_COMMENT};
        let low = self.s.count(&coll(STOCK, self.t), &filter)?;
        std::hint::black_box(low);
        Ok(())
    }
}
