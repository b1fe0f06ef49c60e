//! Parsing of the sizes, durations and times users type (`400m`, `2GiB`, `90s`, `1h30m`,
//! `2026-11-26T07:00:00Z`), with errors that say what was expected.

use std::time::Duration;

/// Bytes in a GiB, the unit of every `_gb` figure.
pub const GIB: f64 = (1u64 << 30) as f64;

/// Parses a byte size: a number with an optional binary suffix (`k`, `m`, `g`, `t`, optionally
/// followed by `b` or `ib`, any case), as RocksDB's options strings and db_bench use them.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        format!(
            "`{text}` is not a size: expected a number with an optional k/m/g/t suffix, e.g. 512m"
        )
    })?;
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "`{text}`: unknown size suffix `{other}` (expected k, m, g or t)"
            ))
        }
    };
    let bytes = (value * mult as f64).round();
    if bytes >= u64::MAX as f64 {
        return Err(format!("`{text}` is too large a size"));
    }
    Ok(bytes as u64)
}

/// Parses a duration: `250ms`, `30s`, `5m`, `1h`, combinations such as `1m30s`, or a bare
/// number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let bad = || format!("`{text}` is not a duration: expected e.g. 30s, 500ms, 5m or 1h");
    if t.is_empty() {
        return Err(bad());
    }
    if t.starts_with('-') {
        return Err(format!(
            "`{text}`: a duration cannot be negative; expected e.g. 30s, 500ms, 5m or 1h"
        ));
    }
    // `Duration::from_secs_f64` panics on a negative, NaN or too large value.
    let seconds = |secs: f64| Duration::try_from_secs_f64(secs).map_err(|_| bad());
    if let Ok(secs) = t.parse::<f64>() {
        return seconds(secs);
    }
    let mut total = 0.0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if n == 0 {
            return Err(bad());
        }
        let value: f64 = rest[..n].parse().map_err(|_| bad())?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let scale = match &rest[..u] {
            "us" | "µs" => 1e-6,
            "ms" => 0.001,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += value * scale;
        rest = &rest[u..];
    }
    seconds(total)
}

/// A relative threshold: `3%` or `0.03`.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let v = match s.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => s.trim().parse::<f64>(),
    }
    .map_err(|_| {
        format!("`{s}` is not a threshold (expected a percentage like 3% or a fraction like 0.03)")
    })?;
    if !(0.0..1.0).contains(&v) {
        return Err(format!("`{s}`: expected a threshold from 0% to 100%"));
    }
    Ok(v)
}

/// Parses `KEY=VALUE` strings (as `--set` and `--param` take them) into a map; `what` names
/// the option in the error.
pub fn parse_key_values(
    pairs: &[String],
    what: &str,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    pairs
        .iter()
        .map(|p| {
            p.split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| format!("{what} `{p}` is not key=value"))
        })
        .collect()
}

/// Formats a duration the way `parse_duration` reads it.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        format!("{ms}ms")
    } else {
        format!("{}s", ms / 1000)
    }
}

/// A moment a user names (`--start-at`, `--since`): an RFC 3339 UTC time
/// (`2026-11-26T07:00:00Z`) or Unix seconds.
pub fn parse_time(text: &str) -> Result<std::time::SystemTime, String> {
    let secs = match text.trim().parse::<u64>() {
        Ok(s) => s,
        Err(_) => parse_utc_timestamp(text.trim()).ok_or_else(|| {
            format!(
                "`{text}`: expected an RFC 3339 UTC time (2026-11-26T07:00:00Z) or Unix seconds"
            )
        })?,
    };
    Ok(std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// A count of clients as words: "1 client", "4 clients".
pub fn clients(n: impl std::fmt::Display) -> String {
    let n = n.to_string();
    let noun = if n == "1" { "client" } else { "clients" };
    format!("{n} {noun}")
}

/// Formats a Unix time as an RFC 3339 UTC timestamp (second precision).
pub fn utc_timestamp(unix_secs: u64) -> String {
    let days = unix_secs / 86_400;
    let rem = unix_secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm), proleptic Gregorian calendar.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Now, as `utc_timestamp` formats it.
/// Reads `utc_timestamp`'s form back (`YYYY-MM-DDTHH:MM:SSZ`) as Unix seconds.
pub fn parse_utc_timestamp(text: &str) -> Option<u64> {
    let t = text.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let num = |s: &str| s.parse::<i64>().ok();
    let d: Vec<i64> = date.split('-').map(num).collect::<Option<_>>()?;
    let h: Vec<i64> = time.split(':').map(num).collect::<Option<_>>()?;
    let (&[year, month, day], &[hh, mm, ss]) = (d.as_slice(), h.as_slice()) else {
        return None;
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days-from-civil (Howard Hinnant's algorithm), the inverse of `utc_timestamp`'s.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()
}

pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc_timestamp(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("400m"), Ok(400 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("ten").unwrap_err().contains("not a size"));
        assert!(parse_size("3x")
            .unwrap_err()
            .contains("unknown size suffix `x`"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("s").is_err());
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(20)), "20s");
    }

    #[test]
    fn key_values() {
        let m = parse_key_values(&["a=1".into(), " b = x=y ".into()], "--set").unwrap();
        assert_eq!((m["a"].as_str(), m["b"].as_str()), ("1", "x=y"));
        assert_eq!(
            parse_key_values(&["a".into()], "--set").unwrap_err(),
            "--set `a` is not key=value"
        );
    }
}
