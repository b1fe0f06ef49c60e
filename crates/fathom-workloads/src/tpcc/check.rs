//! TPC-C's consistency conditions 1–4 (clause 3.3.2), checked per warehouse and table copy
//! after the run as sysbench-tpcc's `check` command checks them, each query counting the
//! districts (or warehouses) where the condition does not hold: a count above 0 fails the step.

use super::TpccKind;
use fathom_core::driver::{Client, Done};
use fathom_core::sql::{SqlConn, Stmt, Value};
use std::collections::VecDeque;

/// The four conditions' queries on copy `t`, each taking the warehouse as its parameters.
fn queries(t: u32) -> [(&'static str, String, usize); 4] {
    [
        (
            "W_YTD = sum(D_YTD)",
            format!(
                "SELECT count(*) FROM (SELECT d_w_id, sum(d_ytd)-max(w_ytd) diff FROM \
                 district{t}, warehouse{t} WHERE d_w_id=w_id AND w_id=? GROUP BY d_w_id) x \
                 WHERE diff <> 0"
            ),
            1,
        ),
        (
            "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
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
            "max(NO_O_ID) - min(NO_O_ID) + 1 = count of NEW-ORDER rows",
            format!(
                "SELECT count(*) FROM (SELECT no_d_id, max(no_o_id)-min(no_o_id)+1 span, \
                 count(*) n FROM new_orders{t} WHERE no_w_id=? GROUP BY no_d_id) x WHERE \
                 span <> n"
            ),
            1,
        ),
        (
            "sum(O_OL_CNT) = count of ORDER-LINE rows",
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
    /// Each copy's four queries, prepared once, with what each checks and its parameters.
    queries: Vec<[(&'static str, Stmt, usize); 4]>,
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
            for (what, sql, params) in self::queries(t) {
                prepared.push((what, conn.prepare(&sql)?, params));
            }
            queries.push(prepared.try_into().expect("four conditions"));
        }
        let todo = (1..=tables)
            .flat_map(|t| (1..=warehouses).flat_map(move |w| (0..4).map(move |c| (t, w, c))))
            .collect();
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
        let (what, stmt, params) = self.queries[t as usize - 1][c];
        let ws = vec![Value::Int(w); params];
        let wrong = self.conn.scalar(stmt, &ws)?.unwrap_or(0);
        if wrong > 0 {
            anyhow::bail!(
                "TPC-C consistency condition {} ({what}) fails in warehouse {w} of table copy \
                 {t}: {wrong} districts differ",
                c + 1
            );
        }
        Ok(Some(Done::of(TpccKind::Check)))
    }
}
