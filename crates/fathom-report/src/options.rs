//! What a report includes and how it judges: the options every section and format reads.

/// What a report includes besides the step table.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Add the per-interval time series (text, md, csv, json).
    pub intervals: bool,
    /// The setup others are compared against (default: the first).
    pub base: Option<String>,
    /// The smallest relative change a verdict calls faster or slower.
    pub threshold: f64,
    /// A step whose iostat figures the comparison shows per setup (seed 004's table).
    pub iostat: Option<String>,
    /// Leave repeats of a step that other processes disturbed out of the verdicts.
    pub exclude_disturbed: bool,
    /// How verdicts are adjusted for their number.
    pub adjust: fathom_core::verdict::Adjust,
}

impl ReportOptions {
    /// How the comparisons judge.
    pub fn judge(&self) -> fathom_core::verdict::Judge {
        fathom_core::verdict::Judge {
            threshold: self.threshold,
            exclude_disturbed: self.exclude_disturbed,
            adjust: self.adjust,
        }
    }
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            iostat: None,
            intervals: false,
            base: None,
            threshold: 0.03,
            exclude_disturbed: false,
            adjust: fathom_core::verdict::Adjust::None,
        }
    }
}
