//! How a workload's SQL statements travel, as its original client sent them: prepared once
//! per connection, or SQL text with the values written in each time (JDBC's `Statement`,
//! Python's MySQLdb). Chosen by the `statements` parameter of the workloads whose originals
//! differ from sysbench's prepared statements.

use fathom_api::sql::Dialect;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Statements {
    /// As the original client on this database (the workload says which that is).
    Original,
    /// SQL text with the values written in: MariaDB, and PostgreSQL through fathom's own
    /// client (a simple query); SQLite's client prepares.
    Text,
    /// Prepared once per connection.
    Prepared,
}

impl Statements {
    /// Whether statements go as text on `dialect`, where the original client sent text on
    /// `original_text` dialects.
    pub fn text_on(self, dialect: Dialect, original_text: &[Dialect]) -> anyhow::Result<bool> {
        match self {
            Statements::Original => Ok(original_text.contains(&dialect)),
            Statements::Prepared => Ok(false),
            Statements::Text if dialect != Dialect::Sqlite => Ok(true),
            Statements::Text => anyhow::bail!(
                "parameter `statements`: text is sent to MariaDB and PostgreSQL; on \
                 {dialect:?} fathom prepares (use original or prepared)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_original_sends_text_where_its_client_did() {
        let mysql = [Dialect::MariaDb];
        let o = Statements::Original;
        assert!(o.text_on(Dialect::MariaDb, &mysql).unwrap());
        assert!(!o.text_on(Dialect::Postgres, &mysql).unwrap());
        assert!(!Statements::Prepared
            .text_on(Dialect::MariaDb, &mysql)
            .unwrap());
        assert!(Statements::Text.text_on(Dialect::Postgres, &mysql).unwrap());
        let err = Statements::Text
            .text_on(Dialect::Sqlite, &mysql)
            .unwrap_err();
        assert!(err.to_string().contains("MariaDB and PostgreSQL"), "{err}");
    }
}
