//! The prepare step's plan, which each family's loader follows: the tables in order, each
//! table's rows `1..=table_size` in batches, and the step's operation kinds (a batch insert,
//! and the index on k created as sysbench does).

use super::events::Rows;
use super::SysbenchKind;
use fathom_api::kind::Done;

/// The prepare step's kinds.
pub const KINDS: &[SysbenchKind] = &[SysbenchKind::Insert, SysbenchKind::CreateIndex];

/// sysbench's bytes of one row: id, k, c and pad.
const ROW_BYTES: i64 = 4 + 4 + 120 + 60;

/// What a loader does next.
pub enum Next {
    /// Begin the table: create it (or drop and recreate it).
    Table(u32),
    /// Insert `n` rows of `table` from id `first`.
    Batch { table: u32, first: i64, n: i64 },
    /// The table is loaded.
    TableDone(u32),
    /// Every table is loaded.
    Finished,
}

/// Where a load is: the tables left, and the next id of the one being loaded.
pub struct Plan {
    pub rows: Rows,
    pub create_secondary: bool,
    tables: Vec<u32>,
    batch: i64,
    /// The table being loaded and its next id; `None` before it begins.
    at: Option<(u32, i64)>,
}

impl Plan {
    pub fn new(tables: Vec<u32>, rows: Rows, batch: i64, create_secondary: bool) -> Plan {
        Plan {
            rows,
            create_secondary,
            tables,
            batch,
            at: None,
        }
    }

    /// Rows to a batch.
    pub fn batch(&self) -> i64 {
        self.batch
    }

    pub fn next(&mut self) -> Next {
        let Some((table, first)) = self.at else {
            let Some(&t) = self.tables.first() else {
                return Next::Finished;
            };
            self.at = Some((t, 1));
            return Next::Table(t);
        };
        let size = self.rows.table_size;
        if first > size {
            self.tables.remove(0);
            self.at = None;
            return Next::TableDone(table);
        }
        let n = self.batch.min(size - first + 1);
        self.at = Some((table, first + n));
        Next::Batch { table, first, n }
    }
}

/// A batch's operation: `n` rows of sysbench's row size.
pub fn rows_done(n: i64) -> Done {
    Done {
        bytes: (n * ROW_BYTES) as u64,
        rows: n as u64,
        ..Done::of(SysbenchKind::Insert)
    }
}

/// The index's creation, one operation.
pub fn index_done() -> Done {
    Done::of(SysbenchKind::CreateIndex)
}
