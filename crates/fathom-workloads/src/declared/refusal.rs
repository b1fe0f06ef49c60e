//! What is wrong with a workload file, apart from the file's reading, so the modules that check
//! its parts (`data`, `file`) refuse the same way without importing each other.

use toml::Spanned;

/// What is wrong with a file that parsed: where, which key, and what was expected.
pub(super) struct Refusal {
    pub at: Option<usize>,
    /// Lines below `at` (inside a script).
    pub below: usize,
    pub key: String,
    pub what: String,
}

pub(super) fn refuse<T>(
    at: &Spanned<T>,
    key: impl Into<String>,
    what: impl Into<String>,
) -> Refusal {
    let span = at.span();
    Refusal {
        at: (span.end > 0).then_some(span.start),
        below: 0,
        key: key.into(),
        what: what.into(),
    }
}

impl From<super::sqlfile::Refused> for Refusal {
    fn from((at, key, what): super::sqlfile::Refused) -> Refusal {
        Refusal {
            at: at.as_ref().map(|a| a.offset),
            below: at.map_or(0, |a| a.lines_below),
            key,
            what,
        }
    }
}
