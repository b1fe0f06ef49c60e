//! `fathom report --format html`: one self-contained page (inline CSS and SVG, no network)
//! with the step table, the sweep, relative throughput against a base setup, and charts of
//! throughput against clients, throughput and p99 over time, and latency percentiles.

use crate::compare::{self, Side};
use crate::group::{median, series, step_order, Series};
use crate::svg::{escape, BarChart, Bars, Line, LineChart};
use crate::table::Table;
use crate::{steps, ReportOptions};
use fathom_core::store::LoadedRun;
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

fn figure(svg: String) -> String {
    format!("<figure>{svg}</figure>\n")
}

/// Throughput against clients, a chart per step, a line per setup.
fn sweep_charts(all: &[Series], steps: &[String]) -> String {
    let mut setups: Vec<&str> = Vec::new();
    for s in all {
        if !setups.contains(&s.setup.as_str()) {
            setups.push(&s.setup);
        }
    }
    let mut clients: Vec<usize> = all.iter().map(|s| s.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    let mut out = String::new();
    for step in steps {
        let queries = steps::counts_queries(all, step);
        let lines: Vec<Line> = setups
            .iter()
            .map(|name| {
                let mut points: Vec<(f64, f64)> = all
                    .iter()
                    .filter(|s| s.setup == *name)
                    .filter_map(|s| {
                        let reps = s.step(step);
                        (!reps.is_empty() && reps[0].ops > 0).then(|| {
                            let v: Vec<f64> = reps
                                .iter()
                                .map(|r| r.ops_per_sec * steps::queries_per_op(r))
                                .collect();
                            (s.clients as f64, median(&v))
                        })
                    })
                    .collect();
                // Client counts sit evenly spaced, as the seeds' sweep tables list them.
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                for p in &mut points {
                    p.0 = clients.iter().position(|&c| c as f64 == p.0).unwrap_or(0) as f64;
                }
                Line {
                    name: name.to_string(),
                    points,
                }
            })
            .filter(|l| !l.points.is_empty())
            .collect();
        // Setups an order of magnitude apart (embedded engines beside servers) get a log axis.
        let ys = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
        let (lo, hi) = (ys().fold(f64::MAX, f64::min), ys().fold(0.0, f64::max));
        let log_y = lo > 0.0 && hi / lo > 20.0;
        if !lines.is_empty() {
            out += &figure(
                LineChart {
                    title: format!("{step}: throughput by clients"),
                    x_label: "clients".into(),
                    y_label: if queries { "queries/s" } else { "ops/s" }.into(),
                    lines,
                    log_y,
                    x_names: clients.iter().map(|c| c.to_string()).collect(),
                }
                .svg(),
            );
        }
    }
    out
}

/// The median over repeats of each interval's figure, up to the shortest repeat.
fn median_series(
    s: &Series,
    step: &str,
    f: fn(&fathom_core::result::IntervalRecord) -> f64,
) -> Vec<(f64, f64)> {
    let per_run: Vec<Vec<(f64, f64)>> = s
        .runs
        .iter()
        .filter_map(|r| {
            let summary = r.steps.iter().find(|x| x.step == step)?;
            let iv = r.intervals(summary).ok()?;
            // A step's last interval can be a sliver whose rate says nothing: leave out
            // intervals shorter than half the longest.
            let longest = iv.iter().map(|i| i.t_end - i.t_start).fold(0.0, f64::max);
            Some(
                iv.iter()
                    .filter(|i| i.t_end - i.t_start >= longest / 2.0)
                    .map(|i| (i.t_end, f(i)))
                    .collect(),
            )
        })
        .filter(|v: &Vec<(f64, f64)>| !v.is_empty())
        .collect();
    let n = per_run.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|k| {
            let ys: Vec<f64> = per_run.iter().map(|v| v[k].1).collect();
            (per_run[0][k].0, median(&ys))
        })
        .collect()
}

fn time_charts(all: &[Series], steps: &[String]) -> String {
    let mut out = String::new();
    for step in steps {
        for (what, unit, f, log) in [
            (
                "throughput",
                "ops/s",
                (|i: &fathom_core::result::IntervalRecord| i.ops_per_sec) as fn(&_) -> f64,
                false,
            ),
            ("p99 latency", "µs", |i| i.latency_us.p99, true),
        ] {
            let lines: Vec<Line> = all
                .iter()
                .map(|s| Line {
                    name: s.label(all),
                    points: median_series(s, step, f),
                })
                .filter(|l| l.points.len() > 1)
                .collect();
            if !lines.is_empty() {
                out += &figure(
                    LineChart {
                        title: format!("{step}: {what} over time"),
                        x_label: "seconds into the step".into(),
                        y_label: unit.into(),
                        lines,
                        log_y: log,
                        x_names: vec![],
                    }
                    .svg(),
                );
            }
        }
    }
    out
}

fn percentile_charts(all: &[Series], steps: &[String]) -> String {
    let names = ["p50", "p75", "p99", "p99.9", "p99.99", "max"];
    let mut out = String::new();
    for step in steps {
        let lines: Vec<Line> = all
            .iter()
            .filter_map(|s| {
                let reps = s.step(step);
                if reps.is_empty() || reps[0].ops == 0 {
                    return None;
                }
                let l = crate::group::median_step(&reps).latency_us;
                let v = [l.p50, l.p75, l.p99, l.p99_9, l.p99_99, l.max];
                Some(Line {
                    name: s.label(all),
                    points: v.iter().enumerate().map(|(i, &y)| (i as f64, y)).collect(),
                })
            })
            .collect();
        if !lines.is_empty() {
            out += &figure(
                LineChart {
                    title: format!("{step}: latency percentiles"),
                    x_label: "percentile".into(),
                    y_label: "µs".into(),
                    lines,
                    log_y: true,
                    x_names: names.iter().map(|s| s.to_string()).collect(),
                }
                .svg(),
            );
        }
    }
    out
}

/// Relative throughput of every setup against the base, a chart and a table.
fn relative(runs: &[LoadedRun], opts: &ReportOptions) -> String {
    let operands = [(String::new(), runs)];
    let sides = compare::sides(&operands);
    if sides.len() < 2 {
        return String::new();
    }
    let base_at = opts
        .base
        .as_deref()
        .and_then(|b| sides.iter().position(|s| s.label == b))
        .unwrap_or(0);
    let base: &Side = &sides[base_at];
    let mut rows = Vec::new();
    for (i, s) in sides.iter().enumerate() {
        if i != base_at {
            rows.extend(compare::compare(base, s, opts.threshold));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let multi_clients = rows.iter().any(|r| r.clients != rows[0].clients);
    let cat = |r: &compare::Row| {
        if multi_clients {
            format!("{} c{}", r.step, r.clients)
        } else {
            r.step.clone()
        }
    };
    let mut categories: Vec<String> = Vec::new();
    for r in &rows {
        if !categories.contains(&cat(r)) {
            categories.push(cat(r));
        }
    }
    let series: Vec<Bars> = sides
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != base_at)
        .map(|(_, s)| {
            let of = |c: &String| rows.iter().find(|r| r.new == s.label && &cat(r) == c);
            Bars {
                name: s.label.clone(),
                values: categories.iter().map(|c| of(c).map(|r| r.ratio)).collect(),
                intervals: categories
                    .iter()
                    .map(|c| of(c).and_then(|r| r.ci95))
                    .collect(),
            }
        })
        .collect();
    let chart = BarChart {
        title: format!("relative throughput (ops/s / {})", base.label),
        y_label: "relative ops/s".into(),
        categories,
        series,
        reference: Some(1.0),
    };
    format!(
        "<h2>Relative throughput against {}</h2>\n<div class=\"charts\">{}</div>\n{}<p>{}</p>\n",
        escape(&base.label),
        figure(chart.svg()),
        html_table(&compare::table(&rows)),
        escape(&compare::legend(&base.label, opts.threshold))
    )
}

/// The whole page.
pub fn page(runs: &[LoadedRun], opts: &ReportOptions) -> String {
    let all = series(runs);
    let steps = step_order(runs);
    let title = runs
        .iter()
        .find_map(|r| r.manifest.experiment.as_ref().map(|e| e.name.clone()))
        .unwrap_or_else(|| "fathom report".into());
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    let text = steps::text(runs, false);
    let (head, _) = text.split_once("\nstep ").unwrap_or((&text, ""));
    let _ = writeln!(body, "<pre>{}</pre>", escape(head.trim_end()));
    body += "<h2>Steps</h2>\n";
    body += &html_table(&steps::table(runs));
    let sweep = steps::sweep(runs);
    if !sweep.is_empty() {
        body += "<h2>By client count</h2>\n";
        for t in &sweep {
            let _ = writeln!(body, "<h3>{}</h3>", escape(&t.title));
            body += &html_table(&t.table);
        }
        let _ = writeln!(
            body,
            "<div class=\"charts\">{}</div>",
            sweep_charts(&all, &steps)
        );
    }
    let per_insert = crate::inserts::tables(runs);
    if !per_insert.is_empty() {
        body += "<h2>What each insert and query cost</h2>\n";
        for t in &per_insert {
            let _ = writeln!(body, "<h3>{}</h3>", escape(&t.title));
            body += &html_table(&t.table);
        }
    }
    let load = crate::linkbench::load_table(runs);
    let latency = crate::linkbench::exact_table(runs);
    if load.is_some() || latency.is_some() {
        body += "<h2>LinkBench</h2>\n";
        for (title, t) in [
            ("Load, per node inserted", load),
            ("Requests, latency per operation in µs", latency),
        ] {
            if let Some(t) = t {
                let _ = writeln!(body, "<h3>{title}</h3>");
                body += &html_table(&t);
            }
        }
    }
    body += &relative(runs, opts);
    let _ = write!(
        body,
        "<h2>Over time</h2>\n<div class=\"charts\">{}</div>\n",
        time_charts(&all, &steps)
    );
    let _ = write!(
        body,
        "<h2>Latency percentiles</h2>\n<div class=\"charts\">{}</div>\n",
        percentile_charts(&all, &steps)
    );
    let notes = text.rsplit_once("\nlatency in µs").map_or("", |(_, n)| n);
    let _ = write!(
        body,
        "<h2>Notes</h2>\n<pre>latency in µs{}</pre>\n",
        escape(notes)
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}<script>{CHECK}</script>\n</body></html>\n",
        escape(&title)
    )
}
