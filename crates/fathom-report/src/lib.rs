//! fathom-report: turns results directories into the tables the seeds print. Reports read
//! only results on disk; they never run anything.

pub mod dbbench_tsv;
pub mod json;
pub mod steps;
pub mod table;

use fathom_core::store::LoadedRun;

/// Output formats of `fathom report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Csv,
    Json,
    /// db_bench's `report.tsv` columns.
    DbBench,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "text" => Format::Text,
            "md" | "markdown" => Format::Markdown,
            "csv" => Format::Csv,
            "json" => Format::Json,
            "dbbench" | "tsv" => Format::DbBench,
            other => {
                return Err(format!(
                    "unknown format `{other}`; formats: text, md, csv, json, dbbench"
                ))
            }
        })
    }
}

/// Renders runs in a format.
pub fn render(runs: &[LoadedRun], format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Text => steps::text(runs),
        Format::Markdown => steps::table(runs).markdown(),
        Format::Csv => steps::table(runs).csv(),
        Format::Json => serde_json::to_string_pretty(&json::report(runs))? + "\n",
        Format::DbBench => dbbench_tsv::render(runs),
    })
}
