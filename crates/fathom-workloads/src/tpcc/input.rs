//! What a terminal keys in for each transaction, drawn as sysbench-tpcc's `tpcc_run.lua` draws
//! it (in its order), apart from how a family runs the transaction: the sql and kv terminals
//! take the same inputs from the same seed.

use super::gen::{last_name, Draws, Follow, CUSTOMERS, DISTRICTS, ITEMS};
use super::TpccKind;
use fathom_api::kind::Done;
use fathom_api::retry::{retryable, retrying};

/// A New-Order's inputs.
pub struct NewOrder {
    pub t: usize,
    pub w: i64,
    pub d: i64,
    pub c: i64,
    /// Its lines as (item, supplying warehouse, quantity); item -1 is the unused item of a
    /// New-Order that rolls back.
    pub lines: Vec<(i64, i64, i64)>,
    /// 1 when every line is supplied by the home warehouse, else 0.
    pub all_local: i64,
}

/// A Payment's inputs.
pub struct Payment {
    pub t: usize,
    pub w: i64,
    pub d: i64,
    /// The customer's id, used when not `by_name`.
    pub c: i64,
    pub amount: i64,
    pub last: String,
    pub by_name: bool,
    /// The customer's warehouse and district (remote 15% of the time).
    pub cw: i64,
    pub cd: i64,
}

/// An Order-Status's inputs.
pub struct OrderStatus {
    pub t: usize,
    pub w: i64,
    pub d: i64,
    pub c: i64,
    pub last: String,
    pub by_name: bool,
}

/// A Delivery's inputs.
pub struct Delivery {
    pub t: usize,
    pub w: i64,
    pub carrier: i64,
}

/// A Stock-Level's inputs.
pub struct StockLevel {
    pub t: usize,
    pub w: i64,
    pub d: i64,
    pub level: i64,
}

/// One transaction's inputs, of whichever kind.
pub enum Drawn {
    NewOrder(NewOrder),
    Payment(Payment),
    OrderStatus(OrderStatus),
    Delivery(Delivery),
    StockLevel(StockLevel),
}

impl Drawn {
    /// The table copy (0-based) the transaction works on.
    pub fn copy(&self) -> usize {
        match self {
            Drawn::NewOrder(i) => i.t,
            Drawn::Payment(i) => i.t,
            Drawn::OrderStatus(i) => i.t,
            Drawn::Delivery(i) => i.t,
            Drawn::StockLevel(i) => i.t,
        }
    }
}

/// One terminal's random inputs over `tables` copies of `warehouses` warehouses.
pub struct Inputs {
    pub draws: Draws,
    pub tables: usize,
    pub warehouses: i64,
}

impl Inputs {
    pub fn follow(&self) -> Follow {
        self.draws.follow
    }

    /// The next transaction's kind: sysbench-tpcc's 10/23 New-Order, 10/23 Payment and 1/23
    /// each of the rest, or the specification's 45/43/4/4/4.
    pub fn kind(&mut self) -> TpccKind {
        let (u, bounds) = match self.draws.follow {
            Follow::SysbenchTpcc => (self.draws.uniform(1, 23), [10, 20, 21, 22]),
            Follow::Spec => (self.draws.uniform(1, 100), [45, 88, 92, 96]),
        };
        let at = bounds.iter().position(|&b| u <= b).unwrap_or(4);
        [
            TpccKind::NewOrder,
            TpccKind::Payment,
            TpccKind::OrderStatus,
            TpccKind::Delivery,
            TpccKind::StockLevel,
        ][at]
    }

    /// The inputs of a transaction of `kind`.
    pub fn draw(&mut self, kind: TpccKind) -> Drawn {
        match kind {
            TpccKind::NewOrder => Drawn::NewOrder(self.new_order()),
            TpccKind::Payment => Drawn::Payment(self.payment()),
            TpccKind::OrderStatus => Drawn::OrderStatus(self.order_status()),
            TpccKind::Delivery => Drawn::Delivery(self.delivery()),
            _ => Drawn::StockLevel(self.stock_level()),
        }
    }

    /// Which table copy (0-based) and warehouse a transaction works on.
    fn home(&mut self) -> (usize, i64) {
        let t = self.draws.uniform(1, self.tables as i64) as usize - 1;
        (t, self.draws.uniform(1, self.warehouses))
    }

    pub fn new_order(&mut self) -> NewOrder {
        let (t, w) = self.home();
        let d = self.draws.uniform(1, DISTRICTS);
        let c = self.draws.nurand(1023, 1, CUSTOMERS);
        let count = self.draws.uniform(5, 15);
        let rollback = self.draws.uniform(1, 100) == 1;
        // The line whose item does not exist: sysbench-tpcc's is the second to last, the
        // specification's the last.
        let unused = match self.draws.follow {
            Follow::SysbenchTpcc => count - 1,
            Follow::Spec => count,
        };
        let mut lines = Vec::with_capacity(count as usize);
        let mut all_local = 1;
        for i in 1..=count {
            let mut item = self.draws.nurand(8191, 1, ITEMS);
            if rollback && i == unused {
                item = -1;
            }
            let supply = match self.draws.uniform(1, 100) {
                1 => {
                    all_local = 0;
                    self.draws.other_warehouse(w, self.warehouses)
                }
                _ => w,
            };
            let quantity = self.draws.uniform(1, 10);
            lines.push((item, supply, quantity));
        }
        NewOrder {
            t,
            w,
            d,
            c,
            lines,
            all_local,
        }
    }

    pub fn payment(&mut self) -> Payment {
        let (t, w) = self.home();
        let d = self.draws.uniform(1, DISTRICTS);
        let c = self.draws.nurand(1023, 1, CUSTOMERS);
        let amount = self.draws.uniform(1, 5000);
        let last = last_name(self.draws.nurand(255, 0, 999));
        let by_name = self.draws.uniform(1, 100) <= 60;
        let (cw, cd) = match self.draws.uniform(1, 100) <= 85 {
            true => (w, d),
            false => (
                self.draws.other_warehouse(w, self.warehouses),
                self.draws.uniform(1, DISTRICTS),
            ),
        };
        Payment {
            t,
            w,
            d,
            c,
            amount,
            last,
            by_name,
            cw,
            cd,
        }
    }

    pub fn order_status(&mut self) -> OrderStatus {
        let (t, w) = self.home();
        let d = self.draws.uniform(1, DISTRICTS);
        let c = self.draws.nurand(1023, 1, CUSTOMERS);
        let last = last_name(self.draws.nurand(255, 0, 999));
        let by_name = self.draws.uniform(1, 100) <= 60;
        OrderStatus {
            t,
            w,
            d,
            c,
            last,
            by_name,
        }
    }

    pub fn delivery(&mut self) -> Delivery {
        let (t, w) = self.home();
        let carrier = self.draws.uniform(1, 10);
        Delivery { t, w, carrier }
    }

    pub fn stock_level(&mut self) -> StockLevel {
        let (t, w) = self.home();
        let d = self.draws.uniform(1, DISTRICTS);
        let level = self.draws.uniform(10, 20);
        StockLevel { t, w, d, level }
    }
}

/// Order-Status reads the lines of which order: sysbench-tpcc's statement has one value too
/// many and gives `ol_o_id` the district; the specification's is the customer's last order.
pub fn status_lines_of(follow: Follow, d: i64, last_order: i64) -> i64 {
    match follow {
        Follow::SysbenchTpcc => d,
        Follow::Spec => last_order,
    }
}

/// Payment's new `c_data` for a `BC` customer: the payment, then the old data, 500
/// characters kept.
pub fn bad_credit_data(p: &Payment, c: i64, old: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.as_secs());
    let (cw, cd, d, w) = (p.cw, p.cd, p.d, p.w);
    let mut new = format!(
        "| {c:4} {cd:2} {cw:4} {d:2} {w:4} ${:7.2} {now:>12} {old:>24}",
        p.amount as f64,
    );
    new.truncate(500);
    new
}

/// A New-Order line's amount: quantity × price × (1 + taxes) × (1 − discount), whole (as
/// sysbench-tpcc writes it, with `%d`) or to the cent (the specification).
pub fn line_amount(follow: Follow, quantity: i64, price: f64, taxes: f64, discount: f64) -> f64 {
    let amount = quantity as f64 * price * (1.0 + taxes) * (1.0 - discount);
    match follow {
        Follow::SysbenchTpcc => amount.trunc(),
        Follow::Spec => (amount * 100.0).round() / 100.0,
    }
}

/// What a terminal's transaction counts: the kind it ended as, one row, the retries it took
/// and the bytes it read.
pub fn done(ran: Ran, bytes: u64) -> Option<Done> {
    Some(if ran.failed {
        Done {
            failed: true,
            ..Done::of(ran.kind)
        }
    } else {
        Done {
            bytes,
            rows: 1,
            retries: ran.retries,
            ..Done::of(ran.kind)
        }
    })
}

/// How one transaction ended: its kind (a New-Order that rolled back is its own), the times
/// it ran again, and whether it failed for good.
pub struct Ran {
    pub kind: TpccKind,
    pub retries: u32,
    pub failed: bool,
}

/// Runs a transaction of `kind` (`txn`, which undoes itself on failure) as `follow` says after
/// a deadlock or serialization failure. sysbench-tpcc's: not again — the failure is the
/// transaction's, counted as failed (sysbench's "ignored errors"), and the terminal draws its
/// next transaction of any kind, so the committed mix leans away from the kinds that conflict
/// most. The specification's: again, as a fresh transaction of the same kind through fathom's
/// retry policy, so the committed mix stays the drawn one.
pub fn attempt(
    follow: Follow,
    kind: TpccKind,
    mut txn: impl FnMut() -> anyhow::Result<TpccKind>,
) -> anyhow::Result<Ran> {
    match follow {
        Follow::Spec => retrying(txn).map(|(kind, retries)| Ran {
            kind,
            retries,
            failed: false,
        }),
        Follow::SysbenchTpcc => match txn() {
            Ok(kind) => Ok(Ran {
                kind,
                retries: 0,
                failed: false,
            }),
            Err(e) if retryable(&e) => Ok(Ran {
                kind,
                retries: 0,
                failed: true,
            }),
            Err(e) => Err(e),
        },
    }
}
