//! TPC-C's consistency conditions 1–4 on the document family, by `find`s of each district's
//! documents, counting the districts where a condition fails as the sql check's queries do (a
//! district with no new orders left is not compared on conditions 2 and 3, as their joins
//! leave it out). The year-to-date sums are doubles here, as py-tpcc stores them: they compare
//! within half a cent.

use super::{coll, int, num, DISTRICT, NEW_ORDER, ORDERS, WAREHOUSE};
use crate::tpcc::check::ReadCheck;
use crate::tpcc::gen::DISTRICTS;
use fathom_api::doc::bson::{doc, Document, RawDocumentBuf};
use fathom_api::doc::{DocSession, Find};

/// The documents of copy `t`'s collection `name` that `filter` matches, projected.
fn docs(
    s: &mut dyn DocSession,
    (name, t): (&str, u32),
    filter: &Document,
    projection: &Document,
) -> anyhow::Result<Vec<RawDocumentBuf>> {
    let mut got = Vec::new();
    s.find(
        &coll(name, t),
        Find::new(filter).project(projection),
        &mut |d| {
            got.push(d.to_raw_document_buf());
            true
        },
    )?;
    Ok(got)
}

/// The districts of warehouse `w` in copy `t` where condition `c` (0-based) fails.
fn wrong(s: &mut dyn DocSession, t: u32, w: i64, c: usize) -> anyhow::Result<i64> {
    let districts = docs(
        s,
        (DISTRICT, t),
        &doc! {"D_W_ID": int(w)},
        &doc! {"D_ID": 1, "D_YTD": 1, "D_NEXT_O_ID": 1},
    )?;
    if c == 0 {
        let warehouse = docs(
            s,
            (WAREHOUSE, t),
            &doc! {"W_ID": int(w)},
            &doc! {"W_YTD": 1},
        )?;
        let ytd = warehouse.first().map_or(0.0, |d| num(d, "W_YTD"));
        let sum: f64 = districts.iter().map(|d| num(d, "D_YTD")).sum();
        return Ok(((sum - ytd).abs() >= 0.005) as i64);
    }
    let mut wrong = 0;
    for d in 1..=DISTRICTS {
        let filter = doc! {"NO_W_ID": int(w), "NO_D_ID": int(d)};
        let new: Vec<i64> = docs(s, (NEW_ORDER, t), &filter, &doc! {"NO_O_ID": 1})?
            .iter()
            .map(|d| num(d, "NO_O_ID") as i64)
            .collect();
        let (n, first, last) = (
            new.len() as i64,
            new.iter().copied().min().unwrap_or(0),
            new.iter().copied().max().unwrap_or(0),
        );
        let differs = match c {
            1 | 3 => {
                let filter = doc! {"O_W_ID": int(w), "O_D_ID": int(d)};
                let orders = docs(
                    s,
                    (ORDERS, t),
                    &filter,
                    &doc! {"O_ID": 1, "O_OL_CNT": 1, "ORDER_LINE.OL_I_ID": 1},
                )?;
                let max_o = (orders.iter())
                    .map(|o| num(o, "O_ID") as i64)
                    .max()
                    .unwrap_or(0);
                if c == 1 {
                    let next = (districts.iter())
                        .find(|x| num(x, "D_ID") as i64 == d)
                        .map_or(0, |x| num(x, "D_NEXT_O_ID") as i64);
                    n > 0 && !orders.is_empty() && (next - 1 != max_o || next - 1 != last)
                } else {
                    let mut declared = 0;
                    let mut held = 0;
                    for o in &orders {
                        declared += num(o, "O_OL_CNT") as i64;
                        held += o
                            .get_array("ORDER_LINE")
                            .map_or(0, |a| a.into_iter().count());
                    }
                    held > 0 && declared != held as i64
                }
            }
            _ => n > 0 && last - first + 1 != n,
        };
        wrong += differs as i64;
    }
    Ok(wrong)
}

/// The check step's one client.
pub fn client<'e>(
    session: Box<dyn DocSession + 'e>,
    tables: u32,
    warehouses: i64,
) -> ReadCheck<Box<dyn DocSession + 'e>> {
    ReadCheck::new(
        session,
        |s, t, w, c| wrong(s.as_mut(), t, w, c),
        tables,
        warehouses,
    )
}
