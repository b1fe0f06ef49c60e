//! A server's log of statements (`statement_log`) as the work of the slowest operations: each
//! workload connection asks its server session's id once and says it on its thread before every
//! statement (`fathom_api::work::use_session`), so a kept operation knows its session; the
//! server kinds read their logs into `Statement`s, their texts reduced to shapes.

use fathom_api::sql::{Keep, Outcome, Row, SqlConn, Stmt, Value};

/// A workload's connection that says its server session on its thread before each statement.
pub struct Session<'a> {
    conn: Box<dyn SqlConn + 'a>,
    id: u64,
}

impl<'a> Session<'a> {
    /// `conn`, which asks its session's id with `ask` (`SELECT pg_backend_pid()`).
    pub fn new(mut conn: Box<dyn SqlConn + 'a>, ask: &str) -> anyhow::Result<Session<'a>> {
        let stmt = conn.prepare(ask)?;
        let id = conn.scalar(stmt, &[])?.unwrap_or(0);
        let id = u64::try_from(id).ok().filter(|&id| id > 0);
        let id = id.ok_or_else(|| anyhow::anyhow!("`{ask}` gave no session id"))?;
        Ok(Session { conn, id })
    }
}

impl SqlConn for Session<'_> {
    fn exec(&mut self, sql: &str) -> anyhow::Result<()> {
        fathom_api::work::use_session(self.id);
        self.conn.exec(sql)
    }
    fn prepare(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        self.conn.prepare(sql)
    }
    fn prepare_text(&mut self, sql: &str) -> anyhow::Result<Stmt> {
        self.conn.prepare_text(sql)
    }
    fn run_with(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        keep: Keep,
    ) -> anyhow::Result<Outcome> {
        fathom_api::work::use_session(self.id);
        self.conn.run_with(stmt, params, keep)
    }
    fn run_row(
        &mut self,
        stmt: Stmt,
        params: &[Value<'_>],
        n: u64,
        row: &mut Row,
    ) -> anyhow::Result<Outcome> {
        fathom_api::work::use_session(self.id);
        self.conn.run_row(stmt, params, n, row)
    }
}

/// A statement's shape: its text with every number and quoted string as `?`, a list of them
/// as one `?`, spaces collapsed, at most 200 characters; statements of one shape do alike
/// work, so they are what an operation's are set against.
pub fn shape(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len().min(200));
    let mut chars = sql.chars().peekable();
    let mut last_word = false;
    while let Some(c) = chars.next() {
        if out.len() >= 200 {
            break;
        }
        let literal = match c {
            '\'' | '"' => {
                skip_quoted(&mut chars, c);
                true
            }
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                skip_number(&mut chars);
                true
            }
            d if d.is_ascii_digit() && !last_word => {
                skip_number(&mut chars);
                true
            }
            _ => false,
        };
        if literal {
            push_placeholder(&mut out);
            last_word = false;
        } else if c.is_whitespace() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            last_word = false;
        } else {
            out.push(c);
            last_word = c.is_alphanumeric() || c == '_';
        }
    }
    out.trim_end().to_string()
}

/// Writes `?`, unless it extends a list of them (`?, ?` stays `?`).
fn push_placeholder(out: &mut String) {
    let t = out.trim_end();
    if t.ends_with('?') || t.ends_with("?,") {
        out.truncate(t.trim_end_matches(',').len());
        return;
    }
    out.push('?');
}

fn skip_quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, quote: char) {
    while let Some(c) = chars.next() {
        if c == '\\' {
            chars.next();
        } else if c == quote {
            if chars.peek() == Some(&quote) {
                chars.next();
            } else {
                return;
            }
        }
    }
}

fn skip_number(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars
        .peek()
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.')
    {
        chars.next();
    }
}

#[cfg(test)]
mod tests {
    use super::shape;

    #[test]
    fn literals_and_lists_become_one_placeholder() {
        assert_eq!(
            shape("SELECT c FROM sbtest1 WHERE id=4711"),
            "SELECT c FROM sbtest1 WHERE id=?"
        );
        assert_eq!(
            shape("UPDATE sbtest1 SET c='it''s 12' WHERE id = 7"),
            "UPDATE sbtest1 SET c=? WHERE id = ?"
        );
        assert_eq!(
            shape("select * from t where id in (1, 2,3)  and x > $1"),
            "select * from t where id in (?) and x > ?"
        );
        // Digits inside names stay.
        assert_eq!(shape("SELECT k FROM sbtest12"), "SELECT k FROM sbtest12");
        assert_eq!(
            shape("INSERT INTO t VALUES (1,'a'),(2,'b')"),
            "INSERT INTO t VALUES (?),(?)"
        );
    }
}
