//! TPC-C's New-Order written once: what it reads, what it computes and what it writes, over a
//! store each family implements with its original's commands (sysbench-tpcc's statements on
//! SQL, their translation on kv, py-tpcc's on documents). Where the two originals differ (when
//! the items are read, whether the district comes first, the stock rule, a line's amount)
//! the store's `Original` says which, and the difference is written here, once.

use super::gen::Follow;
use super::input::{self, NewOrder};

/// Whose New-Order a family sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Original {
    /// sysbench-tpcc's `tpcc_run.lua`: the customer and the warehouse, the district taken for
    /// update, the order, then per line its item, its stock and the line; a line's amount
    /// with taxes and discount; the stock down by the quantity while more than it is left.
    SysbenchTpcc,
    /// py-tpcc's `_doNewOrderTxn`: the district taken first, the items, the warehouse and the
    /// customer, the new order, every line's stock at once, the order with its lines last; a
    /// line's amount is quantity × price; the specification's stock rule (10 or more left).
    PyTpcc,
}

/// When a store reads the order's items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Items {
    /// Each line's item as the line is written (sysbench-tpcc): a missing item rolls back
    /// what the transaction wrote.
    PerLine,
    /// All of them before anything else, so a New-Order that rolls back wrote nothing (the kv
    /// translation; py-tpcc on a server without transactions, which could not undo a write).
    First,
    /// All of them right after the district is taken (py-tpcc in a transaction).
    AfterDistrict,
}

/// What the customer and the warehouse say of an order's price.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rates {
    pub discount: f64,
    pub w_tax: f64,
}

/// The order's number, taken from its district (whose next number moved on), and the
/// district's tax.
#[derive(Clone, Copy, Debug, Default)]
pub struct Taken {
    pub o: i64,
    pub d_tax: f64,
}

/// An order line as New-Order writes it.
#[derive(Clone, Copy, Debug)]
pub struct Line {
    /// The order's number.
    pub o: i64,
    /// Its number in the order, from 1.
    pub number: i64,
    pub item: i64,
    pub supply: i64,
    pub quantity: i64,
    /// The stock's quantity after the line.
    pub left: i64,
    /// The line's amount, by the original's rule (`Original`).
    pub amount: f64,
}

/// New-Order's reads and writes on one family, in its original's commands.
pub trait NewOrderStore {
    /// A stock row as read, for the write of its line.
    type Stock;
    fn original(&self) -> Original;
    fn items(&self) -> Items;
    /// The price of one item; `None` when it is missing.
    fn price(&mut self, item: i64) -> anyhow::Result<Option<f64>>;
    /// The prices of the order's items, in line order; `None` when one is missing. By default
    /// each line's `price`, stopping at the missing one.
    fn prices(&mut self, order: &NewOrder) -> anyhow::Result<Option<Vec<f64>>> {
        let mut prices = Vec::with_capacity(order.lines.len());
        for &(item, _, _) in &order.lines {
            match self.price(item)? {
                Some(price) => prices.push(price),
                None => return Ok(None),
            }
        }
        Ok(Some(prices))
    }
    /// The customer's discount and the warehouse's tax.
    fn rates(&mut self, order: &NewOrder) -> anyhow::Result<Rates>;
    /// The order's number taken from its district, the district's next number advanced.
    fn take(&mut self, order: &NewOrder) -> anyhow::Result<Taken>;
    /// The order's rows before its lines (its order and new-order rows where the family
    /// writes them first).
    fn open(&mut self, order: &NewOrder, o: i64) -> anyhow::Result<()>;
    /// The stock of `item` from warehouse `supply`: its quantity and the row.
    fn stock(
        &mut self,
        order: &NewOrder,
        item: i64,
        supply: i64,
    ) -> anyhow::Result<(i64, Self::Stock)>;
    /// A line's stock written back and the line written (or kept for `close`).
    fn line(&mut self, order: &NewOrder, line: &Line, stock: Self::Stock) -> anyhow::Result<()>;
    /// What the family writes after the lines; `total` is the order's total where the original
    /// computes one.
    fn close(&mut self, _order: &NewOrder, _o: i64, _total: f64) -> anyhow::Result<()> {
        Ok(())
    }
}

/// New-Order on `store`: true when it committed its work, false when it rolled back at its
/// missing item (the caller ends the transaction either way).
pub fn run<S: NewOrderStore>(
    store: &mut S,
    order: &NewOrder,
    follow: Follow,
) -> anyhow::Result<bool> {
    let original = store.original();
    let mut prices = None;
    if store.items() == Items::First {
        prices = store.prices(order)?;
        if prices.is_none() {
            return Ok(false);
        }
    }
    let (rates, taken) = match original {
        Original::SysbenchTpcc => (store.rates(order)?, store.take(order)?),
        Original::PyTpcc => {
            let taken = store.take(order)?;
            if store.items() == Items::AfterDistrict {
                prices = store.prices(order)?;
                if prices.is_none() {
                    return Ok(false);
                }
            }
            (store.rates(order)?, taken)
        }
    };
    store.open(order, taken.o)?;
    let taxes = rates.w_tax + taken.d_tax;
    let mut total = 0.0;
    for (at, &(item, supply, quantity)) in order.lines.iter().enumerate() {
        let price = match &prices {
            Some(prices) => prices[at],
            None => match store.price(item)? {
                Some(price) => price,
                None => return Ok(false),
            },
        };
        let (stocked, stock) = store.stock(order, item, supply)?;
        let amount = match original {
            Original::SysbenchTpcc => {
                input::line_amount(follow, quantity, price, taxes, rates.discount)
            }
            Original::PyTpcc => quantity as f64 * price,
        };
        total += amount;
        let line = Line {
            o: taken.o,
            number: at as i64 + 1,
            item,
            supply,
            quantity,
            left: stock_left(original, stocked, quantity),
            amount,
        };
        store.line(order, &line, stock)?;
    }
    if original == Original::PyTpcc {
        total *= (1.0 - rates.discount) * (1.0 + taxes);
    }
    store.close(order, taken.o, total)?;
    Ok(true)
}

/// The stock left after a line of `quantity` from `stocked`: down by the quantity, or up by 91
/// when too little would be left (sysbench-tpcc: not more than the quantity; py-tpcc and the
/// specification: less than 10 left).
pub fn stock_left(original: Original, stocked: i64, quantity: i64) -> i64 {
    let enough = match original {
        Original::SysbenchTpcc => stocked > quantity,
        Original::PyTpcc => stocked >= quantity + 10,
    };
    match enough {
        true => stocked - quantity,
        false => stocked - quantity + 91,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store that writes down what New-Order asked of it, in order.
    struct Recorder {
        original: Original,
        items: Items,
        calls: Vec<String>,
    }

    const MISSING: i64 = -1;

    impl NewOrderStore for Recorder {
        type Stock = ();

        fn original(&self) -> Original {
            self.original
        }

        fn items(&self) -> Items {
            self.items
        }

        fn prices(&mut self, o: &NewOrder) -> anyhow::Result<Option<Vec<f64>>> {
            self.calls.push("prices".into());
            let missing = o.lines.iter().any(|l| l.0 == MISSING);
            Ok((!missing).then(|| o.lines.iter().map(|_| 2.0).collect()))
        }

        fn price(&mut self, item: i64) -> anyhow::Result<Option<f64>> {
            self.calls.push(format!("price {item}"));
            Ok((item != MISSING).then_some(2.0))
        }

        fn rates(&mut self, _: &NewOrder) -> anyhow::Result<Rates> {
            self.calls.push("rates".into());
            Ok(Rates {
                discount: 0.5,
                w_tax: 0.25,
            })
        }

        fn take(&mut self, _: &NewOrder) -> anyhow::Result<Taken> {
            self.calls.push("take".into());
            Ok(Taken { o: 7, d_tax: 0.25 })
        }

        fn open(&mut self, _: &NewOrder, o: i64) -> anyhow::Result<()> {
            self.calls.push(format!("open {o}"));
            Ok(())
        }

        fn stock(&mut self, _: &NewOrder, item: i64, _: i64) -> anyhow::Result<(i64, ())> {
            self.calls.push(format!("stock {item}"));
            Ok((12, ()))
        }

        fn line(&mut self, _: &NewOrder, l: &Line, _: ()) -> anyhow::Result<()> {
            let (o, n, left, amount) = (l.o, l.number, l.left, l.amount);
            self.calls
                .push(format!("line {o}.{n} left {left} amount {amount}"));
            Ok(())
        }

        fn close(&mut self, _: &NewOrder, o: i64, total: f64) -> anyhow::Result<()> {
            self.calls.push(format!("close {o} total {total}"));
            Ok(())
        }
    }

    fn calls(original: Original, items: Items, last_item: i64) -> (bool, Vec<String>) {
        let order = NewOrder {
            t: 0,
            w: 1,
            d: 2,
            c: 3,
            lines: vec![(10, 1, 5), (last_item, 1, 5)],
            all_local: 1,
        };
        let mut r = Recorder {
            original,
            items,
            calls: Vec::new(),
        };
        let committed = run(&mut r, &order, Follow::SysbenchTpcc).unwrap();
        (committed, r.calls)
    }

    #[test]
    fn each_original_sends_new_order_in_its_own_order() {
        // sysbench-tpcc: 5 × 2.0 × 1.5 × 0.5 = 7.5, written whole; 12 > 5 left: 7.
        let (done, sql) = calls(Original::SysbenchTpcc, Items::PerLine, 11);
        assert!(done);
        assert_eq!(
            sql,
            [
                "rates",
                "take",
                "open 7",
                "price 10",
                "stock 10",
                "line 7.1 left 7 amount 7",
                "price 11",
                "stock 11",
                "line 7.2 left 7 amount 7",
                "close 7 total 14"
            ]
        );
        let (_, kv) = calls(Original::SysbenchTpcc, Items::First, 11);
        assert_eq!(kv[..3], ["prices", "rates", "take"]);
        // py-tpcc: the district first; a line is quantity × price; 12 < 5 + 10: up by 91.
        let (_, doc) = calls(Original::PyTpcc, Items::AfterDistrict, 11);
        assert_eq!(
            doc,
            [
                "take",
                "prices",
                "rates",
                "open 7",
                "stock 10",
                "line 7.1 left 98 amount 10",
                "stock 11",
                "line 7.2 left 98 amount 10",
                "close 7 total 15"
            ]
        );
    }

    #[test]
    fn a_missing_item_rolls_back_where_the_original_reads_it() {
        let (done, sql) = calls(Original::SysbenchTpcc, Items::PerLine, MISSING);
        assert!(!done);
        assert_eq!(sql.last().unwrap(), "price -1");
        assert!(sql.iter().any(|c| c.starts_with("line 7.1")), "{sql:?}");
        for items in [Items::First, Items::AfterDistrict] {
            let (done, calls) = calls(Original::PyTpcc, items, MISSING);
            assert!(!done);
            assert_eq!(calls.last().unwrap(), "prices");
            assert!(!calls.iter().any(|c| c.starts_with("open")), "{calls:?}");
        }
    }

    #[test]
    fn the_originals_stock_rules_part_at_ten_left() {
        assert_eq!(stock_left(Original::SysbenchTpcc, 15, 5), 10);
        assert_eq!(stock_left(Original::PyTpcc, 15, 5), 10);
        assert_eq!(stock_left(Original::SysbenchTpcc, 12, 5), 7);
        assert_eq!(stock_left(Original::PyTpcc, 12, 5), 98);
        assert_eq!(stock_left(Original::SysbenchTpcc, 5, 5), 91);
    }
}
