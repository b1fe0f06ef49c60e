//! The insert benchmark's rows and indexes as `iibench.py` defines them (docs/workloads.md
//! §2.1–2.2), and the per-table id state a step's inserters, deleters and point queries share.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};

/// A column an index or query names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col {
    DateAndTime,
    CashRegister,
    Customer,
    Product,
    Price,
}

impl Col {
    pub fn name(self) -> &'static str {
        match self {
            Col::DateAndTime => "dateandtime",
            Col::CashRegister => "cashregisterid",
            Col::Customer => "customerid",
            Col::Product => "productid",
            Col::Price => "price",
        }
    }
}

/// A secondary index: its name (`<table>_<name>` in SQL) and columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Index {
    pub name: &'static str,
    pub cols: &'static [Col],
}

impl Index {
    const fn new(name: &'static str, cols: &'static [Col]) -> Index {
        Index { name, cols }
    }

    /// iibench's register query starts strictly after its parameter (`>`), the others at it.
    pub fn strict(&self) -> bool {
        self.name == "registersegment"
    }
}

/// The indexes since iibench's 2023-12-08 "fix indexes", in creation order.
pub const CURRENT: [Index; 3] = [
    Index::new("marketsegment", &[Col::Product, Col::Customer, Col::Price]),
    Index::new(
        "registersegment",
        &[Col::CashRegister, Col::Customer, Col::Price],
    ),
    Index::new("pdc", &[Col::Price, Col::DateAndTime, Col::Customer]),
];

/// The classic definitions (iibench v0/v1 and the Java iibench-mongodb).
pub const CLASSIC: [Index; 3] = [
    Index::new("marketsegment", &[Col::Price, Col::Customer]),
    Index::new(
        "registersegment",
        &[Col::CashRegister, Col::Price, Col::Customer],
    ),
    Index::new("pdc", &[Col::Price, Col::DateAndTime, Col::Customer]),
];

/// What the rows and queries look like, from the workload's parameters.
#[derive(Clone, Debug)]
pub struct Shape {
    pub cashregisters: i64,
    pub products: i64,
    pub customers: i64,
    pub max_price: i64,
    pub data_min: usize,
    pub data_max: usize,
    pub data_random_pct: u32,
    /// The secondary indexes in use (the first `secondary_indexes` of the chosen style).
    pub indexes: Vec<Index>,
    pub rows_per_query: usize,
}

impl Shape {
    /// Values of `col` are uniform in `[0, domain)`.
    pub fn domain(&self, col: Col) -> i64 {
        match col {
            Col::CashRegister => self.cashregisters,
            Col::Customer => self.customers,
            Col::Product => self.products,
            Col::Price => self.max_price,
            Col::DateAndTime => 1,
        }
    }
}

/// One generated row; transactionid is the database's to assign.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Row {
    pub cashregisterid: i64,
    pub productid: i64,
    pub customerid: i64,
    pub price: i64,
}

impl Row {
    /// The value of an indexed column, with the batch's time.
    pub fn col(&self, col: Col, dateandtime: i64) -> i64 {
        match col {
            Col::DateAndTime => dateandtime,
            Col::CashRegister => self.cashregisterid,
            Col::Customer => self.customerid,
            Col::Product => self.productid,
            Col::Price => self.price,
        }
    }
}

/// One INSERT's rows: they share a timestamp, as iibench takes one per batch.
#[derive(Debug, Default)]
pub struct Batch {
    /// Seconds since the epoch.
    pub dateandtime: i64,
    /// The same as `YYYY-MM-DD HH:MM:SS` (UTC).
    pub datetime_text: String,
    /// Each row with its `data` column (the strings are kept and refilled batch after batch).
    pub rows: Vec<(Row, String)>,
}

impl Batch {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Bytes of the values written, for MB/s.
    pub fn bytes(&self) -> u64 {
        let data: usize = self.rows.iter().map(|(_, d)| d.len()).sum();
        (self.rows.len() * (8 + 8 + 4 * 4) + data) as u64
    }
}

/// The characters of the random part of `data`: a buffer of base64 text made once, from which
/// each row takes a slice at a random offset (iibench base64-encodes 4 MiB of `os.urandom`).
pub fn random_pool(seed: u64, len: usize) -> Arc<Vec<u8>> {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut rng = SmallRng::seed_from_u64(seed);
    Arc::new((0..len).map(|_| B64[rng.gen_range(0..64)]).collect())
}

/// Generates rows in iibench's order of draws.
pub struct RowGen {
    rng: SmallRng,
    shape: Arc<Shape>,
    pool: Arc<Vec<u8>>,
}

impl RowGen {
    pub fn new(shape: Arc<Shape>, pool: Arc<Vec<u8>>, seed: u64) -> RowGen {
        RowGen {
            rng: SmallRng::seed_from_u64(seed),
            shape,
            pool,
        }
    }

    pub fn rng(&mut self) -> &mut SmallRng {
        &mut self.rng
    }

    /// Refills `batch` with `n` new rows stamped now.
    pub fn fill(&mut self, batch: &mut Batch, n: usize) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if batch.dateandtime != now as i64 || batch.datetime_text.is_empty() {
            batch.dateandtime = now as i64;
            batch.datetime_text = fathom_schema::result::utc_timestamp(now)[..19].replace('T', " ");
        }
        batch.rows.resize_with(n, Default::default);
        let s = &self.shape;
        for (row, data) in batch.rows.iter_mut() {
            *row = Row {
                cashregisterid: self.rng.gen_range(0..s.cashregisters),
                productid: self.rng.gen_range(0..s.products),
                customerid: self.rng.gen_range(0..s.customers),
                price: self.rng.gen_range(0..s.max_price),
            };
            let len = self.rng.gen_range(s.data_min..=s.data_max);
            let rand_len = ((len as f64 * 0.75 * f64::from(s.data_random_pct) / 100.0) as usize)
                .min(self.pool.len());
            let at = self.rng.gen_range(0..=self.pool.len() - rand_len);
            data.clear();
            data.extend(std::iter::repeat_n('a', len - rand_len));
            // The pool is ASCII.
            data.extend(self.pool[at..at + rand_len].iter().map(|&b| b as char));
        }
    }
}

/// A table's ids as a step's writers and readers share them: the next id to assign (kv
/// engines, where fathom numbers rows as AUTO_INCREMENT would) and the delete frontier (the
/// smallest id not yet claimed by a delete).
#[derive(Debug)]
pub struct Ids {
    pub next: AtomicI64,
    pub frontier: AtomicI64,
}

/// One table (`pi<n>`) and its ids, read from the database at first use in a step.
#[derive(Debug)]
pub struct Table {
    pub n: u32,
    ids: OnceLock<Ids>,
}

impl Table {
    pub fn new(n: u32) -> Table {
        Table {
            n,
            ids: OnceLock::new(),
        }
    }

    /// The ids, initialised from the table's smallest and largest id by `read` on first use.
    pub fn ids(
        &self,
        read: impl FnOnce() -> anyhow::Result<(Option<i64>, Option<i64>)>,
    ) -> anyhow::Result<&Ids> {
        if let Some(ids) = self.ids.get() {
            return Ok(ids);
        }
        let (min, max) = read()?;
        let _ = self.ids.set(Ids {
            next: AtomicI64::new(max.map_or(1, |m| m + 1)),
            frontier: AtomicI64::new(min.unwrap_or(0)),
        });
        Ok(self.ids.get().expect("set above"))
    }

    /// The ids if a writer or reader has read them already.
    pub fn known(&self) -> Option<&Ids> {
        self.ids.get()
    }

    /// Claims the next `n` ids to insert, returning the first (stores that assign ids
    /// themselves: the kv mapping and documents).
    pub fn claim_insert(&self, n: usize) -> i64 {
        let ids = self
            .known()
            .expect("the writer reads the ids before inserting");
        ids.next.fetch_add(n as i64, Ordering::Relaxed)
    }
}

impl Ids {
    /// Claims the next `n` ids to delete, returning the first.
    pub fn claim_delete(&self, n: usize) -> i64 {
        self.frontier.fetch_add(n as i64, Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Arc<Shape> {
        Arc::new(Shape {
            cashregisters: 1000,
            products: 10000,
            customers: 100000,
            max_price: 500,
            data_min: 10,
            data_max: 20,
            data_random_pct: 50,
            indexes: CURRENT.to_vec(),
            rows_per_query: 10,
        })
    }

    #[test]
    fn rows_follow_iibench() {
        let mut g = RowGen::new(shape(), random_pool(1, 4096), 7);
        let mut b = Batch::default();
        g.fill(&mut b, 2000);
        assert_eq!(b.len(), 2000);
        assert_eq!(b.datetime_text.len(), 19);
        assert_eq!(&b.datetime_text[10..11], " ");
        for (r, d) in &b.rows {
            assert!((0..1000).contains(&r.cashregisterid));
            assert!((0..10000).contains(&r.productid));
            assert!((0..100000).contains(&r.customerid));
            assert!((0..500).contains(&r.price));
            assert!((10..=20).contains(&d.len()));
            // 50% random: int(len * 0.75 * 0.5) random characters after the 'a's.
            let rand_len = (d.len() as f64 * 0.375) as usize;
            assert!(d[..d.len() - rand_len].bytes().all(|c| c == b'a'), "{d}");
        }
        let max_price = b.rows.iter().map(|(r, _)| r.price).max().unwrap();
        assert!(max_price > 450, "prices cover their range");
    }

    #[test]
    fn ids_start_after_the_largest_and_deletes_claim_in_order() {
        let t = Table::new(1);
        let ids = t.ids(|| Ok((Some(5), Some(900)))).unwrap();
        assert_eq!(ids.next.load(Ordering::Relaxed), 901);
        assert_eq!(ids.claim_delete(50), 5);
        assert_eq!(ids.claim_delete(50), 55);
        let again = t.ids(|| anyhow::bail!("read once")).unwrap();
        assert_eq!(again.frontier.load(Ordering::Relaxed), 105);
    }
}
