//! Efficiency verdicts: the cost of an operation (host CPU µs, KB written and read, disk reads)
//! judged as throughput is, by the same test on the logarithms of each repeat's figure, so a
//! regression in what an operation costs (seed 004: read requests of 28 KB become 9 KB while
//! QPS holds) is called out beside a throughput "same".

use super::design::Layout;
use super::log_ratio::{decide, ALPHA};
use super::Verdict;
use fathom_schema::figures;
use fathom_schema::result::StepSummary;
use serde::{Serialize, Serializer};

/// Whether `name` is a cost figure's name (a figure `fathom_schema::figures` marks judged).
pub fn is_figure(name: &str) -> bool {
    figures::judged().any(|f| f.column == name)
}

/// One cost figure of one step, NEW against BASE.
#[derive(Clone, Debug, Serialize)]
pub struct CostVerdict {
    pub figure: &'static str,
    /// NEW / BASE of the geometric means; `None` where a repeat's figure is zero.
    pub ratio: Option<f64>,
    pub ci95: Option<(f64, f64)>,
    /// more, less, same, undecided or no verdict: more is a costlier operation.
    #[serde(serialize_with = "as_cost")]
    pub verdict: Verdict,
    pub p: Option<f64>,
    /// The p-value a family of verdicts is adjusted with.
    #[serde(skip)]
    pub p_family: Option<f64>,
}

/// A verdict in a cost's words: a ratio above the band is more, below it less.
pub fn cost_text(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "more",
        Verdict::Slower => "less",
        other => other.text(),
    }
}

fn as_cost<S: Serializer>(v: &Verdict, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&cost_text(*v).replace(' ', "_"))
}

/// The cost verdicts of a step's repeats: each figure every repeat of both sides has, judged
/// under `layout` against the band 1 ± `threshold` at the look's `level`; with fewer than `min`
/// rounds, or a repeat whose figure is zero, no verdict.
pub fn judge(
    base: &[&StepSummary],
    new: &[&StepSummary],
    layout: &Layout,
    threshold: f64,
    level: f64,
    min: usize,
) -> Vec<CostVerdict> {
    let mut out = Vec::new();
    for figure in figures::judged() {
        let values = |side: &[&StepSummary]| -> Option<Vec<f64>> {
            side.iter().map(|s| figure.of_step(s)).collect()
        };
        let (Some(b), Some(n)) = (values(base), values(new)) else {
            continue;
        };
        let test = layout.test(&b, &n);
        let enough = layout.rounds(b.len(), n.len()) >= min;
        let (verdict, p, p_family) = match test {
            Some(t) if enough => {
                let (v, p, family) = decide(t.nearest(threshold), level);
                (v, Some(p), Some(family))
            }
            _ => (Verdict::NoVerdict, None, None),
        };
        out.push(CostVerdict {
            figure: figure.column,
            ratio: test.map(|t| t.ratio()),
            ci95: test.map(|t| t.interval(ALPHA)),
            verdict,
            p,
            p_family,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(cpu_us: f64, write_kb: f64, reads: f64) -> StepSummary {
        let mut s = StepSummary::default();
        s.per_op.cpu_us = Some(cpu_us);
        s.per_op.write_kb = Some(write_kb);
        s.per_op.reads = Some(reads);
        s
    }

    /// CPU per operation up 20% is "more", write KB the same, reads of zero no verdict, and a
    /// figure no repeat has is left out.
    #[test]
    fn each_cost_is_judged_on_its_own() {
        let base = [
            step(10.0, 2.0, 0.0),
            step(10.2, 2.01, 0.0),
            step(9.9, 1.99, 0.0),
        ];
        let new = [
            step(12.0, 2.0, 0.0),
            step(12.1, 2.0, 0.0),
            step(11.9, 2.01, 0.0),
        ];
        let (b, n): (Vec<&StepSummary>, Vec<&StepSummary>) =
            (base.iter().collect(), new.iter().collect());
        let layout = Layout {
            design: super::super::Design::Unpaired,
            pairs: Vec::new(),
            unpaired_left_out: 0,
            timing: super::super::Timing::Interleaved,
        };
        let v = judge(&b, &n, &layout, 0.03, ALPHA, 3);
        let of = |f: &str| v.iter().find(|c| c.figure == f).unwrap();
        assert_eq!(of("cpu/o").verdict, Verdict::Faster);
        assert_eq!(cost_text(of("cpu/o").verdict), "more");
        assert_eq!(of("wKB/o").verdict, Verdict::Same);
        assert_eq!(of("r/o").verdict, Verdict::NoVerdict);
        assert!(v.iter().all(|c| c.figure != "rKB/o"));
        let json = serde_json::to_value(of("cpu/o")).unwrap();
        assert_eq!(json["verdict"], "more");
    }
}
