//! `fathom report --format html`: the report model as one self-contained page (inline CSS and
//! SVG, no network): a headline (the comparisons in a sentence each), what ran, the summary,
//! the charts over time, the step table, then each section under its heading with its tables,
//! charts and paragraph, then the notes as a list. Each setup has one colour in every chart.

use super::renderer::Renderer;
use crate::draw::svg::{escape, Palette};
use crate::model::Model;
use crate::section::Section;
use crate::sections::charts::OVER_TIME;
use crate::sections::notes::Note;
use fathom_schema::store::LoadedRun;
use fathom_schema::table::{Cell, Table};
use std::fmt::Write;

/// The page.
pub struct Html;

impl Renderer for Html {
    fn page(&self) -> bool {
        true
    }

    fn render(&self, m: &Model, _: &[LoadedRun]) -> anyhow::Result<String> {
        Ok(render(m))
    }
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1500px}\
table{border-collapse:collapse;font-size:12px;margin:8px 0 16px}\
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.sub{padding-left:20px}\
th{background:#f0f0f0}ul.runs{font-size:13px;padding-left:18px}ul.runs li{margin:3px 0;overflow-wrap:anywhere}\
.notes p{margin:2px 0;font-size:13px}.notes p.sub{margin-left:20px}ul.notes{font-size:13px;padding-left:18px}ul.notes li{margin:3px 0}ul.notes li.sub{margin-left:22px;list-style:circle}\
p.headline{font-size:17px;font-weight:600;margin:4px 0 12px}ul.said{font-size:14px;padding-left:18px}.charts{display:flex;flex-wrap:wrap;gap:10px}\
figure{margin:0;border:1px solid #ddd}figure.flame{width:100%}figcaption{font-size:13px;padding:3px 6px}pre{background:#f7f7f7;padding:8px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}\
h2{margin-top:28px;border-bottom:1px solid #ccc}";

/// Marks each chart as rendered when the browser laid it out with visible marks, and where the
/// summary ends on the page; a test reads them from the page's DOM. The charts themselves need
/// no script.
const CHECK: &str = "window.addEventListener('load',function(){var c=document.querySelectorAll('svg.chart'),ok=0;\
c.forEach(function(s){var b=s.getBBox(),m=0;s.querySelectorAll('.mark').forEach(function(e){var r=e.getBBox();if(r.width>0||r.height>0)m++;});\
if(b.width>0&&b.height>0&&m>0){ok++;s.setAttribute('data-rendered','yes');}});\
document.body.setAttribute('data-charts-total',c.length);document.body.setAttribute('data-charts-rendered',ok);\
var s=document.getElementById('summary');if(s){document.body.setAttribute('data-summary-bottom',Math.round(s.getBoundingClientRect().bottom));}});";

/// A table of typed cells: numeric columns right-aligned; a caption over the numeric columns
/// (the sweep's `clients`) as a header row of its own.
fn html_table(t: &Table) -> String {
    let numeric = t.numeric_columns();
    let class = |c: usize| if numeric[c] { " class=\"n\"" } else { "" };
    let mut out = String::from("<table>");
    if let Some(over) = &t.over {
        let numbers = numeric.iter().filter(|n| **n).count();
        let _ = write!(
            out,
            "<tr><th colspan=\"{numbers}\" class=\"n\">{}</th><th></th></tr>",
            escape(over)
        );
    }
    out += "<tr>";
    for (c, h) in t.header.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", class(c), escape(h));
    }
    out += "</tr>";
    for r in &t.rows {
        out += "<tr>";
        for (c, cell) in r.iter().enumerate() {
            let _ = match cell {
                Cell::Link(text, to) => write!(
                    out,
                    "<td{}><a href=\"#{}\">{}</a></td>",
                    class(c),
                    escape(to),
                    escape(text)
                ),
                // A row set in under the one above it (a kind under its step).
                Cell::Text(text) if text.starts_with("  ") => {
                    write!(out, "<td class=\"sub\">{}</td>", escape(text.trim_start()))
                }
                _ => write!(out, "<td{}>{}</td>", class(c), escape(&cell.to_string())),
            };
        }
        out += "</tr>";
    }
    out + "</table>\n"
}

/// What ran, a list item per series (its options and failures on lines of their own).
fn runs(lines: &[String]) -> String {
    let items: String = lines
        .iter()
        .map(|l| {
            let parts: Vec<String> = l
                .lines()
                .map(|p| escape(p.trim_start_matches('#').trim()))
                .collect();
            format!("<li>{}</li>", parts.join("<br>"))
        })
        .collect();
    format!("<ul class=\"runs\">{items}</ul>\n")
}

/// The notes: a list item per note (a series' own set in under its name), or, where the model
/// has only their text, a paragraph per line.
fn notes(items: &[Note], text: &str) -> String {
    if items.is_empty() {
        let lines: String = text
            .lines()
            .map(|l| {
                let class = if l.starts_with("  ") {
                    " class=\"sub\""
                } else {
                    ""
                };
                format!("<p{class}>{}</p>", escape(l.trim()))
            })
            .collect();
        return format!("<div class=\"notes\">{lines}</div>\n");
    }
    let items: String = (items.iter())
        .map(|n| {
            let class = if n.sub { " class=\"sub\"" } else { "" };
            format!("<li{class}>{}</li>", escape(&n.paragraph()))
        })
        .collect();
    format!("<ul class=\"notes\">{items}</ul>\n")
}

fn section(s: &Section, palette: Palette) -> String {
    let mut out = format!("<h2>{}</h2>\n", escape(&s.heading));
    for t in &s.tables {
        if !t.title.is_empty() {
            let _ = writeln!(out, "<h3>{}</h3>", escape(&t.title));
        }
        out += &html_table(&t.table);
    }
    if !s.charts.is_empty() {
        out += "<div class=\"charts\">";
        for c in &s.charts {
            let _ = writeln!(out, "{}", c.html(palette));
        }
        out += "</div>\n";
    }
    if let Some(p) = &s.paragraph {
        let _ = writeln!(out, "<p>{}</p>", escape(p));
    }
    out
}

/// The comparisons in a sentence each, as the page's headline.
fn headline(sentences: &[String]) -> String {
    match sentences.is_empty() {
        true => String::new(),
        false => {
            let lines: Vec<String> = sentences.iter().map(|l| escape(l)).collect();
            format!("<p class=\"headline\">{}</p>\n", lines.join("<br>"))
        }
    }
}

/// The summary: its table, then each thing it says as a list item.
fn summary(s: &Section) -> String {
    let mut out = format!("<section id=\"summary\"><h2>{}</h2>\n", escape(&s.heading));
    for t in &s.tables {
        out += &html_table(&t.table);
    }
    let said: String = (s.paragraph.iter())
        .flat_map(|p| p.lines())
        .map(|l| format!("<li>{}</li>", escape(l)))
        .collect();
    if !said.is_empty() {
        let _ = write!(out, "<ul class=\"said\">{said}</ul>");
    }
    out + "</section>\n"
}

/// The whole page.
fn render(m: &Model) -> String {
    let palette = Palette(&m.palette);
    let mut body = format!("<h1>{}</h1>\n", escape(&m.title));
    body += &headline(&m.headline);
    body += &runs(&m.runs);
    if let Some(s) = &m.summary {
        body += &summary(s);
    }
    let (lead, rest): (Vec<&Section>, Vec<&Section>) =
        m.sections.iter().partition(|s| s.heading == OVER_TIME);
    for s in lead {
        body += &section(s, palette);
    }
    body += "<h2>Steps</h2>\n";
    body += &html_table(&m.main.table);
    for s in rest {
        body += &section(s, palette);
    }
    body += "<h2>Notes</h2>\n";
    body += &notes(&m.note_items, &m.notes);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}<script>{CHECK}</script>\n</body></html>\n",
        escape(&m.title)
    )
}
