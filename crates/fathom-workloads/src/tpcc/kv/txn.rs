//! TPC-C's five transactions on the kv family, each one engine transaction doing what
//! sysbench-tpcc's statements do: a row read FOR UPDATE is a read for update (RocksDB's
//! GetForUpdate), a plain SELECT a plain read in the transaction's snapshot, an UPDATE a put of
//! the changed row, a range a scan. The inputs are the sql terminal's (`input`), drawn again
//! when a conflict retries the transaction.

use super::load::key_of_order_by_customer;
use super::ORDER_BY_CUSTOMER;
use super::{cents, col, key, key_col, key_last, name_key, now, pk, Stored, Table};
use crate::rows::{encode_row, Col};
use crate::tpcc::delivery::{self, DeliveryStore, StockLevelStore};
use crate::tpcc::gen::{by_name_row, Follow};
use crate::tpcc::input::{self, Drawn, Inputs};
use crate::tpcc::new_order::{self, Items, Line, NewOrderStore, Original, Rates, Taken};
use crate::tpcc::order_status::{self, OrderStatusStore};
use crate::tpcc::payment::{self, PaymentStore};
use crate::tpcc::TpccKind;
use fathom_api::kind::Done;
use fathom_api::kv::{Direction, KvSession, KvTxn, Seek, TxnEnd};
use fathom_api::retry::EngineError;
use fathom_api::step::Client;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// One transaction's reads and writes on copy `t`, and the bytes it read.
struct Tx<'a> {
    txn: &'a mut dyn KvTxn,
    t: u32,
    bytes: u64,
    /// The row read last.
    value: Vec<u8>,
    /// The row about to be written.
    out: Vec<u8>,
}

impl<'a> Tx<'a> {
    /// A plain read of `table`'s row under `ints` into `self.value`; false (and no value)
    /// when absent.
    fn get(&mut self, table: Table, ints: &[i64]) -> anyhow::Result<bool> {
        let found = self
            .txn
            .read_plain(&pk(self.t, table, ints), &mut self.value)?;
        self.found(found)
    }

    /// A read for update of `table`'s row under `ints` into `self.value`. An absent row reads
    /// as one of zeros, as an UPDATE of no row changes nothing: on a database every row read
    /// so is there (only the null engine, which stores nothing, has none).
    fn lock(&mut self, table: Table, ints: &[i64]) -> anyhow::Result<bool> {
        let found = self.txn.read(&pk(self.t, table, ints), &mut self.value)?;
        self.found(found)
    }

    fn found(&mut self, found: bool) -> anyhow::Result<bool> {
        match found {
            true => self.bytes += self.value.len() as u64,
            false => self.value.clear(),
        }
        Ok(found)
    }

    /// Puts a row of `table` under `ints`.
    fn put(&mut self, table: Table, ints: &[i64], cols: &[Col]) -> anyhow::Result<()> {
        encode_row(cols, &mut self.out);
        self.txn.put(&pk(self.t, table, ints), &self.out)
    }

    /// Writes back the row read last, changed by `change`.
    fn update(
        &mut self,
        table: Table,
        ints: &[i64],
        change: impl FnOnce(&mut Stored),
    ) -> anyhow::Result<()> {
        let mut row = Stored::decode(table, &self.value)?;
        change(&mut row);
        row.encode(&mut self.out);
        self.txn.put(&pk(self.t, table, ints), &self.out)
    }

    /// The entries under `prefix` from `start` in `direction`, at most `limit`.
    fn scan(
        &mut self,
        prefix: &[u8],
        start: &[u8],
        direction: Direction,
        limit: usize,
    ) -> anyhow::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut got = Vec::new();
        self.txn
            .scan(Seek::new(start, direction, limit), &mut |k, v| {
                if !k.starts_with(prefix) {
                    return false;
                }
                got.push((k.to_vec(), v.to_vec()));
                true
            })?;
        self.bytes += got
            .iter()
            .map(|(k, v)| (k.len() + v.len()) as u64)
            .sum::<u64>();
        Ok(got)
    }

    /// The customer ids named `last` in (w, d), in first-name order.
    /// The customer a Payment or Order-Status works on: `c`, or with a `last` name the one
    /// the original picks among those of that name (`follow`).
    fn customer_id(
        &mut self,
        wd: (i64, i64),
        c: i64,
        last: Option<&str>,
        follow: Follow,
    ) -> anyhow::Result<i64> {
        let Some(last) = last else {
            return Ok(c);
        };
        let ids = self.ids_by_name(wd, last)?;
        let at = by_name_row(ids.len() as i64, follow) as usize;
        Ok(ids.get(at).copied().unwrap_or(c))
    }

    fn ids_by_name(&mut self, (w, d): (i64, i64), last: &str) -> anyhow::Result<Vec<i64>> {
        let prefix = name_key(self.t, (w, d), last, None);
        let found = self.scan(&prefix, &prefix, Direction::Forward, usize::MAX)?;
        Ok(found.iter().map(|(k, _)| key_last(k)).collect())
    }
}

/// New-Order's reads and writes on kv: sysbench-tpcc's, except that it reads its items
/// before its first write, so a New-Order that rolls back has written nothing (a document
/// server without transactions could not undo it).
impl NewOrderStore for Tx<'_> {
    /// The row's `s_dist_NN`.
    type Stock = Vec<u8>;

    fn original(&self) -> Original {
        Original::SysbenchTpcc
    }

    fn items(&self) -> Items {
        Items::First
    }

    fn price(&mut self, item: i64) -> anyhow::Result<Option<f64>> {
        if !self.get(Table::Item, &[item])? {
            return Ok(None);
        }
        let price = Stored::decode(Table::Item, &self.value)?.int(col::I_PRICE);
        Ok(Some(price as f64 / 100.0))
    }

    fn rates(&mut self, o: &input::NewOrder) -> anyhow::Result<Rates> {
        self.get(Table::Customer, &[o.w, o.d, o.c])?;
        let discount = Stored::decode(Table::Customer, &self.value)?.int(col::C_DISCOUNT);
        self.get(Table::Warehouse, &[o.w])?;
        let w_tax = Stored::decode(Table::Warehouse, &self.value)?.int(col::TAX);
        Ok(Rates {
            discount: discount as f64 / 100.0,
            w_tax: w_tax as f64 / 100.0,
        })
    }

    fn take(&mut self, o: &input::NewOrder) -> anyhow::Result<Taken> {
        self.lock(Table::District, &[o.w, o.d])?;
        let district = Stored::decode(Table::District, &self.value)?;
        let (next, d_tax) = (district.int(col::D_NEXT_O_ID), district.int(col::TAX));
        self.update(Table::District, &[o.w, o.d], |r| {
            r.set(col::D_NEXT_O_ID, next + 1)
        })?;
        Ok(Taken {
            o: next,
            d_tax: d_tax as f64 / 100.0,
        })
    }

    fn open(&mut self, i: &input::NewOrder, o: i64) -> anyhow::Result<()> {
        let (w, d, c) = (i.w, i.d, i.c);
        let lines = i.lines.len() as i64;
        let order = [c, now(), 0, lines, i.all_local].map(Col::Int);
        self.put(Table::Orders, &[w, d, o], &order)?;
        self.txn
            .put(&key_of_order_by_customer(self.t, w, d, c, o), &[])?;
        self.put(Table::NewOrders, &[w, d, o], &[])
    }

    fn stock(
        &mut self,
        i: &input::NewOrder,
        item: i64,
        supply: i64,
    ) -> anyhow::Result<(i64, Vec<u8>)> {
        self.lock(Table::Stock, &[supply, item])?;
        let stock = Stored::decode(Table::Stock, &self.value)?;
        let info = stock.bytes(col::s_dist(i.d)).to_vec();
        Ok((stock.int(col::S_QUANTITY), info))
    }

    fn line(&mut self, i: &input::NewOrder, l: &Line, info: Vec<u8>) -> anyhow::Result<()> {
        self.update(Table::Stock, &[l.supply, l.item], |r| {
            r.set(col::S_QUANTITY, l.left)
        })?;
        let line = [
            Col::Int(l.item),
            Col::Int(l.supply),
            Col::Int(0),
            Col::Int(l.quantity),
            Col::Int(cents(l.amount)),
            Col::Bytes(&info),
        ];
        self.put(Table::OrderLine, &[i.w, i.d, l.o, l.number], &line)
    }
}

/// Payment on one transaction's `Tx`, as sysbench-tpcc's statements translate: each row read
/// for update and put back changed; `source` (the client) keeps two clients' history keys apart.
struct KvPayment<'x, 'a> {
    x: &'x mut Tx<'a>,
    source: i64,
}

/// A customer read for a payment: its row, and whether its credit is bad.
struct KvCustomer {
    row: Vec<u8>,
    bad: bool,
}

impl KvPayment<'_, '_> {
    /// The `table` row under `key` (a warehouse or a district) read for update, its YTD raised
    /// by the payment; its name (column `name`).
    fn pay_into(
        &mut self,
        table: Table,
        key: &[i64],
        name: usize,
        amount: i64,
    ) -> anyhow::Result<String> {
        let x = &mut *self.x;
        x.lock(table, key)?;
        let row = Stored::decode(table, &x.value)?;
        let (name, ytd) = (row.text(name).to_string(), row.int(col::YTD));
        x.update(table, key, |r| r.set(col::YTD, ytd + amount))?;
        Ok(name)
    }
}

impl PaymentStore for KvPayment<'_, '_> {
    type Customer = KvCustomer;

    fn original(&self) -> Original {
        Original::SysbenchTpcc
    }

    fn warehouse(&mut self, p: &input::Payment) -> anyhow::Result<String> {
        self.pay_into(Table::Warehouse, &[p.w], col::NAME, p.amount * 100)
    }

    fn district(&mut self, p: &input::Payment) -> anyhow::Result<String> {
        self.pay_into(Table::District, &[p.w, p.d], col::D_NAME, p.amount * 100)
    }

    fn customer(
        &mut self,
        p: &input::Payment,
        follow: Follow,
    ) -> anyhow::Result<(i64, KvCustomer)> {
        let x = &mut *self.x;
        let last = p.by_name.then_some(p.last.as_str());
        let c = x.customer_id((p.cw, p.cd), p.c, last, follow)?;
        x.lock(Table::Customer, &[p.cw, p.cd, c])?;
        let bad = Stored::decode(Table::Customer, &x.value)?.bytes(col::C_CREDIT) == b"BC";
        let row = std::mem::take(&mut x.value);
        Ok((c, KvCustomer { row, bad }))
    }

    fn bad_credit(&self, customer: &KvCustomer) -> bool {
        customer.bad
    }

    fn data(
        &mut self,
        _: &input::Payment,
        _: i64,
        customer: &KvCustomer,
    ) -> anyhow::Result<String> {
        let stored = Stored::decode(Table::Customer, &customer.row)?;
        Ok(stored.text(col::C_DATA).to_string())
    }

    fn pay(
        &mut self,
        p: &input::Payment,
        c: i64,
        customer: KvCustomer,
        data: Option<&str>,
    ) -> anyhow::Result<()> {
        let amount = p.amount * 100;
        let x = &mut *self.x;
        let stored = Stored::decode(Table::Customer, &customer.row)?;
        let balance = stored.int(col::C_BALANCE) - amount;
        let paid = stored.int(col::C_YTD_PAYMENT) + amount;
        let mut row = stored.cols;
        row[col::C_BALANCE] = Col::Int(balance);
        row[col::C_YTD_PAYMENT] = Col::Int(paid);
        if let Some(data) = data {
            row[col::C_DATA] = Col::Bytes(data.as_bytes());
        }
        encode_row(&row, &mut x.out);
        x.txn
            .put(&pk(x.t, Table::Customer, &[p.cw, p.cd, c]), &x.out)?;
        drop(row);
        x.value = customer.row;
        Ok(())
    }

    fn history(&mut self, p: &input::Payment, c: i64, h_data: &str) -> anyhow::Result<()> {
        let when = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |t| t.as_nanos() as i64);
        let history = [
            Col::Int(p.d),
            Col::Int(p.w),
            Col::Int(now()),
            Col::Int(p.amount * 100),
            Col::Bytes(h_data.as_bytes()),
        ];
        let key = [p.cw, p.cd, c, when, self.source];
        self.x.put(Table::History, &key, &history)
    }
}

/// Order-Status's reads as sysbench-tpcc's statements translate: plain reads in the
/// transaction's snapshot, the customer's last order by a reverse scan of its index.
impl OrderStatusStore for Tx<'_> {
    fn customer(&mut self, s: &input::OrderStatus, follow: Follow) -> anyhow::Result<i64> {
        let last = s.by_name.then_some(s.last.as_str());
        let c = self.customer_id((s.w, s.d), s.c, last, follow)?;
        self.get(Table::Customer, &[s.w, s.d, c])?;
        Ok(c)
    }

    fn last_order(&mut self, s: &input::OrderStatus, c: i64) -> anyhow::Result<i64> {
        let (w, d) = (s.w, s.d);
        // The last entry of the customer's orders in the index.
        let prefix = key(self.t, Table::Orders, ORDER_BY_CUSTOMER, &[w, d, c]);
        let start = key(
            self.t,
            Table::Orders,
            ORDER_BY_CUSTOMER,
            &[w, d, c, i64::MAX],
        );
        let last = self.scan(&prefix, &start, Direction::Reverse, 1)?;
        let o = last.first().map_or(0, |(k, _)| key_col(k, 3));
        self.get(Table::Orders, &[w, d, o])?;
        Ok(o)
    }

    fn lines(&mut self, s: &input::OrderStatus, o: i64) -> anyhow::Result<()> {
        let prefix = key(self.t, Table::OrderLine, 0, &[s.w, s.d, o]);
        self.scan(&prefix, &prefix, Direction::Forward, usize::MAX)?;
        Ok(())
    }
}

/// Delivery as sysbench-tpcc's statements translate, on one transaction's `Tx`; `at` the
/// delivery date every line gets.
struct KvDelivery<'x, 'a> {
    x: &'x mut Tx<'a>,
    at: i64,
}

impl DeliveryStore for KvDelivery<'_, '_> {
    /// In cents.
    type Total = i64;

    fn take_oldest(&mut self, i: &input::Delivery, d: i64) -> anyhow::Result<Option<i64>> {
        let x = &mut *self.x;
        let prefix = key(x.t, Table::NewOrders, 0, &[i.w, d]);
        let oldest = x.scan(&prefix, &prefix, Direction::Forward, 1)?;
        let Some((no, _)) = oldest.first() else {
            return Ok(None);
        };
        let o = key_col(no, 2);
        if !x.lock(Table::NewOrders, &[i.w, d, o])? {
            // Another Delivery took it after this one's snapshot: run again.
            return Err(EngineError::retryable(format!(
                "tpcc: new order {o} of district {d} delivered by a concurrent transaction"
            )));
        }
        x.txn.delete(no)?;
        Ok(Some(o))
    }

    fn deliver(&mut self, i: &input::Delivery, d: i64, o: i64) -> anyhow::Result<(i64, i64)> {
        let (x, w, at) = (&mut *self.x, i.w, self.at);
        x.lock(Table::Orders, &[w, d, o])?;
        let c = Stored::decode(Table::Orders, &x.value)?.int(col::O_C_ID);
        x.update(Table::Orders, &[w, d, o], |r| {
            r.set(col::O_CARRIER_ID, i.carrier)
        })?;
        let prefix = key(x.t, Table::OrderLine, 0, &[w, d, o]);
        let mut total = 0;
        for (k, v) in x.scan(&prefix, &prefix, Direction::Forward, usize::MAX)? {
            let mut line = Stored::decode(Table::OrderLine, &v)?;
            total += line.int(col::OL_AMOUNT);
            line.set(col::OL_DELIVERY_D, at);
            line.encode(&mut x.out);
            x.txn.put(&k, &x.out)?;
        }
        Ok((c, total))
    }

    fn credit(&mut self, i: &input::Delivery, d: i64, c: i64, total: i64) -> anyhow::Result<()> {
        let x = &mut *self.x;
        x.lock(Table::Customer, &[i.w, d, c])?;
        let customer = Stored::decode(Table::Customer, &x.value)?;
        let (balance, count) = (
            customer.int(col::C_BALANCE),
            customer.int(col::C_DELIVERY_CNT),
        );
        x.update(Table::Customer, &[i.w, d, c], |r| {
            r.set(col::C_BALANCE, balance + total);
            r.set(col::C_DELIVERY_CNT, count + 1);
        })
    }
}

/// Stock-Level as sysbench-tpcc's join translates: the district's next order, a scan of the
/// lines of the orders before it, a read of each distinct item's stock.
impl StockLevelStore for Tx<'_> {
    fn next_order(&mut self, i: &input::StockLevel) -> anyhow::Result<i64> {
        self.get(Table::District, &[i.w, i.d])?;
        Ok(Stored::decode(Table::District, &self.value)?.int(col::D_NEXT_O_ID))
    }

    fn low_stock(
        &mut self,
        i: &input::StockLevel,
        orders: std::ops::Range<i64>,
    ) -> anyhow::Result<()> {
        let (w, d) = (i.w, i.d);
        let prefix = key(self.t, Table::OrderLine, 0, &[w, d]);
        let start = key(self.t, Table::OrderLine, 0, &[w, d, orders.start]);
        let mut items = BTreeSet::new();
        for (k, v) in self.scan(&prefix, &start, Direction::Forward, usize::MAX)? {
            if key_col(&k, 2) >= orders.end {
                break;
            }
            items.insert(Stored::decode(Table::OrderLine, &v)?.int(col::OL_I_ID));
        }
        let mut low = 0;
        for item in items {
            if self.get(Table::Stock, &[w, item])?
                && Stored::decode(Table::Stock, &self.value)?.int(col::S_QUANTITY) < i.level
            {
                low += 1;
            }
        }
        std::hint::black_box(low);
        Ok(())
    }
}

/// A client of the run on a kv engine.
pub struct KvTerminal<'e> {
    session: Box<dyn KvSession + 'e>,
    /// Held through each transaction where the engine has no transactions of its own (a
    /// document server without them): the clients' transactions then run one at a time.
    serial: Option<&'e Mutex<()>>,
    inputs: Inputs,
    /// This client's number plus one: the source of its history rows' keys.
    source: i64,
    value: Vec<u8>,
    out: Vec<u8>,
    bytes: u64,
}

impl<'e> KvTerminal<'e> {
    pub fn new(
        session: Box<dyn KvSession + 'e>,
        serial: Option<&'e Mutex<()>>,
        inputs: Inputs,
        client: usize,
    ) -> KvTerminal<'e> {
        KvTerminal {
            session,
            serial,
            inputs,
            source: client as i64 + 1,
            value: Vec::new(),
            out: Vec::new(),
            bytes: 0,
        }
    }

    /// One transaction of `kind` with fresh inputs; the kind it was (a New-Order may roll
    /// back).
    fn transaction(&mut self, kind: TpccKind) -> anyhow::Result<TpccKind> {
        let follow = self.inputs.follow();
        let source = self.source;
        let input = self.inputs.draw(kind);
        let t = input.copy();
        let (value, out, bytes) = (&mut self.value, &mut self.out, &mut self.bytes);
        *bytes = 0;
        let _alone = self
            .serial
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
        let end = self.session.transaction(&mut |txn| {
            let mut x = Tx {
                txn,
                t: t as u32 + 1,
                bytes: 0,
                value: std::mem::take(value),
                out: std::mem::take(out),
            };
            let end = match &input {
                Drawn::NewOrder(i) => {
                    new_order::run(&mut x, i, follow).map(|committed| match committed {
                        true => TxnEnd::Commit,
                        false => TxnEnd::Rollback,
                    })
                }
                Drawn::Payment(p) => {
                    let mut store = KvPayment { x: &mut x, source };
                    payment::run(&mut store, p, follow).map(|()| TxnEnd::Commit)
                }
                Drawn::OrderStatus(s) => {
                    order_status::run(&mut x, s, follow).map(|()| TxnEnd::Commit)
                }
                Drawn::Delivery(i) => {
                    let mut store = KvDelivery {
                        x: &mut x,
                        at: now(),
                    };
                    delivery::deliver(&mut store, i).map(|()| TxnEnd::Commit)
                }
                Drawn::StockLevel(i) => delivery::stock_level(&mut x, i).map(|()| TxnEnd::Commit),
            };
            (*value, *out, *bytes) = (x.value, x.out, x.bytes);
            end
        })?;
        Ok(match (kind, end) {
            (TpccKind::NewOrder, TxnEnd::Rollback) => TpccKind::NewOrderRollback,
            _ => kind,
        })
    }
}

impl Client for KvTerminal<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let kind = self.inputs.kind();
        let follow = self.inputs.follow();
        let ran = input::attempt(follow, kind, || self.transaction(kind))?;
        Ok(input::done(ran, self.bytes))
    }
}
