//! TPC-C's Delivery and Stock-Level written once, over stores each family implements with its
//! original's commands. Delivery: per district, the oldest new order taken, its order given
//! the carrier and its lines the delivery date, the customer credited with the lines' total.
//! Stock-Level: the district's next order number, then the stock below the threshold among the
//! items of the 20 orders before it.

use super::gen::DISTRICTS;
use super::input::{Delivery, StockLevel};

/// Delivery's reads and writes on one family, in its original's commands.
pub trait DeliveryStore {
    /// The lines' total as the family keeps amounts.
    type Total;
    /// District `d`'s oldest new order, taken (deleted); its number, `None` when it has none.
    fn take_oldest(&mut self, i: &Delivery, d: i64) -> anyhow::Result<Option<i64>>;
    /// Order `o` given the carrier and its lines the delivery date; its customer and the
    /// lines' total.
    fn deliver(&mut self, i: &Delivery, d: i64, o: i64) -> anyhow::Result<(i64, Self::Total)>;
    /// Customer `c` credited with `total`.
    fn credit(&mut self, i: &Delivery, d: i64, c: i64, total: Self::Total) -> anyhow::Result<()>;
}

/// One Delivery (all ten districts) on `store`.
pub fn deliver<S: DeliveryStore>(store: &mut S, i: &Delivery) -> anyhow::Result<()> {
    for d in 1..=DISTRICTS {
        let Some(o) = store.take_oldest(i, d)? else {
            continue;
        };
        let (c, total) = store.deliver(i, d, o)?;
        store.credit(i, d, c, total)?;
    }
    Ok(())
}

/// How many orders back Stock-Level looks.
pub const STOCK_LEVEL_ORDERS: i64 = 20;

/// Stock-Level's reads on one family, in its original's commands.
pub trait StockLevelStore {
    /// The district's next order number.
    fn next_order(&mut self, i: &StockLevel) -> anyhow::Result<i64>;
    /// Counts the items in the lines of orders `orders` (a range of numbers) whose stock is
    /// below the threshold (the count is not kept: the originals do not use it).
    fn low_stock(&mut self, i: &StockLevel, orders: std::ops::Range<i64>) -> anyhow::Result<()>;
}

/// One Stock-Level on `store`.
pub fn stock_level<S: StockLevelStore>(store: &mut S, i: &StockLevel) -> anyhow::Result<()> {
    let o = store.next_order(i)?;
    store.low_stock(i, o - STOCK_LEVEL_ORDERS..o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Districts 3 and 7 have no new order.
    struct Calls(Vec<String>);

    impl DeliveryStore for Calls {
        type Total = f64;
        fn take_oldest(&mut self, _: &Delivery, d: i64) -> anyhow::Result<Option<i64>> {
            Ok((d != 3 && d != 7).then_some(d * 100))
        }
        fn deliver(&mut self, _: &Delivery, d: i64, o: i64) -> anyhow::Result<(i64, f64)> {
            self.0.push(format!("deliver {d}/{o}"));
            Ok((d, 1.5))
        }
        fn credit(&mut self, _: &Delivery, d: i64, c: i64, total: f64) -> anyhow::Result<()> {
            self.0.push(format!("credit {d}/{c} {total}"));
            Ok(())
        }
    }

    impl StockLevelStore for Calls {
        fn next_order(&mut self, _: &StockLevel) -> anyhow::Result<i64> {
            Ok(3_001)
        }
        fn low_stock(&mut self, _: &StockLevel, o: std::ops::Range<i64>) -> anyhow::Result<()> {
            self.0.push(format!("low {o:?}"));
            Ok(())
        }
    }

    #[test]
    fn delivery_skips_a_district_without_new_orders() {
        let mut c = Calls(Vec::new());
        deliver(
            &mut c,
            &Delivery {
                t: 0,
                w: 1,
                carrier: 5,
            },
        )
        .unwrap();
        assert_eq!(c.0.len(), 16, "8 districts, two calls each");
        assert_eq!(c.0[..2], ["deliver 1/100", "credit 1/1 1.5"]);
        assert!(!c.0.iter().any(|s| s.contains(" 3/") || s.contains(" 7/")));
    }

    #[test]
    fn stock_level_reads_the_twenty_orders_before_the_next() {
        let mut c = Calls(Vec::new());
        let i = StockLevel {
            t: 0,
            w: 1,
            d: 2,
            level: 15,
        };
        stock_level(&mut c, &i).unwrap();
        assert_eq!(c.0, ["low 2981..3001"]);
    }
}
