//! One conformance suite for every sql engine, on real servers started from Debian's packages
//! (scripts/setup.sh --servers): DDL, prepared statements with each parameter type, rows and
//! affected counts, a transaction rolled back, the server's pid and version, that a server
//! listens on its unix socket only (its own variables say so) — and after the
//! engine is dropped, no server process left. A new sql engine gets the suite by adding one
//! `sql_conformance!` line (and a test fails until it does).

use fathom_api::family::{Engine, Family};
use fathom_api::sql::{Row, SqlConn, SqlEngine, Value};
use fathom_engines::EngineConfig;
use std::path::Path;

mod common;

fn open(name: &str, dir: &Path, options: &str) -> anyhow::Result<Box<dyn SqlEngine>> {
    let entry = fathom_engines::find(name)?;
    let config = EngineConfig {
        data_dir: dir.to_path_buf(),
        options: options.to_string(),
        settings: [("cache_size".to_string(), "64m".to_string())].into(),
        ..Default::default()
    };
    match fathom_engines::open(entry, &config)? {
        Engine::Sql(e) => Ok(e),
        _ => anyhow::bail!("{name} is not a sql engine"),
    }
}

fn alive(pid: u32) -> bool {
    // A zombie is gone for our purposes; a live process has a state other than Z.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

fn check_engine(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(name, dir.path(), "").unwrap_or_else(|e| panic!("{name}: {e:#}"));
    assert!(!engine.version().is_empty(), "{name}: version");
    let pids = engine.pids();
    let server = fathom_engines::find(name).unwrap().server;
    if server {
        assert!(
            pids.len() == 1 && alive(pids[0]),
            "{name}: server pid {pids:?}"
        );
        assert!(engine.url().is_some(), "{name}: url");
    }
    let d = engine.dialect();
    let mut c = engine.connect().unwrap();
    if server {
        listens_only_on_its_socket(name, &mut *c);
    }
    c.exec("DROP TABLE IF EXISTS t").unwrap();
    c.exec(&format!(
        "CREATE TABLE t (id {}, k INTEGER NOT NULL, c CHAR(20) NOT NULL, PRIMARY KEY (id)){}",
        d.auto_increment_key(),
        d.table_suffix(engine.storage_engine())
    ))
    .unwrap();
    let ins = c
        .prepare("INSERT INTO t (id, k, c) VALUES (?, ?, ?)")
        .unwrap();
    for i in 1..=50i64 {
        let out = c
            .run(ins, &[Value::Int(i), Value::Int(i % 5), Value::Text("abc")])
            .unwrap();
        assert_eq!((out.rows, out.affected), (0, 1), "{name}: insert {i}");
    }
    let range = c
        .prepare("SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c")
        .unwrap();
    let out = c.run(range, &[Value::Int(11), Value::Int(20)]).unwrap();
    assert_eq!(out.rows, 10, "{name}: range rows");
    assert!(
        out.bytes >= 30,
        "{name}: bytes of 10 CHAR(20) values: {}",
        out.bytes
    );
    let upd = c.prepare("UPDATE t SET k=k+1 WHERE k=?").unwrap();
    assert_eq!(
        c.run(upd, &[Value::Int(0)]).unwrap().affected,
        10,
        "{name}: update"
    );
    c.exec("BEGIN").unwrap();
    let del = c.prepare("DELETE FROM t WHERE id=?").unwrap();
    assert_eq!(c.run(del, &[Value::Int(1)]).unwrap().affected, 1);
    c.exec("ROLLBACK").unwrap();
    let count = c.prepare("SELECT id FROM t WHERE id <= ?").unwrap();
    assert_eq!(
        c.run(count, &[Value::Int(50)]).unwrap().rows,
        50,
        "{name}: rollback"
    );
    row_values(name, c.as_mut());
    // A second connection sees the first's committed rows.
    let mut c2 = engine.connect().unwrap();
    let s2 = c2.prepare("SELECT k FROM t WHERE id=?").unwrap();
    assert_eq!(c2.run(s2, &[Value::Int(5)]).unwrap().rows, 1);
    drop((c, c2));
    drop(engine);
    if server {
        assert!(!alive(pids[0]), "{name}: server {} still running", pids[0]);
    }
}

/// The values of a chosen row, as text: an integer, a DECIMAL, a string and a NULL; no values
/// past the last row.
fn row_values(name: &str, c: &mut dyn SqlConn) {
    c.exec("DROP TABLE IF EXISTS r").unwrap();
    c.exec("CREATE TABLE r (id INTEGER NOT NULL, m DECIMAL(12,2), s VARCHAR(10), n INTEGER)")
        .unwrap();
    c.exec("INSERT INTO r VALUES (1, 300000.00, 'GC', 7), (2, -10.50, 'BC', NULL)")
        .unwrap();
    let select = c
        .prepare("SELECT id, m, s, n FROM r WHERE id >= ? ORDER BY id")
        .unwrap();
    let mut row = Row::default();
    let out = c.run_row(select, &[Value::Int(1)], 1, &mut row).unwrap();
    assert_eq!(out.rows, 2, "{name}: rows");
    assert_eq!(row.int(0).unwrap(), 2, "{name}: {row:?}");
    assert_eq!(row.float(1).unwrap(), -10.5, "{name}: {row:?}");
    assert_eq!(row.text(2).unwrap(), "BC", "{name}: {row:?}");
    assert_eq!(row.0[3], None, "{name}: {row:?}");
    c.run_row(select, &[Value::Int(1)], 0, &mut row).unwrap();
    assert_eq!(row.int(1).unwrap(), 300000, "{name}: {row:?}");
    c.run_row(select, &[Value::Int(2)], 1, &mut row).unwrap();
    assert!(row.is_empty(), "{name}: a row past the last: {row:?}");
}

/// A server fathom started says, in its own variables, that it takes no TCP connections.
fn listens_only_on_its_socket(name: &str, c: &mut dyn fathom_api::sql::SqlConn) {
    let query = if name == "postgres" {
        "SELECT CASE WHEN current_setting('listen_addresses') = '' THEN 1 ELSE 0 END"
    } else {
        "SELECT @@skip_networking"
    };
    let stmt = c.prepare(query).unwrap();
    assert_eq!(
        c.scalar(stmt, &[]).unwrap(),
        Some(1),
        "{name}: `{query}` says the server listens on TCP"
    );
}

macro_rules! sql_conformance {
    ($name:ident) => {
        #[test]
        fn $name() {
            check_engine(&stringify!($name).replace('_', "-"));
        }
    };
}

sql_conformance!(innodb);
sql_conformance!(myrocks);
sql_conformance!(postgres);
sql_conformance!(sqlite_sql);

#[test]
fn every_sql_engine_is_covered() {
    common::every_engine_has_its_line(include_str!("sql_conformance.rs"), Family::Sql, &[]);
}

/// A server that cannot start is an error with the tail of its log (and of its install step's
/// output, when that step failed), and nothing is left running.
#[test]
fn a_bad_setup_shows_the_servers_log() {
    for (name, bad) in [
        ("innodb", "innodb_no_such_variable=1"),
        ("postgres", "no_such_setting = 1"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let err = format!(
            "{:#}",
            open(name, dir.path(), bad).err().expect("must fail")
        );
        assert!(
            err.contains("last lines of") && err.contains(bad.split('=').next().unwrap().trim()),
            "{name}: {err}"
        );
        if name == "innodb" {
            // The install step's own output, not only the server's log.
            assert!(
                err.contains("mariadb-install-db failed") && err.contains("install-db.log"),
                "{err}"
            );
        }
    }
}

/// A second engine on `started`'s server, through `client`.
fn attached(name: &str, started: &dyn SqlEngine, dir: &Path, client: &str) -> Box<dyn SqlEngine> {
    let config = EngineConfig {
        data_dir: dir.join("attached"),
        settings: [
            ("url".to_string(), started.url().unwrap()),
            ("pid".to_string(), started.pids()[0].to_string()),
            ("client".to_string(), client.to_string()),
        ]
        .into(),
        ..Default::default()
    };
    match fathom_engines::open(fathom_engines::find(name).unwrap(), &config).unwrap() {
        Engine::Sql(e) => e,
        _ => panic!("{name} is a sql engine"),
    }
}

/// What each of MariaDB's kinds of statement gave on one client, prepared and as text, the
/// rows numbered from `base`.
fn mariadb_outcomes(c: &mut dyn SqlConn, statements: &[(&str, usize)], base: i64) -> Vec<String> {
    let mut seen = Vec::new();
    for text in [false, true] {
        let base = base + if text { 500 } else { 0 };
        let stmts: Vec<_> = statements
            .iter()
            .filter(|(sql, _)| text || !sql.contains(';'))
            .map(|(sql, n)| {
                let s = if text {
                    c.prepare_text(sql)
                } else {
                    c.prepare(sql)
                };
                (s.unwrap(), *n)
            })
            .collect();
        for i in 0..3 {
            let blob = vec![b'\'' + i as u8; 100 * i];
            let i = i as i64;
            let p = row(base + i, i * 2_000_000_000, -i, &blob, "it's");
            let o = c.run(stmts[0].0, &p).unwrap();
            seen.push(format!("{:?}", (o.rows, o.affected, o.bytes)));
        }
        let o = c
            .run_keeping(stmts[1].0, &[Value::Int(base)], Some(0))
            .unwrap();
        seen.push(format!("{:?}", (o.rows, o.bytes, o.kept.map(|k| k - base))));
        let o = c
            .run_keeping(stmts[2].0, &[Value::Int(base + 2)], Some(1))
            .unwrap();
        seen.push(format!("{o:?}"));
        seen.push(second_row(c, stmts[1].0, base));
        let top = c.scalar(stmts[3].0, &[Value::Int(base + 2)]).unwrap();
        seen.push(format!("{:?}", top.map(|k| k - base)));
        seen.push(format!(
            "{:?}",
            c.scalar(stmts[3].0, &[Value::Int(0)]).unwrap()
        ));
        let o = c
            .run(stmts[4].0, &[Value::Text("x"), Value::Int(base + 1)])
            .unwrap();
        seen.push(format!("{:?}", (o.rows, o.affected >= 1)));
        if text {
            let o = c.run(stmts[5].0, &[Value::Int(base + 9)]).unwrap();
            seen.push(format!("{o:?}"));
        }
        let dup = c.run(stmts[0].0, &row(base, 0, 0, b"", ""));
        let err = format!("{:#}", dup.unwrap_err());
        assert!(err.contains("1062"), "duplicate key error: {err}");
    }
    seen
}

/// fathom's own MariaDB client and the mysql crate's, on one server, give the same outcome for
/// every statement the workloads send: prepared and text, rows of each column type, NULLs,
/// several statements in one text, scalars, and a server error with its code.
#[test]
fn mariadb_clients_agree() {
    let statements = [
        (
            "INSERT INTO v VALUES (?, ?, ?, 1.5, 12.25, '2024-01-02 03:04:05', ?, ?)",
            4,
        ),
        ("SELECT * FROM v WHERE id >= ? ORDER BY id", 1),
        ("SELECT u, t, c FROM v WHERE id = ?", 1),
        ("SELECT max(id) FROM v WHERE id < ?", 1),
        ("UPDATE v SET c = ? WHERE id <= ?", 2),
        ("INSERT INTO v (id) VALUES (?); SELECT 1", 1),
    ];
    clients_agree(
        "innodb",
        "mysql",
        "CREATE TABLE v (id BIGINT NOT NULL PRIMARY KEY, u INT UNSIGNED, t TINYINT, \
         d DOUBLE, m DECIMAL(10,2), w DATETIME, b VARBINARY(300), c VARCHAR(40))",
        |c, base| mariadb_outcomes(c, &statements, base),
    );
}

/// Runs `outcomes` on a connection of fathom's own client and then of the crate's (`krate`),
/// both on one server of engine `name` with table `v` made by `create`, and checks they agree.
fn clients_agree(
    name: &str,
    krate: &str,
    create: &str,
    outcomes: impl Fn(&mut dyn SqlConn, i64) -> Vec<String>,
) {
    let dir = tempfile::tempdir().unwrap();
    let lean = open(name, dir.path(), "").unwrap();
    let by_crate = attached(name, &*lean, dir.path(), krate);
    let mut setup = lean.connect().unwrap();
    setup.exec("DROP TABLE IF EXISTS v").unwrap();
    setup.exec(create).unwrap();
    let seen: Vec<Vec<String>> = [&lean, &by_crate]
        .into_iter()
        .enumerate()
        .map(|(round, engine)| {
            let mut c = engine.connect().unwrap();
            outcomes(c.as_mut(), 1000 * (round as i64 + 1))
        })
        .collect();
    assert_eq!(
        seen[0], seen[1],
        "fathom's client against the {krate} crate's"
    );
}

/// The values of `v`'s second row from `base` on, as text (its id left out: it differs
/// between the clients); the fixed ones checked.
fn second_row(c: &mut dyn SqlConn, from: fathom_api::sql::Stmt, base: i64) -> String {
    let mut r = Row::default();
    c.run_row(from, &[Value::Int(base)], 1, &mut r).unwrap();
    // u, t, d, m, w of row 1: 1e9 (2e9 on MariaDB), -1, 1.5, 12.25, the date.
    assert_eq!(r.int(2).unwrap(), -1, "{r:?}");
    assert_eq!(r.float(3).unwrap(), 1.5, "{r:?}");
    assert_eq!(r.text(4).unwrap(), "12.25", "{r:?}");
    assert_eq!(r.text(5).unwrap(), "2024-01-02 03:04:05", "{r:?}");
    format!("{:?}", &r.0[1..])
}

/// The parameters of a row of `v`: id, u, t, b, c.
fn row<'a>(id: i64, u: i64, t: i64, b: &'a [u8], c: &'a str) -> [Value<'a>; 5] {
    [
        Value::Int(id),
        Value::Int(u),
        Value::Int(t),
        Value::Bytes(b),
        Value::Text(c),
    ]
}

/// What each of PostgreSQL's kinds of statement gave on one client, the rows numbered from
/// `base`.
fn postgres_outcomes(c: &mut dyn SqlConn, base: i64) -> Vec<String> {
    let mut seen = Vec::new();
    let mut prepare = |sql: &str| c.prepare(sql).unwrap();
    let insert = prepare("INSERT INTO v VALUES (?, ?, ?, 1.5, 12.25, '2024-01-02 03:04:05', ?, ?)");
    let from = prepare("SELECT * FROM v WHERE id >= ? ORDER BY id");
    let one = prepare("SELECT u, t, c FROM v WHERE id = ?");
    let top = prepare("SELECT max(id) FROM v WHERE id < ?");
    let update = prepare("UPDATE v SET c = ? WHERE id BETWEEN ? AND ?");
    let count = prepare("SELECT count(*) FROM v WHERE id >= ?");
    for i in 0..3 {
        let blob = vec![b'\\' + i as u8; 100 * i];
        let i = i as i64;
        let p = row(base + i, i * 1_000_000_000, -i, &blob, "it's");
        let o = c.run(insert, &p).unwrap();
        seen.push(format!("{:?}", (o.rows, o.affected, o.bytes)));
    }
    let o = c.run_keeping(from, &[Value::Int(base)], Some(0)).unwrap();
    seen.push(format!("{:?}", (o.rows, o.bytes, o.kept.map(|k| k - base))));
    for keep in [0, 1] {
        let o = c
            .run_keeping(one, &[Value::Int(base + 2)], Some(keep))
            .unwrap();
        seen.push(format!("{o:?}"));
    }
    seen.push(second_row(c, from, base));
    let t = c.scalar(top, &[Value::Int(base + 2)]).unwrap();
    seen.push(format!("{:?}", t.map(|k| k - base)));
    seen.push(format!("{:?}", c.scalar(top, &[Value::Int(0)]).unwrap()));
    let o = c
        .run(
            update,
            &[Value::Text("x"), Value::Int(base), Value::Int(base + 1)],
        )
        .unwrap();
    seen.push(format!("{:?}", (o.rows, o.affected)));
    c.exec("BEGIN").unwrap();
    let all = [
        Value::Text("rolled back"),
        Value::Int(base),
        Value::Int(base + 2),
    ];
    assert_eq!(c.run(update, &all).unwrap().affected, 3);
    c.exec("ROLLBACK").unwrap();
    let o = c.run_keeping(one, &[Value::Int(base + 2)], None).unwrap();
    seen.push(format!("{o:?}"));
    seen.push(format!(
        "{:?}",
        c.scalar(count, &[Value::Int(base)]).unwrap()
    ));
    let dup = c.run(insert, &row(base, 0, 0, b"", ""));
    let err = dup.unwrap_err();
    assert!(
        fathom_api::sql::retryable(&err),
        "unique violation retried: {err:#}"
    );
    seen.push(format!("{err:#}").replace(&base.to_string(), "BASE"));
    // The connection is usable after the error.
    seen.push(format!(
        "{:?}",
        c.scalar(count, &[Value::Int(base)]).unwrap()
    ));
    seen
}

/// fathom's own PostgreSQL client and the postgres crate's, on one server, give the same
/// outcome for every kind of statement the workloads prepare: rows of each column type in
/// binary, NULLs, kept integers of each width, scalars, affected rows, a rolled-back
/// transaction, and a unique violation classified as retryable.
#[test]
fn postgres_clients_agree() {
    clients_agree(
        "postgres",
        "postgres",
        "CREATE TABLE v (id BIGINT NOT NULL PRIMARY KEY, u INTEGER, t SMALLINT, \
         d DOUBLE PRECISION, m NUMERIC(10,2), w TIMESTAMP, b BYTEA, c VARCHAR(40))",
        postgres_outcomes,
    );
}

/// fathom's PostgreSQL client logs in by SCRAM-SHA-256, MD5 and cleartext passwords (the
/// server's pg_hba.conf asks for each of them for one user); a wrong password is refused.
#[test]
fn postgres_logins_by_password() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // Readable by the server's user: the tests' scratch directories are not.
    let hba_dir = dir.path().join("hba");
    std::fs::create_dir(&hba_dir).unwrap();
    for d in [dir.path(), hba_dir.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let hba = hba_dir.join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all scram scram-sha-256\nlocal all md5 md5\nlocal all clear password\n\
         local all all trust\n",
    )
    .unwrap();
    let setup = format!("hba_file = '{}'", hba.display());
    let started = open("postgres", &dir.path().join("data"), &setup).unwrap();
    let mut admin = started.connect().unwrap();
    for (user, encryption) in [("scram", "scram-sha-256"), ("md5", "md5"), ("clear", "md5")] {
        admin
            .exec(&format!(
                "SET password_encryption = '{encryption}'; \
                 CREATE ROLE {user} LOGIN PASSWORD 's3cret'"
            ))
            .unwrap();
    }
    let url = started.url().unwrap();
    for user in ["scram", "md5", "clear"] {
        for (password, works) in [("s3cret", true), ("wrong", false)] {
            let url = url.replace("user=postgres", &format!("user={user} password={password}"));
            let config = EngineConfig {
                data_dir: dir.path().join(format!("{user}-{works}")),
                settings: [("url".to_string(), url)].into(),
                ..Default::default()
            };
            let entry = fathom_engines::find("postgres").unwrap();
            match fathom_engines::open(entry, &config) {
                Ok(Engine::Sql(e)) => {
                    assert!(works, "{user} logged in with a wrong password");
                    let mut c = e.connect().unwrap_or_else(|e| panic!("{user}: {e:#}"));
                    let one = c.prepare("SELECT 1").unwrap();
                    assert_eq!(c.scalar(one, &[]).unwrap(), Some(1), "{user}");
                }
                Ok(_) => unreachable!(),
                Err(e) => assert!(!works, "{user}: {e:#}"),
            }
        }
    }
}
