//! The workload files built into fathom (`workloads/` in the repository), by the name
//! `--workload` takes for them; `fathom workloads` lists them.

/// The workload files fathom ships (`workloads/` in the repository), by the name `--workload`
/// takes for them.
pub const BUNDLED: &[(&str, &str)] = &[
    (
        "ycsb/workloada",
        include_str!("../../../../workloads/ycsb/workloada.toml"),
    ),
    (
        "ycsb/workloadb",
        include_str!("../../../../workloads/ycsb/workloadb.toml"),
    ),
    (
        "ycsb/workloadc",
        include_str!("../../../../workloads/ycsb/workloadc.toml"),
    ),
    (
        "ycsb/workloadd",
        include_str!("../../../../workloads/ycsb/workloadd.toml"),
    ),
    (
        "ycsb/workloade",
        include_str!("../../../../workloads/ycsb/workloade.toml"),
    ),
    (
        "ycsb/workloadf",
        include_str!("../../../../workloads/ycsb/workloadf.toml"),
    ),
    (
        "pgbench/tpcb-like",
        include_str!("../../../../workloads/pgbench/tpcb-like.toml"),
    ),
    (
        "pgbench/simple-update",
        include_str!("../../../../workloads/pgbench/simple-update.toml"),
    ),
    (
        "pgbench/select-only",
        include_str!("../../../../workloads/pgbench/select-only.toml"),
    ),
    (
        "sysbench/oltp_insert",
        include_str!("../../../../workloads/sysbench/oltp_insert.toml"),
    ),
    (
        "sysbench/oltp_delete",
        include_str!("../../../../workloads/sysbench/oltp_delete.toml"),
    ),
    (
        "sysbench/select_random_ranges",
        include_str!("../../../../workloads/sysbench/select_random_ranges.toml"),
    ),
    (
        "dbbench/readrandom",
        include_str!("../../../../workloads/dbbench/readrandom.toml"),
    ),
    (
        "cases/tombstones",
        include_str!("../../../../workloads/cases/tombstones.toml"),
    ),
    (
        "cases/long-ranges",
        include_str!("../../../../workloads/cases/long-ranges.toml"),
    ),
];
