//! TPC-C's nine tables as sysbench-tpcc creates them (one copy per `tables`, numbered from 1):
//! its columns and types (TINYINT and DATETIME on MariaDB, SMALLINT and TIMESTAMP elsewhere),
//! primary keys, secondary indexes and, with `use_fk`, its foreign keys.

use fathom_api::sql::Dialect;

/// The nine tables, in the order sysbench-tpcc drops them (children first).
pub const TABLES: [&str; 9] = [
    "history",
    "new_orders",
    "order_line",
    "orders",
    "customer",
    "district",
    "stock",
    "item",
    "warehouse",
];

/// The statements that drop and create copy `t` of every table.
pub fn create(d: Dialect, storage: Option<&str>, t: u32) -> Vec<String> {
    let suffix = d.table_suffix(storage);
    let drops = TABLES
        .iter()
        .map(|name| format!("DROP TABLE IF EXISTS {name}{t}"));
    let creates = (columns(d).into_iter())
        .map(|(name, cols)| format!("CREATE TABLE {name}{t} ({cols}){suffix}"));
    drops.chain(creates).collect()
}

/// Each table's columns and primary key, in the dialect's types, in the order they are created.
fn columns(d: Dialect) -> [(&'static str, String); 9] {
    let (tiny, datetime) = match d {
        Dialect::MariaDb => ("tinyint", "datetime"),
        _ => ("smallint", "timestamp"),
    };
    [
        (
            "warehouse",
            "w_id smallint not null, w_name varchar(10), w_street_1 varchar(20), \
             w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), \
             w_tax decimal(4,2), w_ytd decimal(12,2), primary key (w_id)"
                .to_string(),
        ),
        (
            "district",
            format!(
                "d_id {tiny} not null, d_w_id smallint not null, d_name varchar(10), \
                 d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), \
                 d_state char(2), d_zip char(9), d_tax decimal(4,2), d_ytd decimal(12,2), \
                 d_next_o_id int, primary key (d_w_id, d_id)"
            ),
        ),
        (
            "customer",
            format!(
                "c_id int not null, c_d_id {tiny} not null, c_w_id smallint not null, \
                 c_first varchar(16), c_middle char(2), c_last varchar(16), \
                 c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), \
                 c_state char(2), c_zip char(9), c_phone char(16), c_since {datetime}, \
                 c_credit char(2), c_credit_lim bigint, c_discount decimal(4,2), \
                 c_balance decimal(12,2), c_ytd_payment decimal(12,2), \
                 c_payment_cnt smallint, c_delivery_cnt smallint, c_data text, \
                 PRIMARY KEY(c_w_id, c_d_id, c_id)"
            ),
        ),
        (
            "history",
            format!(
                "h_c_id int, h_c_d_id {tiny}, h_c_w_id smallint, h_d_id {tiny}, \
                 h_w_id smallint, h_date {datetime}, h_amount decimal(6,2), h_data varchar(24)"
            ),
        ),
        (
            "orders",
            format!(
                "o_id int not null, o_d_id {tiny} not null, o_w_id smallint not null, \
                 o_c_id int, o_entry_d {datetime}, o_carrier_id {tiny}, o_ol_cnt {tiny}, \
                 o_all_local {tiny}, PRIMARY KEY(o_w_id, o_d_id, o_id)"
            ),
        ),
        (
            "new_orders",
            format!(
                "no_o_id int not null, no_d_id {tiny} not null, no_w_id smallint not null, \
                 PRIMARY KEY(no_w_id, no_d_id, no_o_id)"
            ),
        ),
        (
            "order_line",
            format!(
                "ol_o_id int not null, ol_d_id {tiny} not null, ol_w_id smallint not null, \
                 ol_number {tiny} not null, ol_i_id int, ol_supply_w_id smallint, \
                 ol_delivery_d {datetime}, ol_quantity {tiny}, ol_amount decimal(6,2), \
                 ol_dist_info char(24), PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number)"
            ),
        ),
        ("stock", {
            let dists: String = (1..=10)
                .map(|i| format!("s_dist_{i:02} char(24), "))
                .collect();
            format!(
                "s_i_id int not null, s_w_id smallint not null, s_quantity smallint, \
                     {dists}s_ytd decimal(8,0), s_order_cnt smallint, s_remote_cnt smallint, \
                     s_data varchar(50), PRIMARY KEY(s_w_id, s_i_id)"
            )
        }),
        (
            "item",
            "i_id int not null, i_im_id int, i_name varchar(24), i_price decimal(5,2), \
             i_data varchar(50), PRIMARY KEY(i_id)"
                .to_string(),
        ),
    ]
}

/// The secondary indexes sysbench-tpcc creates once the items are in.
pub fn indexes(t: u32) -> Vec<String> {
    [
        ("idx_customer", "customer", "c_w_id,c_d_id,c_last,c_first"),
        ("idx_orders", "orders", "o_w_id,o_d_id,o_c_id,o_id"),
        ("fkey_stock_2", "stock", "s_i_id"),
        ("fkey_order_line_2", "order_line", "ol_supply_w_id,ol_i_id"),
        ("fkey_history_1", "history", "h_c_w_id,h_c_d_id,h_c_id"),
        ("fkey_history_2", "history", "h_w_id,h_d_id"),
    ]
    .iter()
    .map(|(index, table, cols)| format!("CREATE INDEX {index}{t} ON {table}{t} ({cols})"))
    .collect()
}

/// sysbench-tpcc's foreign keys (`use_fk`), added on the empty tables.
pub fn foreign_keys(t: u32) -> Vec<String> {
    [
        (
            "new_orders",
            1,
            "no_w_id,no_d_id,no_o_id",
            "orders",
            "o_w_id,o_d_id,o_id",
        ),
        (
            "orders",
            1,
            "o_w_id,o_d_id,o_c_id",
            "customer",
            "c_w_id,c_d_id,c_id",
        ),
        ("customer", 1, "c_w_id,c_d_id", "district", "d_w_id,d_id"),
        (
            "history",
            1,
            "h_c_w_id,h_c_d_id,h_c_id",
            "customer",
            "c_w_id,c_d_id,c_id",
        ),
        ("history", 2, "h_w_id,h_d_id", "district", "d_w_id,d_id"),
        ("district", 1, "d_w_id", "warehouse", "w_id"),
        (
            "order_line",
            1,
            "ol_w_id,ol_d_id,ol_o_id",
            "orders",
            "o_w_id,o_d_id,o_id",
        ),
        (
            "order_line",
            2,
            "ol_supply_w_id,ol_i_id",
            "stock",
            "s_w_id,s_i_id",
        ),
        ("stock", 1, "s_w_id", "warehouse", "w_id"),
        ("stock", 2, "s_i_id", "item", "i_id"),
    ]
    .iter()
    .map(|(table, n, cols, parent, keys)| {
        format!(
            "ALTER TABLE {table}{t} ADD CONSTRAINT fkey_{table}_{n}_{t} FOREIGN KEY({cols}) \
             REFERENCES {parent}{t}({keys})"
        )
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_copy_has_its_nine_tables_and_the_dialects_types() {
        let maria = create(Dialect::MariaDb, Some("InnoDB"), 2);
        assert_eq!(maria.len(), 18);
        assert!(maria[9].starts_with("CREATE TABLE warehouse2 (w_id smallint"));
        assert!(maria.iter().any(|s| s.contains("d_id tinyint not null")));
        assert!(maria
            .iter()
            .all(|s| !s.starts_with("CREATE") || s.contains("InnoDB")));
        let pg = create(Dialect::Postgres, None, 1);
        assert!(pg.iter().any(|s| s.contains("c_since timestamp")));
        assert_eq!(indexes(1).len(), 6);
        assert!(foreign_keys(3)[0].contains("REFERENCES orders3(o_w_id,o_d_id,o_id)"));
    }
}
