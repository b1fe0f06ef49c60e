//! Flame graphs for the page: inferno's SVG with its search and zoom, each in a frame of its
//! own (`<iframe srcdoc>`) so that several on one page keep their scripts and element ids
//! apart, and the page stays one self-contained file.

use crate::draw::svg::escape;
use fathom_schema::profile::Stacks;
use inferno::flamegraph::{self, Options};

/// One flame graph, ready for the page.
pub struct Flame {
    /// The figure's anchor on the page.
    pub id: String,
    pub title: String,
    pub svg: String,
}

impl Flame {
    /// The figure: a caption and the graph in its frame, as tall as the graph.
    pub fn html(&self) -> String {
        let height = self
            .svg
            .split_once("height=\"")
            .and_then(|(_, rest)| rest.split('"').next()?.parse::<f64>().ok())
            .unwrap_or(600.0);
        format!(
            "<figure id=\"{}\" class=\"flame\"><figcaption>{}</figcaption>\
             <iframe title=\"{}\" style=\"width:100%;height:{:.0}px;border:0\" srcdoc=\"{}\"></iframe></figure>",
            escape(&self.id),
            escape(&self.title),
            escape(&self.title),
            height + 8.0,
            escape(&self.svg)
        )
    }
}

fn options(title: &str, count_name: &str) -> Options<'static> {
    let mut o = Options::default();
    o.title = title.to_string();
    o.count_name = count_name.to_string();
    // The same graph for the same stacks (colours by name, not at random).
    o.hash = true;
    o.deterministic = true;
    o.min_width = 0.05;
    // A fixed width: inside its frame the SVG has no page width to take a share of.
    o.image_width = Some(1200);
    o
}

fn render(mut o: Options<'_>, lines: &[String]) -> anyhow::Result<String> {
    let mut out = Vec::new();
    flamegraph::from_lines(&mut o, lines.iter().map(String::as_str), &mut out)
        .map_err(|e| anyhow::anyhow!("drawing a flame graph: {e}"))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The flame graph of one step's stacks.
pub fn graph(id: &str, title: &str, stacks: &Stacks) -> anyhow::Result<Flame> {
    let lines: Vec<String> = stacks
        .lines
        .iter()
        .map(|(s, c)| format!("{} {c}", s.join(";")))
        .collect();
    let svg = if lines.is_empty() {
        empty(title)
    } else {
        render(options(title, "ns"), &lines)?
    };
    Ok(Flame {
        id: id.to_string(),
        title: title.to_string(),
        svg,
    })
}

/// A differential flame graph: the new stacks' shape, coloured by how each frame's CPU per
/// operation changed from the base (red more, blue less). `lines` are `STACK BASE NEW` with
/// both counts in the same unit per operation.
pub fn differential(id: &str, title: &str, lines: &[String]) -> anyhow::Result<Flame> {
    let svg = if lines.is_empty() {
        empty(title)
    } else {
        render(options(title, "ps/op"), lines)?
    };
    Ok(Flame {
        id: id.to_string(),
        title: title.to_string(),
        svg,
    })
}

/// A graph of no samples says so rather than failing.
fn empty(title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\"><text x=\"10\" y=\"25\">{}: no samples</text></svg>",
        escape(title)
    )
}
