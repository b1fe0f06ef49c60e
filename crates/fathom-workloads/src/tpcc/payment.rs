//! TPC-C's Payment written once: the warehouse and the district paid (in the order the
//! original takes them), the customer found, paid and, with bad credit, its data prefixed with
//! the payment, and the history row — over a store each family implements with its original's
//! commands. What differs between sysbench-tpcc and py-tpcc (which comes first, the text of the
//! customer's data and of the history row) is said here, by `Original`.

use super::gen::Follow;
use super::input::{self, Payment};
use super::new_order::Original;

/// Payment's reads and writes on one family, in its original's commands.
pub trait PaymentStore {
    /// A customer as read for the payment, for its write.
    type Customer;
    fn original(&self) -> Original;
    /// The warehouse's year-to-date total raised by the payment; the warehouse's name.
    fn warehouse(&mut self, p: &Payment) -> anyhow::Result<String>;
    /// The district's year-to-date total raised by the payment; the district's name.
    fn district(&mut self, p: &Payment) -> anyhow::Result<String>;
    /// The paying customer, by id or (with `p.by_name`) the one the original picks among
    /// those of that last name (`follow`), read for update; its id.
    fn customer(&mut self, p: &Payment, follow: Follow) -> anyhow::Result<(i64, Self::Customer)>;
    /// True when the customer has bad credit (`BC`).
    fn bad_credit(&self, customer: &Self::Customer) -> bool;
    /// A bad-credit customer's data as stored (read now where the original reads it apart).
    fn data(&mut self, p: &Payment, c: i64, customer: &Self::Customer) -> anyhow::Result<String>;
    /// The customer's balance down and year-to-date payment up by the amount, and its data
    /// replaced by `data` where given.
    fn pay(
        &mut self,
        p: &Payment,
        c: i64,
        customer: Self::Customer,
        data: Option<&str>,
    ) -> anyhow::Result<()>;
    /// The history row of the payment, `h_data` its text.
    fn history(&mut self, p: &Payment, c: i64, h_data: &str) -> anyhow::Result<()>;
}

/// One Payment on `store`.
pub fn run<S: PaymentStore>(store: &mut S, p: &Payment, follow: Follow) -> anyhow::Result<()> {
    let original = store.original();
    let (w_name, d_name) = match original {
        Original::SysbenchTpcc => {
            let w = store.warehouse(p)?;
            (w, store.district(p)?)
        }
        Original::PyTpcc => {
            let d = store.district(p)?;
            (store.warehouse(p)?, d)
        }
    };
    let (c, customer) = store.customer(p, follow)?;
    let data = match store.bad_credit(&customer) {
        true => Some(credit_data(original, p, c, &store.data(p, c, &customer)?)),
        false => None,
    };
    store.pay(p, c, customer, data.as_deref())?;
    store.history(p, c, &history_data(original, &w_name, &d_name))
}

/// A bad-credit customer's new data: the payment, then the old data, 500 characters kept.
pub fn credit_data(original: Original, p: &Payment, c: i64, old: &str) -> String {
    match original {
        Original::SysbenchTpcc => input::bad_credit_data(p, c, old),
        // py-tpcc's `" ".join(map(str, [c_id, c_d_id, c_w_id, d_id, w_id, h_amount]))`.
        Original::PyTpcc => {
            let new = format!(
                "{c} {} {} {} {} {:?}",
                p.cd, p.cw, p.d, p.w, p.amount as f64
            );
            let mut data = format!("{new}|{old}");
            data.truncate(500);
            data
        }
    }
}

/// The history row's text: the warehouse's and the district's names.
pub fn history_data(original: Original, w_name: &str, d_name: &str) -> String {
    match original {
        Original::SysbenchTpcc => format!("{w_name:>10} {d_name:>10}   "),
        Original::PyTpcc => format!("{w_name}    {d_name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store that records its calls.
    struct Calls {
        original: Original,
        bad: bool,
        calls: Vec<String>,
    }

    impl PaymentStore for Calls {
        type Customer = ();
        fn original(&self) -> Original {
            self.original
        }
        fn warehouse(&mut self, _: &Payment) -> anyhow::Result<String> {
            self.calls.push("warehouse".into());
            Ok("W".into())
        }
        fn district(&mut self, _: &Payment) -> anyhow::Result<String> {
            self.calls.push("district".into());
            Ok("D".into())
        }
        fn customer(&mut self, p: &Payment, _: Follow) -> anyhow::Result<(i64, ())> {
            self.calls.push("customer".into());
            Ok((p.c, ()))
        }
        fn bad_credit(&self, _: &()) -> bool {
            self.bad
        }
        fn data(&mut self, _: &Payment, _: i64, _: &()) -> anyhow::Result<String> {
            self.calls.push("data".into());
            Ok("old".into())
        }
        fn pay(&mut self, _: &Payment, _: i64, _: (), data: Option<&str>) -> anyhow::Result<()> {
            self.calls
                .push(format!("pay {}", data.map_or("-", |d| &d[..2])));
            Ok(())
        }
        fn history(&mut self, _: &Payment, _: i64, h_data: &str) -> anyhow::Result<()> {
            self.calls.push(format!("history {h_data:?}"));
            Ok(())
        }
    }

    fn payment() -> Payment {
        Payment {
            t: 0,
            w: 1,
            d: 2,
            c: 3,
            amount: 42,
            last: String::new(),
            by_name: false,
            cw: 1,
            cd: 2,
        }
    }

    fn calls(original: Original, bad: bool) -> Vec<String> {
        let mut s = Calls {
            original,
            bad,
            calls: Vec::new(),
        };
        run(&mut s, &payment(), Follow::Spec).unwrap();
        s.calls
    }

    #[test]
    fn each_original_pays_in_its_own_order() {
        assert_eq!(
            calls(Original::SysbenchTpcc, false),
            [
                "warehouse",
                "district",
                "customer",
                "pay -",
                "history \"         W          D   \""
            ]
        );
        assert_eq!(
            calls(Original::PyTpcc, true),
            [
                "district",
                "warehouse",
                "customer",
                "data",
                "pay 3 ",
                "history \"W    D\""
            ]
        );
    }

    #[test]
    fn bad_credit_data_leads_with_the_payment_and_keeps_500() {
        let p = payment();
        let py = credit_data(Original::PyTpcc, &p, 3, &"x".repeat(600));
        assert!(py.starts_with("3 2 1 2 1 42.0|x"), "{py}");
        assert_eq!(py.len(), 500);
        let sb = credit_data(Original::SysbenchTpcc, &p, 3, "old");
        assert!(sb.starts_with("|    3  2    1  2    1 $  42.00"), "{sb}");
    }
}
