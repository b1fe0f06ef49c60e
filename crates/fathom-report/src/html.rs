//! `fathom report --format html`: the report model as one self-contained page (inline CSS and
//! SVG, no network): what ran, the step table, then each section under its heading with its
//! tables, charts and paragraph, then the notes.

use crate::model::{Model, Section};
use crate::svg::escape;
use crate::table::Table;
use std::fmt::Write;

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1500px}\
table{border-collapse:collapse;font-size:12px;margin:8px 0 16px}\
td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}\
td:first-child,th:first-child,td:last-child,th:last-child{text-align:left}\
th{background:#f0f0f0}.charts{display:flex;flex-wrap:wrap;gap:10px}\
figure{margin:0;border:1px solid #ddd}pre{background:#f7f7f7;padding:8px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}\
h2{margin-top:28px;border-bottom:1px solid #ccc}";

/// Marks each chart as rendered when the browser laid it out with visible marks; a test reads
/// the counts from the page's DOM. The charts themselves need no script.
const CHECK: &str = "window.addEventListener('load',function(){var c=document.querySelectorAll('svg.chart'),ok=0;\
c.forEach(function(s){var b=s.getBBox(),m=0;s.querySelectorAll('.mark').forEach(function(e){var r=e.getBBox();if(r.width>0||r.height>0)m++;});\
if(b.width>0&&b.height>0&&m>0){ok++;s.setAttribute('data-rendered','yes');}});\
document.body.setAttribute('data-charts-total',c.length);document.body.setAttribute('data-charts-rendered',ok);});";

fn html_table(t: &Table) -> String {
    let mut out = String::from("<table><tr>");
    for h in &t.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out += "</tr>";
    for r in &t.rows {
        out += "<tr>";
        for c in r {
            let _ = write!(out, "<td>{}</td>", escape(c));
        }
        out += "</tr>";
    }
    out + "</table>\n"
}

fn section(s: &Section) -> String {
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
            let _ = writeln!(out, "<figure>{}</figure>", c.svg());
        }
        out += "</div>\n";
    }
    if let Some(p) = &s.paragraph {
        let _ = writeln!(out, "<p>{}</p>", escape(p));
    }
    out
}

/// The whole page.
pub fn render(m: &Model) -> String {
    let mut body = format!("<h1>{}</h1>\n", escape(&m.title));
    let _ = writeln!(body, "<pre>{}</pre>", escape(&m.runs.join("\n")));
    body += "<h2>Steps</h2>\n";
    body += &html_table(&m.steps);
    for s in &m.sections {
        body += &section(s);
    }
    let _ = write!(body, "<h2>Notes</h2>\n<pre>{}</pre>\n", escape(&m.notes));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}<script>{CHECK}</script>\n</body></html>\n",
        escape(&m.title)
    )
}
