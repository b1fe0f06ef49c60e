//! The formats of `fathom report` and `fathom compare`, chosen in one place: each is a
//! `Renderer` of the report model (text, Markdown, CSV, JSON, the HTML page) or a workload's
//! original tool's output (`fathom_workloads::originals`), listed with its name and what it
//! prints, which is what `--format` takes and its help lists.

pub mod html;
pub mod json;
mod renderer;
pub mod text;

pub use renderer::Renderer;
use std::sync::LazyLock;

/// An output format: its name (and another it answers to), what it prints, and its renderer.
#[derive(Clone, Copy)]
pub struct Format {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub about: &'static str,
    renderer: &'static dyn Renderer,
}

/// The report model's formats, then each workload's original tool's.
static FORMATS: LazyLock<Vec<Format>> = LazyLock::new(|| {
    let model = |name, alias, about, renderer| Format {
        name,
        alias,
        about,
        renderer,
    };
    let mut all = vec![
        model(
            "text",
            None,
            "aligned tables, as the seeds print them",
            &text::Text,
        ),
        model("md", Some("markdown"), "Markdown tables", &text::Markdown),
        model(
            "csv",
            None,
            "the main table (or the intervals) alone, one header, for scripts",
            &text::Csv,
        ),
        model(
            "json",
            None,
            "every run with its step summaries and the report's tables, numbers as numbers",
            &json::Json,
        ),
        model(
            "html",
            None,
            "one self-contained page with SVG charts",
            &html::Html,
        ),
    ];
    all.extend(fathom_workloads::originals().map(|o| Format {
        name: o.name,
        alias: o.alias,
        about: o.about,
        renderer: o,
    }));
    all
});

impl Format {
    /// Every format, in the order `--help` lists them.
    pub fn all() -> &'static [Format] {
        &FORMATS
    }

    /// The formats' names, as `--format` takes them.
    pub fn names() -> Vec<&'static str> {
        Format::all().iter().map(|f| f.name).collect()
    }

    /// The format named `name` (or answering to it).
    pub fn parse(name: &str) -> Result<Format, String> {
        Format::all()
            .iter()
            .find(|f| f.name == name || f.alias == Some(name))
            .copied()
            .ok_or_else(|| {
                format!(
                    "`{name}` is not a format; expected one of {}",
                    Format::names().join(", ")
                )
            })
    }

    /// The format's renderer.
    pub fn renderer(self) -> &'static dyn Renderer {
        self.renderer
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name == other.name
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(name: &str) -> Result<Format, String> {
        Format::parse(name)
    }
}

/// `--format` lists every format with what it prints.
impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        Format::all()
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let value = clap::builder::PossibleValue::new(self.name).help(self.about);
        Some(match self.alias {
            Some(alias) => value.alias(alias),
            None => value,
        })
    }
}
