//! Passwords users put in server URLs (`mysql://user:PASSWORD@host/db`, libpq's
//! `password=PASSWORD`) never reach results or logs: everything fathom writes about a setup
//! passes through `redact`.

use std::borrow::Cow;

/// What a password is replaced with.
pub const HIDDEN: &str = "***";

/// `text` with the password of every URL's user info and every `password=` value replaced by
/// `***`; the rest unchanged.
pub fn redact(text: &str) -> Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    if !lower.contains("://") && !lower.contains("password=") {
        return Cow::Borrowed(text);
    }
    // Byte ranges of secrets, in order, then the text rebuilt around them.
    let mut secrets = url_passwords(text);
    secrets.extend(key_passwords(&lower));
    secrets.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in secrets {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(HIDDEN);
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// Ends a URL's authority or a value.
fn ends_value(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | ';' | '&' | ')' | '>')
}

/// The password of each `scheme://user:password@host`.
fn url_passwords(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("://") {
        let start = from + i + 3;
        let rest = &text[start..];
        let len = rest
            .find(|c: char| ends_value(c) || matches!(c, '/' | '?' | '#'))
            .unwrap_or(rest.len());
        let authority = &rest[..len];
        if let Some(at) = authority.rfind('@') {
            if let Some(colon) = authority[..at].find(':') {
                if colon + 1 < at {
                    found.push((start + colon + 1, start + at));
                }
            }
        }
        from = start;
    }
    found
}

/// The value of each `password=` (libpq's key=value strings, URL query parameters).
fn key_passwords(lower: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find("password=") {
        let start = from + i + "password=".len();
        let len = lower[start..]
            .find(ends_value)
            .unwrap_or(lower.len() - start);
        if len > 0 {
            found.push((start, start + len));
        }
        from = start;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_go_and_the_rest_stays() {
        let cases = [
            (
                "mysql://root:s3cret@localhost:3306/db",
                "mysql://root:***@localhost:3306/db",
            ),
            (
                "postgresql://u:p%40ss@/db?host=/tmp/x",
                "postgresql://u:***@/db?host=/tmp/x",
            ),
            ("postgres://u@host/db", "postgres://u@host/db"),
            (
                "host=/tmp port=5432 user=u password=hunter2 dbname=d",
                "host=/tmp port=5432 user=u password=*** dbname=d",
            ),
            ("x://a:b@c and y://d:e@f", "x://a:***@c and y://d:***@f"),
            (
                "mysql://u@h/db?socket=/s&password=pw",
                "mysql://u@h/db?socket=/s&password=***",
            ),
            (
                "\"url\": \"mysql://u:pw@h/d\"",
                "\"url\": \"mysql://u:***@h/d\"",
            ),
            ("PASSWORD=Loud", "PASSWORD=***"),
            ("no secrets here", "no secrets here"),
            ("trailing ://", "trailing ://"),
        ];
        for (given, want) in cases {
            assert_eq!(redact(given), want, "{given}");
        }
    }
}
