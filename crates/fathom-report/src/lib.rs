//! fathom-report: turns results directories into the tables the seeds print. Reports read
//! only results on disk; they never run anything. The crate imports in one direction: drawing
//! (`draw`), the report's options (`options`) and the section types (`section`) first, the comparison table (`comparison`), the
//! sections (`sections`), the model built of them (`model`), and the renderers (`render`).

pub mod comparison;
pub mod draw;
pub mod gate;
pub mod model;
pub mod options;
pub mod render;
pub mod section;
pub mod sections;

use fathom_schema::store::LoadedRun;
use model::Model;
pub use options::{Judging, ReportOptions};
pub use render::{Format, Renderer};

/// The report of `runs` in a format.
pub fn render(runs: &[LoadedRun], format: Format, opts: &ReportOptions) -> anyhow::Result<String> {
    let renderer = format.renderer();
    let model = Model::build(runs, opts, renderer.page())?;
    renderer.render(&model, runs)
}

#[cfg(test)]
mod tests;
