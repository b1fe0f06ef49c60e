//! A CI gate on a comparison's verdicts: `--fail-on slower[,same-not-reached]` (an
//! experiment's `fail_on`) names the verdicts that fail it; each comparison that does is named,
//! and the command exits with `EXIT_STATUS`; `--junit FILE` writes every comparison as a
//! JUnit test case, failed where the gate fails it, for CI systems that read JUnit XML.

use super::{Row, Verdict};
use std::fmt::Write as _;

/// The exit status of a command whose gate failed (1 is an error, 2 bad arguments, 130 an
/// interruption).
pub const EXIT_STATUS: i32 = 3;

/// A verdict that fails the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// A step slower than its base beyond the threshold, at the verdicts' 2.5% error.
    Slower,
    /// A step not shown to be the same as (or faster than) its base: slower, undecided, or
    /// without the repeats a verdict needs.
    SameNotReached,
}

impl FailOn {
    pub fn name(self) -> &'static str {
        match self {
            FailOn::Slower => "slower",
            FailOn::SameNotReached => "same-not-reached",
        }
    }

    /// `slower` or `same-not-reached`.
    pub fn parse(s: &str) -> Result<FailOn, String> {
        match s {
            "slower" => Ok(FailOn::Slower),
            "same-not-reached" => Ok(FailOn::SameNotReached),
            _ => Err(format!("expected slower or same-not-reached, got {s:?}")),
        }
    }

    fn fails(self, r: &Row) -> bool {
        match self {
            FailOn::Slower => r.verdict == Verdict::Slower,
            FailOn::SameNotReached => !matches!(r.verdict, Verdict::Same | Verdict::Faster),
        }
    }
}

/// The first of `fail_on` that fails comparison `r`, if any.
pub fn failed_by(r: &Row, fail_on: &[FailOn]) -> Option<FailOn> {
    fail_on.iter().copied().find(|f| f.fails(r))
}

/// A comparison as one line: `step (N clients): NEW vs BASE: verdict, ratio [interval]`.
pub fn describe(r: &Row) -> String {
    let ci = r
        .ci95
        .map(|(lo, hi)| format!(", 95% CI {lo:.3}..{hi:.3}"))
        .unwrap_or_default();
    format!(
        "{} ({}): {} vs {}: {}, new/base {:.3}{ci}",
        r.step,
        fathom_api::units::clients(r.clients),
        r.new,
        r.base,
        r.verdict.text(),
        r.ratio
    )
}

/// The comparisons `fail_on` fails, each as a line naming it and why.
pub fn failures(rows: &[Row], fail_on: &[FailOn]) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            Some(format!(
                "{} [fail-on {}]",
                describe(r),
                failed_by(r, fail_on)?.name()
            ))
        })
        .collect()
}

/// The error a command returns when its gate failed: what failed it (`noun`: "comparison",
/// "recent change"), a line each; `main` exits with `EXIT_STATUS`.
#[derive(Debug)]
pub struct GateFailed {
    pub noun: &'static str,
    pub lines: Vec<String>,
}

impl std::fmt::Display for GateFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}{} failed the gate:\n  {}",
            self.lines.len(),
            self.noun,
            if self.lines.len() == 1 { "" } else { "s" },
            self.lines.join("\n  ")
        )
    }
}

impl std::error::Error for GateFailed {}

/// `Err(GateFailed)` when `fail_on` fails any of `rows`.
pub fn check(rows: &[Row], fail_on: &[FailOn]) -> Result<(), GateFailed> {
    let failed = failures(rows, fail_on);
    if failed.is_empty() {
        Ok(())
    } else {
        Err(GateFailed {
            noun: "comparison",
            lines: failed,
        })
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The comparisons as JUnit XML: a test suite per NEW against BASE, a test case per step and
/// client count, failed (`<failure type="slower">`) where `fail_on` fails it.
pub fn junit(rows: &[Row], fail_on: &[FailOn], name: &str) -> String {
    let mut suites: Vec<(String, Vec<&Row>)> = Vec::new();
    for r in rows {
        let suite = format!("{} vs {}", r.new, r.base);
        match suites.iter_mut().find(|s| s.0 == suite) {
            Some(s) => s.1.push(r),
            None => suites.push((suite, vec![r])),
        }
    }
    let failures = |rs: &[&Row]| {
        rs.iter()
            .filter(|r| failed_by(r, fail_on).is_some())
            .count()
    };
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\">",
        xml(name),
        rows.len(),
        failures(&rows.iter().collect::<Vec<_>>())
    );
    for (suite, rs) in &suites {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">",
            xml(suite),
            rs.len(),
            failures(rs)
        );
        for r in rs {
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{} c{}\">",
                xml(&r.workload),
                xml(&r.step),
                r.clients
            );
            match failed_by(r, fail_on) {
                Some(f) => {
                    let _ = write!(
                        out,
                        "<failure type=\"{}\" message=\"{}\"/>",
                        f.name(),
                        xml(&describe(r))
                    );
                }
                None => {
                    let _ = write!(out, "<system-out>{}</system-out>", xml(&describe(r)));
                }
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: &str, verdict: Verdict, ratio: f64) -> Row {
        Row {
            workload: "dbbench".into(),
            step: step.into(),
            clients: 2,
            base: "a".into(),
            new: "b".into(),
            base_ops_per_sec: vec![100.0; 3],
            new_ops_per_sec: vec![100.0 * ratio; 3],
            ratio,
            ci95: Some((ratio - 0.01, ratio + 0.01)),
            p: Some(0.001),
            looks: 1,
            verdict,
            ..Row::default()
        }
    }

    #[test]
    fn slower_fails_only_slower_and_same_not_reached_all_but_same_or_faster() {
        let rows = vec![
            row("fillseq", Verdict::Faster, 1.2),
            row("readrandom", Verdict::Slower, 0.9),
            row("overwrite", Verdict::Undecided, 0.98),
            row("seekrandom", Verdict::Same, 1.0),
        ];
        let f = failures(&rows, &[FailOn::Slower]);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].starts_with("readrandom (2 clients): b vs a: slower, new/base 0.900"),
            "{f:?}"
        );
        let f = failures(&rows, &[FailOn::SameNotReached]);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f[1].contains("overwrite") && f[1].ends_with("[fail-on same-not-reached]"));
        assert!(check(&rows, &[]).is_ok());
        let e = check(&rows, &[FailOn::Slower]).unwrap_err().to_string();
        assert!(e.starts_with("1 comparison failed the gate:"), "{e}");
        assert_eq!(
            FailOn::parse("same-not-reached"),
            Ok(FailOn::SameNotReached)
        );
        assert!(FailOn::parse("faster").is_err());
    }

    #[test]
    fn junit_has_a_case_per_comparison_and_a_failure_per_failed_one() {
        let rows = vec![
            row("readrandom", Verdict::Slower, 0.9),
            row("seek<random>", Verdict::Same, 1.0),
        ];
        let x = junit(&rows, &[FailOn::Slower], "fathom compare");
        assert!(
            x.contains("<testsuites name=\"fathom compare\" tests=\"2\" failures=\"1\">"),
            "{x}"
        );
        assert!(
            x.contains("<testsuite name=\"b vs a\" tests=\"2\" failures=\"1\">"),
            "{x}"
        );
        assert!(
            x.contains("<failure type=\"slower\" message=\"readrandom (2 clients)"),
            "{x}"
        );
        assert!(x.contains("name=\"seek&lt;random&gt; c2\""), "{x}");
        assert_eq!(x.matches("<testcase ").count(), 2);
    }
}
