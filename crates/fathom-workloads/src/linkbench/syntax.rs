//! What differs by SQL dialect in LinkBench's statements (MySQL's upsert read by its affected
//! rows, row locks), decided in one place for `sql.rs`.

use fathom_api::sql::Dialect;

/// What differs by dialect in LinkBench's statements, chosen in one exhaustive match (`of`): a
/// new dialect is one more arm there, and every statement of `sql.rs` follows from its answers.
#[derive(Clone, Copy, Debug)]
pub struct Syntax {
    /// MySQL's own: `ON DUPLICATE KEY UPDATE` read by its affected rows, `REPLACE`, `IF()`,
    /// `FORCE INDEX`, `LIMIT offset, count`. Otherwise `ON CONFLICT`, `CASE`, `LIMIT … OFFSET`,
    /// and a locking read before a write where the affected rows say nothing.
    pub mysql: bool,
    /// `SELECT … FOR UPDATE` locks the row (SQLite locks the whole database instead).
    pub row_locks: bool,
}

impl Syntax {
    pub fn of(d: Dialect) -> Syntax {
        match d {
            Dialect::MariaDb => Syntax {
                mysql: true,
                row_locks: true,
            },
            Dialect::Postgres => Syntax {
                mysql: false,
                row_locks: true,
            },
            Dialect::Sqlite => Syntax {
                mysql: false,
                row_locks: false,
            },
        }
    }
}
