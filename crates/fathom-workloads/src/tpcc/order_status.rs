//! TPC-C's Order-Status written once: the customer (by id, or the one the original picks among
//! those of a last name), its newest order, and that order's lines — over a store each family
//! implements with its original's commands. Which order's lines are read follows `Follow`
//! (sysbench-tpcc's statement reads the district's number as the order's).

use super::gen::Follow;
use super::input::{self, OrderStatus};

/// Order-Status's reads on one family, in its original's commands.
pub trait OrderStatusStore {
    /// The customer, by id or (with `s.by_name`) the one the original picks among those of
    /// that last name (`follow`); its id.
    fn customer(&mut self, s: &OrderStatus, follow: Follow) -> anyhow::Result<i64>;
    /// Customer `c`'s newest order; its number (0 when it has none).
    fn last_order(&mut self, s: &OrderStatus, c: i64) -> anyhow::Result<i64>;
    /// The lines of order `o` (nothing more to read where an order holds its lines).
    fn lines(&mut self, s: &OrderStatus, o: i64) -> anyhow::Result<()>;
}

/// One Order-Status on `store`.
pub fn run<S: OrderStatusStore>(
    store: &mut S,
    s: &OrderStatus,
    follow: Follow,
) -> anyhow::Result<()> {
    let c = store.customer(s, follow)?;
    let last = store.last_order(s, c)?;
    store.lines(s, input::status_lines_of(follow, s.d, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Calls(Vec<String>);

    impl OrderStatusStore for Calls {
        fn customer(&mut self, s: &OrderStatus, _: Follow) -> anyhow::Result<i64> {
            self.0.push(format!("customer {}", s.c));
            Ok(s.c)
        }
        fn last_order(&mut self, _: &OrderStatus, c: i64) -> anyhow::Result<i64> {
            self.0.push(format!("last order of {c}"));
            Ok(2_100)
        }
        fn lines(&mut self, _: &OrderStatus, o: i64) -> anyhow::Result<()> {
            self.0.push(format!("lines of {o}"));
            Ok(())
        }
    }

    /// The customer, its last order, that order's lines — or, as sysbench-tpcc, the lines of
    /// the order numbered as the district.
    #[test]
    fn the_lines_read_are_the_last_orders_or_sysbench_tpccs() {
        let s = OrderStatus {
            t: 0,
            w: 1,
            d: 7,
            c: 5,
            last: String::new(),
            by_name: false,
        };
        let calls = |follow| {
            let mut c = Calls(Vec::new());
            run(&mut c, &s, follow).unwrap();
            c.0
        };
        assert_eq!(
            calls(Follow::Spec),
            ["customer 5", "last order of 5", "lines of 2100"]
        );
        assert_eq!(calls(Follow::SysbenchTpcc)[2], "lines of 7");
    }
}
