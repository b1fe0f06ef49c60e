//! TPC-C's five transactions on the document family with py-tpcc's commands (its MongoDB
//! driver's defaults): New-Order, Payment and Delivery each one server transaction (all ten
//! districts of a Delivery in one), findAndModify where py-tpcc takes a row and changes it,
//! Order-Status and Stock-Level outside a transaction, as py-tpcc counts them. The inputs are
//! the sql terminal's (`input`); each filter carries py-tpcc's `$comment`.

use super::{coll, int, now, num, text, CUSTOMER, DISTRICT, ITEM, NEW_ORDER, ORDERS};
use super::{STOCK, WAREHOUSE};
use crate::tpcc::delivery;
use crate::tpcc::gen::Follow;
use crate::tpcc::input::{self, Drawn, Inputs};
use crate::tpcc::new_order::{self, Items, Line, NewOrderStore, Original, Rates, Taken};
use crate::tpcc::order_status;
use crate::tpcc::payment;
use crate::tpcc::TpccKind;
use fathom_api::doc::bson::{doc, Bson, Document, RawDocument, RawDocumentBuf};
use fathom_api::doc::{DocSession, Find, Modify, Update};
use fathom_api::kind::Done;
use fathom_api::step::Client;
use std::collections::HashMap;
use std::sync::Mutex;

mod customer;
mod district;

use customer::DocPayment;
use district::DocDelivery;

/// One transaction's commands on copy `t`, and the bytes of the documents they read.
struct Tx<'a> {
    s: &'a mut dyn DocSession,
    server: Server,
    t: u32,
    bytes: u64,
}

/// What the server does of what py-tpcc sends.
#[derive(Clone, Copy, Debug)]
pub struct Server {
    /// Multi-document transactions (a replica set's mongod; not FerretDB 1.x).
    pub transactions: bool,
    /// findAndModify's `fields` (not FerretDB 1.24).
    pub modify_projection: bool,
    /// The all-positional operator `$[]` in an update path (not FerretDB 1.24).
    pub all_positional: bool,
}

impl Server {
    /// What a server of `version` (the engine's version string) does, with or without
    /// transactions.
    pub fn of(version: &str, transactions: bool) -> Server {
        let ferretdb = version.contains("FerretDB");
        Server {
            transactions,
            modify_projection: !ferretdb,
            all_positional: !ferretdb,
        }
    }
}

impl Tx<'_> {
    /// The documents a `find` returns.
    fn find(&mut self, name: &str, find: Find<'_>) -> anyhow::Result<Vec<RawDocumentBuf>> {
        let mut got = Vec::new();
        self.s.find(&coll(name, self.t), find, &mut |d| {
            got.push(d.to_raw_document_buf());
            true
        })?;
        self.bytes += got.iter().map(|d| d.as_bytes().len() as u64).sum::<u64>();
        Ok(got)
    }

    /// The first document a `find` returns (py-tpcc's `find_one`); an empty one when none
    /// matches (on a database every document read so is there: only the null engine, which
    /// stores nothing, has none).
    fn find_one(
        &mut self,
        name: &str,
        filter: &Document,
        projection: &Document,
    ) -> anyhow::Result<RawDocumentBuf> {
        let find = Find::new(filter).project(projection).limit(1);
        let found = self.find(name, find)?.into_iter().next();
        Ok(found.unwrap_or_default())
    }

    /// The document a `findAndModify` found, before its change; its projection left out on a
    /// server that lacks it (FerretDB 1.x answers NotImplemented).
    fn modify(&mut self, name: &str, mut m: Modify<'_>) -> anyhow::Result<Option<RawDocumentBuf>> {
        if !self.server.modify_projection {
            m.projection = None;
        }
        let mut got = None;
        self.s.find_and_modify(&coll(name, self.t), m, &mut |d| {
            got = Some(d.to_raw_document_buf());
            true
        })?;
        self.bytes += got.as_ref().map_or(0, |d| d.as_bytes().len() as u64);
        Ok(got)
    }

    fn insert(&mut self, name: &str, d: Document) -> anyhow::Result<()> {
        self.s.insert(&coll(name, self.t), &[d], true).map(|_| ())
    }

    fn update(&mut self, name: &str, filter: &Document, update: &Document) -> anyhow::Result<()> {
        let u = Update {
            filter,
            update,
            upsert: false,
            many: false,
        };
        self.s.update(&coll(name, self.t), u).map(|_| ())
    }

    /// The customer a Payment or Order-Status works on: by id, or the middle one of those
    /// with the last name (py-tpcc's `(namecnt-1)//2`, in the order the server returns them).
    fn find_customer(
        &mut self,
        mut search: Document,
        projection: &Document,
        c: i64,
        last: Option<&str>,
    ) -> anyhow::Result<RawDocumentBuf> {
        match last {
            None => {
                search.insert("C_ID", int(c));
                self.find_one(CUSTOMER, &search, projection)
            }
            Some(last) => {
                search.insert("C_LAST", last);
                let mut all = self.find(CUSTOMER, Find::new(&search).project(projection))?;
                match all.len() {
                    0 => Ok(RawDocumentBuf::default()),
                    n => Ok(all.swap_remove((n - 1) / 2)),
                }
            }
        }
    }
}

/// A document's field, as the BSON value it holds (Null when missing).
fn field(d: &RawDocument, key: &str) -> Bson {
    (d.get(key).ok().flatten())
        .and_then(|v| Bson::try_from(v.to_raw_bson()).ok())
        .unwrap_or(Bson::Null)
}

fn ints(values: impl IntoIterator<Item = i64>) -> Bson {
    Bson::Array(values.into_iter().map(int).collect())
}

const NEW_ORDER_COMMENT: &str = "NEW_ORDER";

/// New-Order's commands as py-tpcc sends them, on one transaction's `Tx`: the lines' stock
/// read by one `find`, their updates sent by one `update_each` and the order with its lines
/// inserted after the lines.
struct DocNewOrder<'x, 'a> {
    x: &'x mut Tx<'a>,
    /// The lines' stock documents by (item, supplying warehouse).
    stocks: HashMap<(i64, i64), RawDocumentBuf>,
    /// Each line's stock filter (the document as read) and `$set`.
    updates: Vec<(Document, Document)>,
    lines: Vec<Document>,
    date: Bson,
}

impl DocNewOrder<'_, '_> {
    /// `S_DIST_NN` of district `d`.
    fn dist(d: i64) -> String {
        format!("S_DIST_{d:02}")
    }
}

impl NewOrderStore for DocNewOrder<'_, '_> {
    type Stock = RawDocumentBuf;

    fn original(&self) -> Original {
        Original::PyTpcc
    }

    /// On a server without transactions the items are read before the district is changed,
    /// so a New-Order that rolls back has written nothing.
    fn items(&self) -> Items {
        match self.x.server.transactions {
            true => Items::AfterDistrict,
            false => Items::First,
        }
    }

    /// One `find` of the items by `$in`; a repeated item is counted once.
    fn prices(&mut self, i: &input::NewOrder) -> anyhow::Result<Option<Vec<f64>>> {
        let ids = i.lines.iter().map(|l| l.0);
        let filter = doc! {"I_ID": {"$in": ints(ids.clone())}, "I_W_ID": int(0),
        "$comment": NEW_ORDER_COMMENT};
        let fields = doc! {"_id": 0, "I_ID": 1, "I_PRICE": 1, "I_NAME": 1, "I_DATA": 1};
        let found = self.x.find(ITEM, Find::new(&filter).project(&fields))?;
        let prices: HashMap<i64, f64> = (found.iter())
            .map(|d| (num(d, "I_ID") as i64, num(d, "I_PRICE")))
            .collect();
        Ok(ids.map(|id| prices.get(&id).copied()).collect())
    }

    fn price(&mut self, _: i64) -> anyhow::Result<Option<f64>> {
        anyhow::bail!("tpcc: py-tpcc reads a New-Order's items together")
    }

    /// The warehouse, then the customer.
    fn rates(&mut self, i: &input::NewOrder) -> anyhow::Result<Rates> {
        let (w, d, c) = (i.w, i.d, i.c);
        let comment = NEW_ORDER_COMMENT;
        let filter = doc! {"W_ID": int(w), "$comment": comment};
        let warehouse = self
            .x
            .find_one(WAREHOUSE, &filter, &doc! {"_id": 0, "W_TAX": 1})?;
        let filter = doc! {"C_ID": int(c), "C_D_ID": int(d), "C_W_ID": int(w), "$comment": comment};
        let fields = doc! {"C_DISCOUNT": 1, "C_LAST": 1, "C_CREDIT": 1};
        let customer = self.x.find_one(CUSTOMER, &filter, &fields)?;
        Ok(Rates {
            discount: num(&customer, "C_DISCOUNT"),
            w_tax: num(&warehouse, "W_TAX"),
        })
    }

    /// findAndModify of the district: `$inc` of its next order's number, read as it was.
    fn take(&mut self, i: &input::NewOrder) -> anyhow::Result<Taken> {
        let filter = doc! {"D_ID": int(i.d), "D_W_ID": int(i.w), "$comment": NEW_ORDER_COMMENT};
        let projection = doc! {"_id": 0, "D_ID": 1, "D_W_ID": 1, "D_TAX": 1, "D_NEXT_O_ID": 1};
        let (inc, sort) = (doc! {"$inc": {"D_NEXT_O_ID": 1}}, doc! {"NO_O_ID": 1});
        let m = Modify {
            filter: &filter,
            sort: Some(&sort),
            projection: Some(&projection),
            update: Some(&inc),
        };
        let district = self.x.modify(DISTRICT, m)?.unwrap_or_default();
        Ok(Taken {
            o: num(&district, "D_NEXT_O_ID") as i64,
            d_tax: num(&district, "D_TAX"),
        })
    }

    /// The new order, then every line's stock by one `find`: `$in` when every line is local,
    /// else `$or` of the pairs.
    fn open(&mut self, i: &input::NewOrder, o: i64) -> anyhow::Result<()> {
        let new = doc! {"NO_O_ID": int(o), "NO_D_ID": int(i.d), "NO_W_ID": int(i.w)};
        self.x.insert(NEW_ORDER, new)?;
        let filter = match i.all_local == 1 {
            true => doc! {"S_I_ID": {"$in": ints(i.lines.iter().map(|l| l.0))}, "S_W_ID": int(i.w),
            "$comment": NEW_ORDER_COMMENT},
            false => {
                let each: Vec<Bson> = (i.lines.iter())
                    .map(|&(item, supply, _)| {
                        Bson::Document(doc! {"S_I_ID": int(item), "S_W_ID": int(supply)})
                    })
                    .collect();
                doc! {"$or": each, "$comment": NEW_ORDER_COMMENT}
            }
        };
        let mut fields = doc! {"_id": 0, "S_I_ID": 1, "S_W_ID": 1, "S_QUANTITY": 1, "S_DATA": 1,
        "S_YTD": 1, "S_ORDER_CNT": 1, "S_REMOTE_CNT": 1};
        fields.insert(Self::dist(i.d), 1);
        let found = self.x.find(STOCK, Find::new(&filter).project(&fields))?;
        self.stocks = (found.into_iter())
            .map(|s| ((num(&s, "S_I_ID") as i64, num(&s, "S_W_ID") as i64), s))
            .collect();
        self.date = now();
        Ok(())
    }

    fn stock(
        &mut self,
        _: &input::NewOrder,
        item: i64,
        supply: i64,
    ) -> anyhow::Result<(i64, RawDocumentBuf)> {
        // Two lines of one item and warehouse read the one document.
        let s = self
            .stocks
            .get(&(item, supply))
            .cloned()
            .unwrap_or_default();
        Ok((num(&s, "S_QUANTITY") as i64, s))
    }

    /// The stock's `$set` and filter (py-tpcc's filter is the stock document as read) kept
    /// for `close`, and the line for its order.
    fn line(&mut self, i: &input::NewOrder, l: &Line, s: RawDocumentBuf) -> anyhow::Result<()> {
        let set = doc! {"$set": {
            "S_QUANTITY": int(l.left),
            "S_YTD": int(num(&s, "S_YTD") as i64 + l.quantity),
            "S_ORDER_CNT": int(num(&s, "S_ORDER_CNT") as i64 + 1),
            "S_REMOTE_CNT": int(num(&s, "S_REMOTE_CNT") as i64 + (l.supply != i.w) as i64),
        }};
        let mut filter = s.to_document()?;
        filter.insert("$comment", NEW_ORDER_COMMENT);
        self.lines.push(doc! {
            "OL_O_ID": int(l.o), "OL_NUMBER": int(l.number), "OL_I_ID": int(l.item),
            "OL_SUPPLY_W_ID": int(l.supply), "OL_DELIVERY_D": self.date.clone(),
            "OL_QUANTITY": int(l.quantity), "OL_AMOUNT": l.amount,
            "OL_DIST_INFO": text(&s, &Self::dist(i.d)),
        });
        self.updates.push((filter, set));
        Ok(())
    }

    /// The stock's updates by one `update_each`, then the order with its lines.
    fn close(&mut self, i: &input::NewOrder, o: i64, total: f64) -> anyhow::Result<()> {
        std::hint::black_box(total);
        let updates: Vec<Update> = (self.updates.iter())
            .map(|(filter, update)| Update {
                filter,
                update,
                upsert: false,
                many: false,
            })
            .collect();
        self.x.s.update_each(&coll(STOCK, self.x.t), &updates)?;
        let order = doc! {
            "O_ID": int(o), "O_ENTRY_D": self.date.clone(), "O_CARRIER_ID": int(0),
            "O_OL_CNT": int(i.lines.len() as i64), "O_ALL_LOCAL": int(i.all_local),
            "ORDER_LINE": std::mem::take(&mut self.lines), "O_D_ID": int(i.d),
            "O_W_ID": int(i.w), "O_C_ID": int(i.c),
        };
        self.x.insert(ORDERS, order)
    }
}

/// New-Order as py-tpcc's `_doNewOrderTxn`: false when it rolled back at its missing item.
fn new_order(x: &mut Tx, i: &input::NewOrder, follow: Follow) -> anyhow::Result<bool> {
    let mut store = DocNewOrder {
        x,
        stocks: HashMap::new(),
        updates: Vec::new(),
        lines: Vec::new(),
        date: Bson::Null,
    };
    new_order::run(&mut store, i, follow)
}

/// A client of the run on a document server.
pub struct DocTerminal<'e> {
    session: Box<dyn DocSession + 'e>,
    /// What the server does (New-Order, Payment and Delivery run in its transactions where it
    /// has them).
    server: Server,
    /// Held through each transaction where the server has no transactions: the clients'
    /// transactions then run one at a time.
    serial: Option<&'e Mutex<()>>,
    inputs: Inputs,
    bytes: u64,
}

impl<'e> DocTerminal<'e> {
    pub fn new(
        session: Box<dyn DocSession + 'e>,
        server: Server,
        serial: Option<&'e Mutex<()>>,
        inputs: Inputs,
    ) -> DocTerminal<'e> {
        DocTerminal {
            session,
            server,
            serial,
            inputs,
            bytes: 0,
        }
    }

    /// One transaction of `kind` with fresh inputs; the kind it was (a New-Order may roll
    /// back).
    fn transaction(&mut self, kind: TpccKind) -> anyhow::Result<TpccKind> {
        let input = self.inputs.draw(kind);
        let _alone = (self.serial).map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
        // py-tpcc runs Order-Status and Stock-Level outside a transaction.
        let in_txn = self.server.transactions
            && matches!(
                input,
                Drawn::NewOrder(_) | Drawn::Payment(_) | Drawn::Delivery(_)
            );
        let s = self.session.as_mut();
        if in_txn {
            s.begin()?;
        }
        let mut x = Tx {
            s,
            server: self.server,
            t: input.copy() as u32 + 1,
            bytes: 0,
        };
        let done = match &input {
            Drawn::NewOrder(i) => new_order(&mut x, i, self.inputs.follow()),
            Drawn::Payment(p) => {
                payment::run(&mut DocPayment { x: &mut x }, p, self.inputs.follow()).map(|_| true)
            }
            Drawn::OrderStatus(s) => {
                order_status::run(&mut x, s, self.inputs.follow()).map(|_| true)
            }
            Drawn::Delivery(i) => {
                let mut store = DocDelivery {
                    x: &mut x,
                    date: now(),
                };
                delivery::deliver(&mut store, i).map(|_| true)
            }
            Drawn::StockLevel(i) => delivery::stock_level(&mut x, i).map(|_| true),
        };
        self.bytes = x.bytes;
        let s = self.session.as_mut();
        match done {
            Ok(true) if in_txn => s.commit()?,
            Ok(true) => {}
            Ok(false) => {
                if in_txn {
                    s.abort()?;
                }
                return Ok(TpccKind::NewOrderRollback);
            }
            Err(e) => {
                if in_txn {
                    // The transaction's own error is the one to report.
                    let _ = s.abort();
                }
                return Err(e);
            }
        }
        Ok(kind)
    }
}

impl Client for DocTerminal<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let kind = self.inputs.kind();
        let follow = self.inputs.follow();
        let ran = input::attempt(follow, kind, || self.transaction(kind))?;
        Ok(input::done(ran, self.bytes))
    }
}
