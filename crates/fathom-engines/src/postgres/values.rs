//! A PostgreSQL value in the binary format written as psql writes it in text: what a row's
//! values (`SqlConn::run_row`) are, whichever client read them.

use std::fmt::Write;

const BOOL: u32 = 16;
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
const FLOAT4: u32 = 700;
const FLOAT8: u32 = 701;
const DATE: u32 = 1082;
const TIMESTAMP: u32 = 1114;
const TIMESTAMPTZ: u32 = 1184;
const NUMERIC: u32 = 1700;

/// Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
const EPOCH_DAYS: i64 = 10_957;

/// Value `v` of type `ty` (binary format) as text; text types (and any type not known here)
/// as their bytes.
pub fn binary_text(ty: u32, v: &[u8]) -> String {
    let be = |n: usize| -> Option<[u8; 8]> {
        let mut b = [0u8; 8];
        b[8 - n..].copy_from_slice(v.get(..n)?);
        Some(b)
    };
    let int = |n: usize| {
        be(n).map(|b| {
            let raw = u64::from_be_bytes(b);
            // Sign-extend from n bytes.
            let shift = 64 - 8 * n as u32;
            ((raw << shift) as i64) >> shift
        })
    };
    let text = match (ty, v.len()) {
        (BOOL, 1) => Some(if v[0] != 0 { "t" } else { "f" }.to_string()),
        (INT2, 2) | (INT4, 4) | (INT8, 8) => int(v.len()).map(|i| i.to_string()),
        (FLOAT4, 4) => Some(f32::from_be_bytes([v[0], v[1], v[2], v[3]]).to_string()),
        (FLOAT8, 8) => be(8).map(|b| f64::from_bits(u64::from_be_bytes(b)).to_string()),
        (NUMERIC, _) => numeric(v),
        (DATE, 4) => int(4).map(|d| date(d + EPOCH_DAYS)),
        (TIMESTAMP | TIMESTAMPTZ, 8) => int(8).map(timestamp),
        _ => None,
    };
    text.unwrap_or_else(|| String::from_utf8_lossy(v).into_owned())
}

/// NUMERIC's binary form: digit count, weight (of the first base-10000 digit), sign, display
/// scale, then the digits; written with `dscale` decimals as the server prints it.
fn numeric(v: &[u8]) -> Option<String> {
    let u16_at = |i: usize| Some(u16::from_be_bytes([*v.get(i)?, *v.get(i + 1)?]));
    let (n, weight, sign, dscale) = (u16_at(0)?, u16_at(2)? as i16, u16_at(4)?, u16_at(6)?);
    if sign == 0xC000 {
        return Some("NaN".into());
    }
    let digits: Vec<u16> = (0..n as usize)
        .map(|i| u16_at(8 + 2 * i))
        .collect::<Option<_>>()?;
    let digit = |k: i32| match usize::try_from(k) {
        Ok(k) => digits.get(k).copied().unwrap_or(0),
        Err(_) => 0,
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for k in 0..=i32::from(weight) {
            let _ = match k {
                0 => write!(s, "{}", digit(0)),
                _ => write!(s, "{:04}", digit(k)),
            };
        }
    }
    if dscale > 0 {
        let mut frac = String::new();
        let mut k = i32::from(weight) + 1;
        while frac.len() < dscale as usize {
            let _ = write!(frac, "{:04}", digit(k));
            k += 1;
        }
        s.push('.');
        s.push_str(&frac[..dscale as usize]);
    }
    Some(s)
}

/// A number in decimal (`-123.45`) in NUMERIC's binary form; `None` when it is not one.
pub fn numeric_binary(text: &str) -> Option<Vec<u8>> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let dscale = frac.len() as u16;
    // The integer digits padded on the left and the fraction's on the right to groups of four.
    let int_pad = (4 - int.len() % 4) % 4;
    let frac_pad = (4 - frac.len() % 4) % 4;
    let all: String = std::iter::repeat_n('0', int_pad)
        .chain(int.chars())
        .chain(frac.chars())
        .chain(std::iter::repeat_n('0', frac_pad))
        .collect();
    let mut groups: Vec<u16> = (all.as_bytes().chunks(4))
        .map(|c| std::str::from_utf8(c).ok()?.parse().ok())
        .collect::<Option<_>>()?;
    let mut weight = ((int.len() + int_pad) / 4) as i16 - 1;
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    let sign: u16 = if negative && !groups.is_empty() {
        0x4000
    } else {
        0
    };
    if groups.is_empty() {
        weight = 0;
    }
    let mut out = Vec::with_capacity(8 + 2 * groups.len());
    for x in [groups.len() as u16, weight as u16, sign, dscale] {
        out.extend_from_slice(&x.to_be_bytes());
    }
    for g in groups {
        out.extend_from_slice(&g.to_be_bytes());
    }
    Some(out)
}

/// The civil date of `days` since 1970-01-01 (proleptic Gregorian).
fn date(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Microseconds since 2000-01-01 as `YYYY-MM-DD HH:MM:SS[.ffffff]` (UTC).
fn timestamp(us: i64) -> String {
    let (secs, micros) = (us.div_euclid(1_000_000), us.rem_euclid(1_000_000));
    let (days, sec) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let mut t = format!(
        "{} {:02}:{:02}:{:02}",
        date(days + EPOCH_DAYS),
        sec / 3600,
        sec / 60 % 60,
        sec % 60
    );
    if micros > 0 {
        let _ = write!(t, ".{micros:06}");
    }
    t
}

/// Year, month and day of `days` since 1970-01-01 (Hinnant's civil_from_days).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_bytes(weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = Vec::new();
        for x in [digits.len() as u16, weight as u16, sign, dscale] {
            b.extend_from_slice(&x.to_be_bytes());
        }
        for d in digits {
            b.extend_from_slice(&d.to_be_bytes());
        }
        b
    }

    #[test]
    fn numerics_print_as_the_server_prints_them() {
        // 300000.00, -10.00, 0.1500, 12345.6789, 0.0005, 0
        let cases: [(i16, u16, u16, &[u16], &str); 6] = [
            (1, 0, 2, &[30, 0], "300000.00"),
            (0, 0x4000, 2, &[10], "-10.00"),
            (-1, 0, 4, &[1500], "0.1500"),
            (1, 0, 4, &[1, 2345, 6789], "12345.6789"),
            (-1, 0, 4, &[5], "0.0005"),
            (0, 0, 0, &[], "0"),
        ];
        for (weight, sign, dscale, digits, want) in cases {
            let b = numeric_bytes(weight, sign, dscale, digits);
            assert_eq!(binary_text(NUMERIC, &b), want);
        }
    }

    #[test]
    fn numbers_bind_as_numeric_and_read_back() {
        for text in [
            "300000.00",
            "-10.50",
            "0.1500",
            "12345.6789",
            "0.0005",
            "7",
            "-20.000000",
        ] {
            let b = numeric_binary(text).unwrap();
            assert_eq!(binary_text(NUMERIC, &b), text);
        }
        assert_eq!(binary_text(NUMERIC, &numeric_binary("0").unwrap()), "0");
        assert_eq!(numeric_binary("1e5"), None);
        assert_eq!(numeric_binary("-"), None);
    }

    #[test]
    fn integers_dates_and_times() {
        assert_eq!(binary_text(INT2, &(-3i16).to_be_bytes()), "-3");
        assert_eq!(binary_text(INT4, &3001i32.to_be_bytes()), "3001");
        assert_eq!(binary_text(INT8, &(-1i64).to_be_bytes()), "-1");
        assert_eq!(binary_text(FLOAT8, &2.5f64.to_be_bytes()), "2.5");
        assert_eq!(binary_text(DATE, &0i32.to_be_bytes()), "2000-01-01");
        // 2026-11-27 18:05:09.5 is 9,827 days and 65,109.5 s after 2000-01-01.
        let us = (9_827i64 * 86_400 + 65_109) * 1_000_000 + 500_000;
        assert_eq!(
            binary_text(TIMESTAMP, &us.to_be_bytes()),
            "2026-11-27 18:05:09.500000"
        );
        assert_eq!(binary_text(25, b"BC"), "BC");
    }
}
