//! The sections of a report beside the step table, each a builder from the runs (`Input`) to
//! its tables and charts, in the order reports show them; a new section is a file here and a
//! line in `SECTIONS`.

pub mod bound;
pub mod charts;
pub mod inserts;
pub mod iostat;
pub mod kinds;
pub mod memory;
pub mod network;
pub mod notes;
pub mod offcpu;
pub mod profile_diff;
pub mod profiles;
pub mod rates;
pub mod relative;
pub mod steps;
pub mod summary;
pub mod sweep;
pub mod tail;
mod tail_chart;
pub mod tail_grew;
pub mod time;
pub mod workloads;

use crate::section::{Input, Section, Shown};

/// A section builder: the sections it adds (none, one, or one per workload).
pub type Build = fn(&Input) -> anyhow::Result<Vec<Section>>;

/// The sections beside the step table, in the order reports show them, and where each shows.
pub const SECTIONS: &[(Shown, Build)] = &[
    (Shown::Everywhere, sweep::section),
    (Shown::Everywhere, inserts::section),
    (Shown::Everywhere, workloads::sections),
    (Shown::Everywhere, kinds::section),
    (Shown::Everywhere, memory::sections),
    (Shown::Everywhere, network::section),
    (Shown::Everywhere, time::section),
    (Shown::Everywhere, bound::section),
    (Shown::Everywhere, tail::section),
    (Shown::Everywhere, rates::section),
    (Shown::Everywhere, profiles::section),
    (Shown::Everywhere, offcpu::section),
    (Shown::Everywhere, relative::section),
    (Shown::Page, charts::over_time),
    (Shown::Page, charts::percentiles),
];

/// Each step's median over a series' repeats, with the series' label, in the report's order:
/// the rows of the tables that show one line per step and setup.
pub(crate) fn step_medians<'i>(
    input: &'i Input,
) -> Vec<(&'i str, String, fathom_schema::result::StepSummary)> {
    let mut out = Vec::new();
    for step in &input.steps {
        for s in &input.series {
            let steps = s.step(step);
            if !steps.is_empty() {
                let m = fathom_schema::group::median_step(&steps);
                out.push((step.as_str(), s.label(&input.series), m));
            }
        }
    }
    out
}

/// Every section of the report of `input` in order: those shown everywhere, and for the page
/// (`input.page`) the page's too.
pub fn build(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut sections = Vec::new();
    for (shown, build) in SECTIONS {
        if input.page || *shown == Shown::Everywhere {
            sections.extend(
                build(input)?
                    .into_iter()
                    // A page-only builder's sections are the page's; another's may say
                    // themselves that they are (the comparison before it has verdicts).
                    .map(|s| Section {
                        shown: if *shown == Shown::Page {
                            Shown::Page
                        } else {
                            s.shown
                        },
                        ..s
                    }),
            );
        }
    }
    Ok(sections)
}

/// For each (base, new) pair of `sides` (`fathom compare`'s), each of the new side's series
/// beside the base's series of the same client count: `f(base side, new side, base, new)`.
pub fn each_paired_series(
    sides: &[fathom_stats::verdict::Side],
    pairs: &[(usize, usize)],
    mut f: impl FnMut(
        usize,
        usize,
        &fathom_schema::group::Series,
        &fathom_schema::group::Series,
    ) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use fathom_schema::group::series_of;
    for &(b, n) in pairs {
        let (base_series, new_series) = (series_of(&sides[b].runs), series_of(&sides[n].runs));
        for ns in &new_series {
            if let Some(bs) = base_series.iter().find(|s| s.clients == ns.clients) {
                f(b, n, bs, ns)?;
            }
        }
    }
    Ok(())
}
