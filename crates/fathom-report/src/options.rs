//! What a report includes and how it judges: the options every section and format reads, and
//! the flags `fathom report` and `fathom compare` take for them.

use fathom_stats::verdict::{Adjust, Judge};

/// How a comparison judges and what it adds; `fathom report` and `fathom compare` take it as
/// flags.
#[derive(Clone, Debug, clap::Args)]
pub struct Judging {
    /// The base setup's name, when a directory holds several setups (default: the first); or
    /// the start of several names (a version: `8.0.0` for `8.0.0.leveled` and
    /// `8.0.0.universal`), each the base of the setups named as it is after that start.
    #[arg(long)]
    pub base: Option<String>,
    /// Smallest change called faster or slower (3% or 0.03).
    #[arg(long, default_value = "3%", value_parser = fathom_api::units::parse_threshold)]
    pub threshold: f64,
    /// Also each setup's iostat figures during this step, and each over its base's (seed
    /// 004's table for overwriteandwait).
    #[arg(long, value_name = "STEP")]
    pub iostat: Option<String>,
    /// Leave out repeats of a step that other processes or steal disturbed (the report marks
    /// them `!`); without it they count, and the verdict says how many there were.
    #[arg(long)]
    pub exclude_disturbed: bool,
    /// Adjust the verdicts for their number: holm (the chance of any false verdict at most
    /// 2.5%) or bh (Benjamini-Hochberg: false ones at most 2.5% of those decided); none judges
    /// each on its own.
    #[arg(long, default_value = "none")]
    pub adjust: Adjust,
    /// A parameter the comparison is across (repeat for more): sides whose runs differ in it
    /// (`--across num_keys`) are compared all the same; without it such sides are refused.
    #[arg(long, value_name = "PARAM")]
    pub across: Vec<String>,
    /// The base's history, for sides that ran apart (set by the command from its --store).
    #[arg(skip)]
    pub history: fathom_stats::verdict::history::History,
}

impl Judging {
    /// How the comparisons judge.
    pub fn judge(&self) -> Judge {
        Judge {
            threshold: self.threshold,
            exclude_disturbed: self.exclude_disturbed,
            adjust: self.adjust,
            across: self.across.clone(),
            history: self.history.clone(),
        }
    }
}

impl Default for Judging {
    fn default() -> Self {
        Judging {
            base: None,
            threshold: 0.03,
            iostat: None,
            exclude_disturbed: false,
            adjust: Adjust::None,
            across: Vec::new(),
            history: Default::default(),
        }
    }
}

/// Which figures the terminal's step table shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Columns {
    /// All but the wide figures, to fit 120 columns.
    #[default]
    Fit,
    /// Every figure.
    All,
}

/// What a report includes besides the step table; `fathom report` takes it as its flags.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ReportOptions {
    /// Add every step's per-interval time series (text, md, csv, json).
    #[arg(long)]
    pub intervals: bool,
    /// Print how to read each table and column (the legend) after the tables; without it the
    /// text report names the flag in one line. The page always has it.
    #[arg(long)]
    pub legend: bool,
    /// The terminal's tables: `fit` leaves out the figures marked wide so that they fit 120
    /// columns (the step table's p99.9, max, erKB/o, ewKB/o, vmstat cpu/o; the bound's shares),
    /// `all` shows every figure. CSV, JSON and the page always have every one.
    #[arg(long, value_enum, default_value = "fit")]
    pub columns: Columns,
    #[command(flatten)]
    pub judging: Judging,
}

impl ReportOptions {
    /// How the comparisons judge.
    pub fn judge(&self) -> Judge {
        self.judging.judge()
    }
}
