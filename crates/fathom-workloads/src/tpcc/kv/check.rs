//! TPC-C's consistency conditions 1–4 on the kv family, by scans of each warehouse's key
//! ranges, counting the districts where a condition fails as the sql check's queries do (a
//! district with no new orders left is not compared on conditions 2 and 3, as their joins
//! leave it out).

use super::{col, key, key_col, pk, Stored, Table};
use crate::tpcc::check::ReadCheck;
use crate::tpcc::gen::DISTRICTS;
use fathom_api::kv::{Direction, KvSession, Seek};

/// Visits every entry under `prefix`.
fn each(
    s: &mut dyn KvSession,
    prefix: &[u8],
    mut visit: impl FnMut(&[u8], &[u8]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut failure = Ok(());
    s.scan(
        Seek::new(prefix, Direction::Forward, usize::MAX),
        &mut |k, v| {
            if !k.starts_with(prefix) {
                return false;
            }
            failure = visit(k, v);
            failure.is_ok()
        },
    )?;
    failure
}

/// The districts of warehouse `w` in copy `t` where condition `c` (0-based) fails.
fn wrong(s: &mut dyn KvSession, t: u32, w: i64, c: usize) -> anyhow::Result<i64> {
    let mut value = Vec::new();
    let mut wrong = 0;
    if c == 0 {
        s.read(&pk(t, Table::Warehouse, &[w]), &mut value)?;
        let ytd = Stored::decode(Table::Warehouse, &value)?.int(col::YTD);
        let mut sum = 0;
        each(s, &key(t, Table::District, 0, &[w]), |_, v| {
            sum += Stored::decode(Table::District, v)?.int(col::YTD);
            Ok(())
        })?;
        return Ok((sum != ytd) as i64);
    }
    for d in 1..=DISTRICTS {
        // New orders: count, first and last.
        let (mut n, mut first, mut last) = (0, 0, 0);
        each(s, &key(t, Table::NewOrders, 0, &[w, d]), |k, _| {
            let o = key_col(k, 2);
            (n, last) = (n + 1, o);
            first = if n == 1 { o } else { first };
            Ok(())
        })?;
        let (mut orders, mut max_o, mut lines) = (0, 0, 0);
        let mut counted = 0;
        if c != 2 {
            each(s, &key(t, Table::Orders, 0, &[w, d]), |k, v| {
                orders += 1;
                max_o = key_col(k, 2);
                lines += Stored::decode(Table::Orders, v)?.int(col::O_OL_CNT);
                Ok(())
            })?;
        }
        let differs = match c {
            1 => {
                s.read(&pk(t, Table::District, &[w, d]), &mut value)?;
                let next = Stored::decode(Table::District, &value)?.int(col::D_NEXT_O_ID);
                n > 0 && orders > 0 && (next - 1 != max_o || next - 1 != last)
            }
            2 => n > 0 && last - first + 1 != n,
            _ => {
                each(s, &key(t, Table::OrderLine, 0, &[w, d]), |_, _| {
                    counted += 1;
                    Ok(())
                })?;
                counted > 0 && orders > 0 && lines != counted
            }
        };
        wrong += differs as i64;
    }
    Ok(wrong)
}

/// The check step's one client.
pub fn client<'e>(
    session: Box<dyn KvSession + 'e>,
    tables: u32,
    warehouses: i64,
) -> ReadCheck<Box<dyn KvSession + 'e>> {
    ReadCheck::new(
        session,
        |s, t, w, c| wrong(s.as_mut(), t, w, c),
        tables,
        warehouses,
    )
}
