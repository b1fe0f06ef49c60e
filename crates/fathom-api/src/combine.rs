//! Several summaries of one step combined into one through their JSON form, so every figure
//! is covered without a per-field list to keep up: medians over a series' repeats (reports)
//! and merges across client hosts (`merge`) are the same walk with a rule per figure.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// How one figure of the parts becomes the combined figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The median of the parts that have it (text: the first; flags: set if any part set it).
    Median,
    /// Added up (operations, rates); unknown if any part lacks it.
    Sum,
    Max,
    /// The smallest (for text, the first in order: an RFC 3339 start time).
    Min,
    /// Weighted by each part's operations (a per-operation cost); unknown if any part lacks it.
    ByOps,
    /// The first part's.
    First,
}

/// The merge rule each figure of a type declares on its field (`#[derive(Merge)]`, from
/// `fathom-macros`), by the figure's path below the type (`per_op.reads` is
/// `["per_op", "reads"]`); `None` for a path the type does not have.
pub trait MergeRules {
    fn rule(path: &[&str]) -> Option<Rule>;
}

/// An optional figure merges as the figure does.
impl<T: MergeRules> MergeRules for Option<T> {
    fn rule(path: &[&str]) -> Option<Rule> {
        T::rule(path)
    }
}

/// A map's values (by kind of operation) each merge as the value type says.
impl<T: MergeRules> MergeRules for std::collections::BTreeMap<String, T> {
    fn rule(path: &[&str]) -> Option<Rule> {
        match path.split_first() {
            Some((_, rest)) => T::rule(rest),
            None => Some(Rule::First),
        }
    }
}

/// The rule `T` declares for the figure at `path` (dotted), `First` for one it does not have.
pub fn declared<T: MergeRules>(path: &str) -> Rule {
    let parts: Vec<&str> = path.split('.').filter(|p| !p.is_empty()).collect();
    T::rule(&parts).unwrap_or(Rule::First)
}

/// Combines `parts` (with `ops` operations each, for `Rule::ByOps`) by the rule `rule` gives
/// each figure's path (`ops`, `per_op.reads`, `by_op.GET_NODE.ops`).
pub fn combine<T: Serialize + DeserializeOwned>(
    parts: &[&T],
    ops: &[u64],
    rule: &dyn Fn(&str) -> Rule,
) -> T {
    let trees: Vec<Value> = parts
        .iter()
        .map(|p| serde_json::to_value(p).expect("a summary is plain data"))
        .collect();
    let at: Vec<(&Value, u64)> = trees.iter().zip(ops.iter().copied()).collect();
    serde_json::from_value(walk(&at, "", rule)).expect("the combination has the parts' shape")
}

/// The median over repeats of every figure.
pub fn median<T: Serialize + DeserializeOwned + Clone>(parts: &[&T]) -> T {
    if parts.len() == 1 {
        return parts[0].clone();
    }
    combine(parts, &vec![0; parts.len()], &|_| Rule::Median)
}

fn walk(values: &[(&Value, u64)], path: &str, rule: &dyn Fn(&str) -> Rule) -> Value {
    let present: Vec<(&Value, u64)> = values
        .iter()
        .copied()
        .filter(|(v, _)| !v.is_null())
        .collect();
    let Some(&(first, _)) = present.first() else {
        return Value::Null;
    };
    let how = rule(path);
    match first {
        Value::Object(_) => {
            let mut out = serde_json::Map::new();
            for (v, _) in &present {
                for key in v.as_object().into_iter().flat_map(|o| o.keys()) {
                    if !out.contains_key(key) {
                        let at: Vec<(&Value, u64)> = present
                            .iter()
                            .filter_map(|(v, w)| Some((v.get(key)?, *w)))
                            .collect();
                        let child = if path.is_empty() {
                            key.clone()
                        } else {
                            format!("{path}.{key}")
                        };
                        out.insert(key.clone(), walk(&at, &child, rule));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Number(_)
            if present.len() < values.len() && matches!(how, Rule::Sum | Rule::ByOps) =>
        {
            Value::Null
        }
        Value::Number(_) => number(&present, how),
        Value::Bool(_) => Value::Bool(match how {
            Rule::First => first.as_bool() == Some(true),
            _ => present.iter().any(|(v, _)| v.as_bool() == Some(true)),
        }),
        Value::String(_) if how == Rule::Min => present
            .iter()
            .filter_map(|(v, _)| v.as_str())
            .min()
            .map_or(Value::Null, |s| Value::String(s.to_string())),
        _ => first.clone(),
    }
}

fn number(present: &[(&Value, u64)], how: Rule) -> Value {
    let xs: Vec<f64> = present.iter().filter_map(|(v, _)| v.as_f64()).collect();
    let total: u64 = present.iter().map(|(_, w)| w).sum();
    let x = match how {
        Rule::Median => median_of(&xs),
        Rule::Sum => xs.iter().sum(),
        Rule::Max => xs.iter().copied().fold(f64::MIN, f64::max),
        Rule::Min => xs.iter().copied().fold(f64::MAX, f64::min),
        Rule::ByOps if total > 0 => {
            present
                .iter()
                .filter_map(|(v, w)| Some(v.as_f64()? * *w as f64))
                .sum::<f64>()
                / total as f64
        }
        Rule::ByOps | Rule::First => xs[0],
    };
    // Whole numbers stay whole (a median of counts is rounded).
    if present.iter().all(|(v, _)| v.is_u64()) {
        Value::from(x.round() as u64)
    } else if present.iter().all(|(v, _)| v.is_i64()) {
        Value::from(x.round() as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

/// The median (the mean of the middle two for an even count); NaN for none.
pub fn median_of(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// A step summary's shape in small: counts, a time, a per-operation figure, a start.
    #[derive(Clone, Serialize, Deserialize)]
    struct StepSummary {
        ops: u64,
        seconds: f64,
        per_op: PerOp,
        arrival_rate: Option<f64>,
        started_at: String,
    }

    #[derive(Clone, Serialize, Deserialize)]
    struct PerOp {
        reads: Option<f64>,
    }

    #[test]
    fn each_figure_by_its_rule() {
        let part = |ops: u64, secs: f64, reads: Option<f64>, rate: Option<f64>| StepSummary {
            ops,
            seconds: secs,
            per_op: PerOp { reads },
            arrival_rate: rate,
            started_at: format!("2026-01-0{ops}T00:00:00Z"),
        };
        let (a, b) = (
            part(1, 3.0, Some(1.0), Some(10.0)),
            part(3, 2.0, Some(5.0), None),
        );
        let rule = |p: &str| match p {
            "ops" | "arrival_rate" => Rule::Sum,
            "seconds" => Rule::Max,
            "started_at" => Rule::Min,
            p if p.starts_with("per_op.") => Rule::ByOps,
            _ => Rule::First,
        };
        let m: StepSummary = combine(&[&a, &b], &[1, 3], &rule);
        assert_eq!(m.ops, 4);
        assert_eq!(m.seconds, 3.0);
        assert_eq!(m.per_op.reads, Some(4.0), "(1×1 + 5×3) / 4");
        assert_eq!(
            m.arrival_rate, None,
            "a sum is unknown when a part lacks it"
        );
        assert_eq!(m.started_at, "2026-01-01T00:00:00Z");
        let m = median(&[&a, &b]);
        assert_eq!(m.ops, 2, "the median of counts is whole");
        assert_eq!(
            m.arrival_rate,
            Some(10.0),
            "a median of the parts that have it"
        );
    }
}
