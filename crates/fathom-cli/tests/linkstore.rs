//! LinkBench's requests on MariaDB, one operation kind at a time, read back from the server's
//! general log: each kind sends `LinkStoreMysql`'s statements on `LinkStoreMysql`'s
//! connection — reads on a connection in autocommit with no COMMIT, writes on one with
//! autocommit off, committed with their last statement or after it.

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

/// A statement with its literals (numbers, strings and `_binary` strings, hex strings) written
/// as `N`, `S` and `H`, and lists of numbers and strings as one: the statement's shape, whatever
/// its values. A payload is hex, as LinkStoreMysql writes nearly every one.
fn shape(sql: &str) -> String {
    let mut out = String::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        let after_word = out
            .chars()
            .last()
            .is_some_and(|p| p.is_ascii_alphanumeric() || p == '_');
        if c == '\'' {
            while let Some(q) = chars.next() {
                match q {
                    '\\' => {
                        chars.next();
                    }
                    '\'' => break,
                    _ => {}
                }
            }
            if out.ends_with(['X', 'x']) {
                out.pop();
                out.push('H');
                continue;
            }
            if out.ends_with("_binary") {
                out.truncate(out.len() - "_binary".len());
            }
            out.push('S');
        } else if c.is_ascii_digit() && !after_word {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    let mut out = out.replace("N, S", "N").replace("S, N", "N");
    while out.contains("N, N") {
        out = out.replace("N, N", "N");
    }
    out
}

/// Who sent a statement: the client's writes' connection, its reads' connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Conn {
    Writes,
    Reads,
}

/// One kind's expected statements, by connection, as examples (their shapes are compared).
struct Kind {
    param: &'static str,
    op: &'static str,
    writes: &'static [&'static str],
    reads: &'static [&'static str],
}

/// The statements of one link write that LinkStoreMysql's `addLink` sends: the upsert read by
/// its affected rows, then the count (new link) or the data (existing link), the last carrying
/// the COMMIT.
const ADD_LINK: &[&str] = &[
    "INSERT INTO linktable (id1, id2, link_type, visibility, data, time, version) VALUES \
     (1, 2, 3, 1, X'78', 5, 0) ON DUPLICATE KEY UPDATE visibility = VALUES(visibility)",
    "INSERT INTO counttable (id, link_type, count, time, version) VALUES (1, 2, 1, 3, 0) \
     ON DUPLICATE KEY UPDATE count = count + 1, version = version + 1, time = VALUES(time); \
     COMMIT",
    "UPDATE linktable SET visibility = 1, data = X'78', time = 1, version = 0 \
     WHERE id1 = 1 AND id2 = 2 AND link_type = 3; COMMIT",
];

fn kinds() -> Vec<Kind> {
    vec![
        Kind {
            param: "getnode",
            op: "GET_NODE",
            writes: &[],
            reads: &["SELECT id, type, version, time, data FROM nodetable WHERE id = 9"],
        },
        Kind {
            param: "countlink",
            op: "COUNT_LINK",
            writes: &[],
            reads: &["SELECT count FROM counttable WHERE id = 1 AND link_type = 2"],
        },
        Kind {
            param: "getlink",
            op: "MULTIGET_LINK",
            writes: &[],
            reads: &["SELECT id1, id2, link_type, visibility, data, time, version FROM linktable \
                      WHERE id1 = 1 AND link_type = 2 AND id2 IN (3, 4)"],
        },
        Kind {
            param: "getlinklist",
            op: "GET_LINKS_LIST",
            writes: &[],
            reads: &[
                "SELECT id1, id2, link_type, visibility, data, time, version FROM linktable \
                 FORCE INDEX (id1_type) WHERE id1 = 1 AND link_type = 2 AND time >= 0 AND \
                 time <= 9 AND visibility = 1 ORDER BY time DESC LIMIT 0, 10000",
            ],
        },
        Kind {
            param: "addnode",
            op: "ADD_NODE",
            writes: &["INSERT INTO nodetable (type, version, time, data) VALUES \
                       (2048, 1, 5, X'78'); COMMIT"],
            reads: &[],
        },
        Kind {
            param: "updatenode",
            op: "UPDATE_NODE",
            writes: &["UPDATE nodetable SET version = 1, time = 2, data = X'78' \
                       WHERE id = 3 AND type = 2048; COMMIT"],
            reads: &[],
        },
        Kind {
            param: "deletenode",
            op: "DELETE_NODE",
            writes: &["DELETE FROM nodetable WHERE id = 1 AND type = 2048; COMMIT"],
            reads: &[],
        },
        Kind {
            param: "addlink",
            op: "ADD_LINK",
            writes: ADD_LINK,
            reads: &[],
        },
        // UPDATE_LINK is addLink, as LinkBenchRequest calls it (fix=update_link changes that).
        Kind {
            param: "updatelink",
            op: "UPDATE_LINK",
            writes: ADD_LINK,
            reads: &[],
        },
        Kind {
            param: "deletelink",
            op: "DELETE_LINK",
            writes: &[
                "SELECT visibility FROM linktable WHERE id1 = 1 AND id2 = 2 AND link_type = 3 \
                 FOR UPDATE",
                "UPDATE linktable SET visibility = 0 WHERE id1 = 1 AND id2 = 2 AND link_type = 3",
                "INSERT INTO counttable (id, link_type, count, time, version) VALUES (1, 2, 0, 3, 0) \
                 ON DUPLICATE KEY UPDATE count = IF(count = 0, 0, count - 1), \
                 version = version + 1, time = VALUES(time)",
                "COMMIT",
            ],
            reads: &[],
        },
    ]
}

/// The server's socket, from its URL's `socket=`.
fn socket(url: &str) -> &str {
    url.split("socket=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
}

/// Runs SQL with Debian's `mariadb` client on the server's socket: its rows, tab-separated,
/// their values as stored (no escapes).
fn sql(socket: &str, statement: &str) -> String {
    let out = Command::new("mariadb")
        .args(["-S", socket, "-uroot", "-N", "-B", "-r", "-e", statement])
        .output()
        .expect("Debian's mariadb client");
    assert!(
        out.status.success(),
        "{statement}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The general log's queries by connection: which sent `SET autocommit = 0` (the writes'), which
/// other ones touched LinkBench's tables (the reads'), each with the shapes it sent.
fn logged(socket: &str) -> BTreeMap<(Conn, String), BTreeSet<String>> {
    let log = sql(
        socket,
        "SELECT thread_id, argument FROM mysql.general_log WHERE command_type = 'Query'",
    );
    let rows: Vec<(&str, &str)> = log.lines().filter_map(|l| l.split_once('\t')).collect();
    let writes: BTreeSet<&str> = rows
        .iter()
        .filter(|(_, q)| *q == "SET autocommit = 0")
        .map(|(t, _)| *t)
        .collect();
    let tables = ["nodetable", "linktable", "counttable"];
    let mut by_conn: BTreeMap<(Conn, String), BTreeSet<String>> = BTreeMap::new();
    for (thread, query) in rows {
        let role = if writes.contains(thread) {
            Conn::Writes
        } else if tables.iter().any(|t| query.contains(t)) {
            Conn::Reads
        } else {
            continue;
        };
        if query != "SET autocommit = 0" {
            by_conn
                .entry((role, thread.to_string()))
                .or_default()
                .insert(shape(query));
        }
    }
    by_conn
}

/// Checks what one kind's run sent: on one writes' and at most one reads' connection, nothing
/// but the kind's shapes, its first shape among them.
fn check_kind(kind: &Kind, sent: &BTreeMap<(Conn, String), BTreeSet<String>>) {
    for (conn, expected) in [(Conn::Writes, kind.writes), (Conn::Reads, kind.reads)] {
        let on: Vec<&BTreeSet<String>> = sent
            .iter()
            .filter(|((c, _), _)| *c == conn)
            .map(|(_, s)| s)
            .collect();
        let expected: BTreeSet<String> = expected.iter().map(|s| shape(s)).collect();
        let got: BTreeSet<String> = on.iter().flat_map(|s| s.iter().cloned()).collect();
        assert!(
            on.len() <= 1,
            "{}: {conn:?} statements on {} connections: {sent:#?}",
            kind.op,
            on.len()
        );
        let stray: Vec<&String> = got.difference(&expected).collect();
        assert!(
            stray.is_empty(),
            "{}: on the {conn:?} connection, statements LinkStoreMysql does not send: \
             {stray:#?}\nexpected shapes: {expected:#?}",
            kind.op
        );
        if let Some(first) = kind_first(kind, conn) {
            assert!(
                got.contains(&shape(first)),
                "{}: no `{first}` on the {conn:?} connection: {got:#?}",
                kind.op
            );
        }
    }
}

fn kind_first(kind: &Kind, conn: Conn) -> Option<&'static str> {
    match conn {
        Conn::Writes => kind.writes.first().copied(),
        Conn::Reads => kind.reads.first().copied(),
    }
}

/// `fathom run` of LinkBench on the served server, with `more` arguments.
fn linkbench(url: &str, pid: &str, more: &str, results: &Path) -> Output {
    run(
        &format!(
            "--engine innodb --set url={url} --set pid={pid} --workload linkbench --clients 1 \
             --param maxid1=2001 --param seed=7 {more}"
        ),
        results,
    )
}

/// `fathom serve`, stopped by Ctrl-C when dropped: a failed assertion leaves no server behind.
struct Served(std::process::Child);

impl Served {
    /// Stops the server; whether `fathom serve` exited cleanly.
    fn stop(mut self) -> bool {
        self.interrupt().unwrap_or(false)
    }

    fn interrupt(&mut self) -> Option<bool> {
        unsafe { libc::kill(self.0.id() as i32, libc::SIGINT) };
        Some(self.0.wait().ok()?.success())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.interrupt();
        }
    }
}

#[test]
fn each_request_kind_sends_linkstoremysqls_statements_on_its_connection() {
    let dir = server_scratch();
    let (serve, url, pid) = serve("innodb", dir.path());
    let served = Served(serve);
    ok(&linkbench(
        &url,
        &pid,
        "--param steps=load",
        &dir.path().join("load"),
    ));
    let socket = socket(&url);
    sql(
        socket,
        "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1",
    );
    let all = kinds();
    for kind in &all {
        sql(socket, "TRUNCATE mysql.general_log");
        let mix: String = all
            .iter()
            .map(|k| {
                let share = if k.param == kind.param { 100 } else { 0 };
                format!(" --param {}={share}", k.param)
            })
            .collect();
        let results = dir.path().join(kind.param);
        ok(&linkbench(
            &url,
            &pid,
            &format!("--param steps=request --param requests=40{mix}"),
            &results,
        ));
        let request = step(&report_json(&results)["runs"][0], "request").clone();
        assert_eq!(request["by_op"][kind.op]["ops"], 40, "{}", kind.op);
        check_kind(kind, &logged(socket));
    }
    assert!(served.stop(), "fathom serve did not stop cleanly");
    no_server_left(dir.path());
}

#[test]
fn shapes_keep_the_statement_and_drop_its_values() {
    assert_eq!(
        shape("SELECT a FROM t1 WHERE id2 IN (1, 22, 333) AND d = _binary'x\\'y' AND e = X'0a'"),
        "SELECT a FROM t1 WHERE id2 IN (N) AND d = S AND e = H"
    );
    assert_eq!(
        shape("INSERT INTO t (a, b) VALUES (1, 'x', 2)"),
        "INSERT INTO t (a, b) VALUES (N)"
    );
    assert_eq!(
        shape("INSERT INTO t VALUES (1, 2, x'0a', 3), (4, 5, X'0b', 6)"),
        "INSERT INTO t VALUES (N, H, N), (N, H, N)"
    );
}
