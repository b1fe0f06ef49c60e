//! TPC-C's consistency conditions 1–4 (clause 3.3.2), checked per warehouse and table copy
//! after the run as sysbench-tpcc's `check` command checks them, each query counting the
//! districts (or warehouses) where the condition does not hold: a count above 0 fails the step.

use super::TpccKind;
use fathom_api::kind::Done;
use fathom_api::sql::{SqlConn, Stmt, Value};
use fathom_api::step::Client;
use std::collections::VecDeque;

/// What each of the four conditions says.
pub const CONDITIONS: [&str; 4] = [
    "W_YTD = sum(D_YTD)",
    "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
    "max(NO_O_ID) - min(NO_O_ID) + 1 = count of NEW-ORDER rows",
    "sum(O_OL_CNT) = count of ORDER-LINE rows",
];

/// A condition (0-based) that fails in warehouse `w` of copy `t`: in the warehouse (condition
/// 1), or in `wrong` of its districts.
pub fn failed(condition: usize, w: i64, t: u32, wrong: i64) -> anyhow::Error {
    let (n, what) = (condition + 1, CONDITIONS[condition]);
    let place = match condition {
        0 => format!("warehouse {w} of table copy {t}"),
        _ => format!("{wrong} of the 10 districts of warehouse {w}, table copy {t}"),
    };
    anyhow::anyhow!("TPC-C consistency condition {n} ({what}) fails in {place}")
}

/// Every (copy, warehouse, condition) to check, in order.
pub fn all(tables: u32, warehouses: i64) -> VecDeque<(u32, i64, usize)> {
    (1..=tables)
        .flat_map(|t| (1..=warehouses).flat_map(move |w| (0..4).map(move |c| (t, w, c))))
        .collect()
}

/// The four conditions' queries on copy `t`, each taking the warehouse as its parameters
/// (how many it takes beside it).
fn queries(t: u32) -> [(String, usize); 4] {
    [
        (
            format!(
                "SELECT count(*) FROM (SELECT d_w_id, sum(d_ytd)-max(w_ytd) diff FROM \
                 district{t}, warehouse{t} WHERE d_w_id=w_id AND w_id=? GROUP BY d_w_id) x \
                 WHERE diff <> 0"
            ),
            1,
        ),
        (
            format!(
                "SELECT count(*) FROM district{t} dis, (SELECT o_d_id, max(o_id) mo FROM \
                 orders{t} WHERE o_w_id=? GROUP BY o_d_id) q, (SELECT no_d_id, max(no_o_id) \
                 mno FROM new_orders{t} WHERE no_w_id=? GROUP BY no_d_id) n WHERE d_w_id=? AND \
                 q.o_d_id=dis.d_id AND n.no_d_id=dis.d_id AND (d_next_o_id-1 <> mo OR \
                 d_next_o_id-1 <> mno)"
            ),
            3,
        ),
        (
            format!(
                "SELECT count(*) FROM (SELECT no_d_id, max(no_o_id)-min(no_o_id)+1 span, \
                 count(*) n FROM new_orders{t} WHERE no_w_id=? GROUP BY no_d_id) x WHERE \
                 span <> n"
            ),
            1,
        ),
        (
            format!(
                "SELECT count(*) FROM (SELECT o_d_id, SUM(o_ol_cnt) sm1, MAX(cn) as cn FROM \
                 orders{t},(SELECT ol_d_id, COUNT(*) cn FROM order_line{t} WHERE ol_w_id=? \
                 GROUP BY ol_d_id) ol WHERE o_w_id=? AND ol_d_id=o_d_id GROUP BY o_d_id) t1 \
                 WHERE sm1<>cn"
            ),
            2,
        ),
    ]
}

/// The check step's one client: every condition of every warehouse of every copy.
pub struct Check<'e> {
    conn: Box<dyn SqlConn + 'e>,
    /// Each copy's four queries, prepared once, with their number of parameters.
    queries: Vec<[(Stmt, usize); 4]>,
    /// (copy, warehouse, condition 0..4) still to check.
    todo: VecDeque<(u32, i64, usize)>,
}

impl<'e> Check<'e> {
    pub fn new(
        mut conn: Box<dyn SqlConn + 'e>,
        tables: u32,
        warehouses: i64,
    ) -> anyhow::Result<Check<'e>> {
        let mut queries = Vec::new();
        for t in 1..=tables {
            let mut prepared = Vec::new();
            for (sql, params) in self::queries(t) {
                prepared.push((conn.prepare(&sql)?, params));
            }
            queries.push(prepared.try_into().expect("four conditions"));
        }
        let todo = all(tables, warehouses);
        Ok(Check {
            conn,
            queries,
            todo,
        })
    }
}

impl Client for Check<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let Some((t, w, c)) = self.todo.pop_front() else {
            return Ok(None);
        };
        let (stmt, params) = self.queries[t as usize - 1][c];
        let ws = vec![Value::Int(w); params];
        let wrong = self.conn.scalar(stmt, &ws)?.unwrap_or(0);
        if wrong > 0 {
            return Err(failed(c, w, t, wrong));
        }
        Ok(Some(Done::of(TpccKind::Check)))
    }
}

/// Counts, for a (copy, warehouse, condition), where the condition fails on one session.
pub type Wrong<S> = fn(&mut S, u32, i64, usize) -> anyhow::Result<i64>;

/// The check step's one client on a family checked by reading its rows (kv, documents):
/// every condition of every warehouse of every copy, each counted by `wrong`.
pub struct ReadCheck<S> {
    session: S,
    wrong: Wrong<S>,
    todo: VecDeque<(u32, i64, usize)>,
}

impl<S> ReadCheck<S> {
    pub fn new(session: S, wrong: Wrong<S>, tables: u32, warehouses: i64) -> ReadCheck<S> {
        ReadCheck {
            session,
            wrong,
            todo: all(tables, warehouses),
        }
    }
}

impl<S: Send> Client for ReadCheck<S> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let Some((t, w, c)) = self.todo.pop_front() else {
            return Ok(None);
        };
        let wrong = (self.wrong)(&mut self.session, t, w, c)?;
        if wrong > 0 {
            return Err(failed(c, w, t, wrong));
        }
        Ok(Some(Done::of(TpccKind::Check)))
    }
}
