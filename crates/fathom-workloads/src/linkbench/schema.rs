//! LinkBench's tables on the sql family, as the original's MySQL schema (`create_innodb.sql`):
//! linktable keyed (link_type, id1, id2) with the covering `id1_type` index and, on MariaDB,
//! partitioned by `id1`; counttable; nodetable. PostgreSQL and SQLite create the index apart.

use fathom_api::sql::Dialect;

/// The tables, dropped and created; on MariaDB `linktable` in `partitions` partitions by `id1`
/// (none for 0).
pub fn schema(dialect: Dialect, storage: Option<&str>, partitions: u64) -> Vec<String> {
    let suffix = dialect.table_suffix(storage);
    let link_suffix = match dialect {
        Dialect::MariaDb if partitions > 0 => {
            format!("{suffix} PARTITION BY KEY(id1) PARTITIONS {partitions}")
        }
        Dialect::MariaDb | Dialect::Postgres | Dialect::Sqlite => suffix.clone(),
    };
    let (small, blob, text) = match dialect {
        Dialect::MariaDb => ("TINYINT", "VARBINARY(255)", "MEDIUMBLOB"),
        Dialect::Postgres => ("SMALLINT", "BYTEA", "BYTEA"),
        Dialect::Sqlite => ("INTEGER", "BLOB", "BLOB"),
    };
    // MySQL keeps the covering index inside the table definition; the others create it apart.
    let index_cols = "id1, link_type, visibility, time, id2, version, data";
    let (inline_index, apart) = match dialect {
        Dialect::MariaDb => (format!(",\n  KEY id1_type ({index_cols})"), false),
        Dialect::Postgres | Dialect::Sqlite => (String::new(), true),
    };
    let mut ddl = vec![
        "DROP TABLE IF EXISTS linktable".to_string(),
        "DROP TABLE IF EXISTS counttable".to_string(),
        "DROP TABLE IF EXISTS nodetable".to_string(),
        format!(
            "CREATE TABLE linktable (\n  id1 BIGINT NOT NULL DEFAULT 0,\n  id2 BIGINT NOT NULL DEFAULT 0,\n  \
             link_type BIGINT NOT NULL DEFAULT 0,\n  visibility {small} NOT NULL DEFAULT 0,\n  \
             data {blob} NOT NULL DEFAULT '',\n  time BIGINT NOT NULL DEFAULT 0,\n  \
             version INT NOT NULL DEFAULT 0,\n  PRIMARY KEY (link_type, id1, id2){inline_index}\n){link_suffix}"
        ),
        format!(
            "CREATE TABLE counttable (\n  id BIGINT NOT NULL DEFAULT 0,\n  link_type BIGINT NOT NULL DEFAULT 0,\n  \
             count INT NOT NULL DEFAULT 0,\n  time BIGINT NOT NULL DEFAULT 0,\n  \
             version BIGINT NOT NULL DEFAULT 0,\n  PRIMARY KEY (id, link_type)\n){suffix}"
        ),
        format!(
            "CREATE TABLE nodetable (\n  id {},\n  type INT NOT NULL,\n  version BIGINT NOT NULL,\n  \
             time INT NOT NULL,\n  data {text} NOT NULL,\n  PRIMARY KEY (id)\n){suffix}",
            dialect.big_auto_increment_key()
        ),
    ];
    if apart {
        ddl.push(format!("CREATE INDEX id1_type ON linktable ({index_cols})"));
    }
    ddl
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadbs_linktable_is_partitioned_by_id1() {
        let ddl = schema(Dialect::MariaDb, Some("InnoDB"), 16).join("\n");
        assert!(
            ddl.contains(
                ") ENGINE = InnoDB PARTITION BY KEY(id1) PARTITIONS 16\nCREATE TABLE counttable"
            ),
            "{ddl}"
        );
        assert_eq!(
            ddl.matches("PARTITION BY").count(),
            1,
            "only linktable: {ddl}"
        );
        assert!(!schema(Dialect::MariaDb, None, 0)
            .join("\n")
            .contains("PARTITION"));
        assert!(!schema(Dialect::Postgres, None, 16)
            .join("\n")
            .contains("PARTITION"));
    }
}
