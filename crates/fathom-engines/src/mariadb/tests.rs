//! Unit tests of the MariaDB engine: its my.cnf, its setup lines and its flavors.

use super::*;

#[test]
fn setup_lines_are_checked() {
    assert_eq!(
        Flavor::setup_lines("innodb_page_size=8k\n\n skip-log-bin \n").unwrap(),
        vec!["innodb_page_size=8k", "skip-log-bin"]
    );
    let err = Flavor::setup_lines("innodb page size = 8k")
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected a my.cnf line"), "{err}");
}

#[test]
fn myrocks_is_loaded_at_start_up() {
    let cnf = my_cnf(
        MYROCKS_FLAVOR,
        &Install::debian(),
        Path::new("/d"),
        (Path::new("/s"), None),
        1 << 20,
        &["x=1".into()],
    );
    assert!(cnf.contains("plugin-load-add=ha_rocksdb.so"));
    assert!(cnf.contains("rocksdb_block_cache_size=1048576"));
    assert!(cnf.ends_with("x=1\n"), "the setup's lines come last: {cnf}");
    // Told to run as root only when fathom is root: as anyone else it runs as them.
    assert_eq!(cnf.contains("user=root"), server::is_root(), "{cnf}");
    assert!(cnf.contains("skip-networking"), "{cnf}");
}

/// `--network`: TCP at fathom's address, no name lookups, root let in by an init file.
#[test]
fn over_tcp_it_listens_where_fathom_says() {
    let at: SocketAddr = "127.0.0.1:33061".parse().unwrap();
    let cnf = my_cnf(
        INNODB_FLAVOR,
        &Install::debian(),
        Path::new("/d/mysql"),
        (Path::new("/s"), Some(at)),
        1 << 20,
        &[],
    );
    for line in [
        "bind-address=127.0.0.1",
        "port=33061",
        "skip-name-resolve",
        "init-file=/d/tcp-user.sql",
        "userstat=1",
    ] {
        assert!(cnf.lines().any(|l| l == line), "{line}: {cnf}");
    }
    assert!(!cnf.contains("skip-networking"), "{cnf}");
}
