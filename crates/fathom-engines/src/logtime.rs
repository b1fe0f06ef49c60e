//! Times written in engines' logs (`2026/11/30-18:28:04.602575`, `2026-11-30 18:28:04.602 UTC`)
//! as Unix microseconds, for the events read from them (`Target::events`).

/// The civil time `y-m-d h:mi:s` plus `us` microseconds, taken as UTC, in Unix microseconds.
pub fn utc_us(y: i64, m: i64, d: i64, (h, mi, s): (i64, i64, i64), us: i64) -> Option<u64> {
    let secs = days_from_civil(y, m, d) * 86_400 + h * 3600 + mi * 60 + s;
    u64::try_from(secs * 1_000_000 + us).ok()
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A number at `range` of `text`.
pub fn num(text: &str, range: std::ops::Range<usize>) -> Option<i64> {
    text.get(range)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_civil_calendar_matches_unix_time() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(
            utc_us(2026, 11, 30, (18, 28, 4), 602_575),
            Some(1_796_063_284_602_575)
        );
    }
}
