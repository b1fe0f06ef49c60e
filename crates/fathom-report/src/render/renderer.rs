//! What a format is: a renderer of the report model, or of the runs as a workload's original
//! tool printed them.

use crate::model::Model;
use fathom_schema::store::LoadedRun;
use fathom_workloads::report::Original;

/// One format of `fathom report` and `fathom compare`. Every format renders one `Model`; the
/// originals' formats (db_bench, sysbench, LinkBench) print the runs behind it as those tools
/// printed theirs.
pub trait Renderer: Sync {
    /// True when the format shows the page's parts (charts, the comparison against a base).
    fn page(&self) -> bool {
        false
    }

    /// True when the format renders the model's tables rather than the runs' own lines.
    fn renders_model(&self) -> bool {
        true
    }

    fn render(&self, model: &Model, runs: &[LoadedRun]) -> anyhow::Result<String>;
}

/// An original's format prints the runs as the tool printed its own.
impl Renderer for Original {
    fn renders_model(&self) -> bool {
        false
    }

    fn render(&self, _: &Model, runs: &[LoadedRun]) -> anyhow::Result<String> {
        (self.render)(runs)
    }
}
