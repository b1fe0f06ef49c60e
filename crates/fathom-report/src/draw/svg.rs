//! Small SVG charts for the HTML report: line charts (throughput against clients or time,
//! latency percentiles) and grouped bar charts (relative throughput), drawn as plain SVG so the
//! page needs no script, font or network to show them. Every data mark has class `mark`.
//!
//! Kept over `plotters` (0.3, SVG backend and line series only), measured side by side on a
//! two-line, ten-point chart: plotters added 166 KB to a release binary (190 KB with a log
//! axis and a legend) and wrote 20.6 KB of SVG (29 KB with log axis and legend: a line per
//! grid step, 16-digit font sizes), where this module writes 2.4–4.5 KB per chart; plotters
//! has no tooltip or `mark` class on a point (the page's render check counts those), no
//! category axis and no interval whiskers on bars, each of which would be drawn by hand.

use std::fmt::Write;

pub(super) const W: f64 = 460.0;
pub(super) const H: f64 = 270.0;
pub(super) const LEFT: f64 = 62.0;
pub(super) const RIGHT: f64 = 12.0;
pub(super) const TOP: f64 = 26.0;
pub(super) const BOTTOM: f64 = 66.0;
const COLORS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Colours by name for a page: a name it lists (a setup, a series) keeps its colour in every
/// chart of the page; a name it does not list takes the colour of its position in the chart.
#[derive(Clone, Copy, Default)]
pub struct Palette<'a>(pub &'a [String]);

impl Palette<'_> {
    pub(super) fn of(&self, name: &str, at: usize) -> &'static str {
        let k = self.0.iter().position(|n| n == name).unwrap_or(at);
        COLORS[k % COLORS.len()]
    }
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A named line of (x, y) points.
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub log_y: bool,
    /// Category names for x = 0, 1, 2...; numeric ticks when empty.
    pub x_names: Vec<String>,
}

/// One series of a bar chart: a value (and optional interval) per category.
pub struct Bars {
    pub name: String,
    pub values: Vec<Option<f64>>,
    pub intervals: Vec<Option<(f64, f64)>>,
}

pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<Bars>,
    /// A horizontal reference line (1.0 for relative throughput).
    pub reference: Option<f64>,
}

/// A y (or x) axis scale: linear from `lo`, or log10.
pub(super) struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    from: f64,
    to: f64,
}

impl Scale {
    fn new(lo: f64, hi: f64, log: bool, from: f64, to: f64) -> Scale {
        let (lo, hi) = if log {
            let lo = lo.max(1e-3);
            (
                10f64.powf(lo.log10().floor()),
                10f64.powf(hi.max(lo * 10.0).log10().ceil()),
            )
        } else if hi <= lo {
            (lo - 1.0, hi + 1.0)
        } else {
            let step = nice_step((hi - lo) / 5.0);
            ((lo / step).floor() * step, (hi / step).ceil() * step)
        };
        Scale {
            lo,
            hi,
            log,
            from,
            to,
        }
    }

    pub(super) fn at(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.from + f * (self.to - self.from)
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (self.lo.log10() as i32, self.hi.log10() as i32);
            (a..=b).map(|e| 10f64.powi(e)).collect()
        } else {
            let step = nice_step((self.hi - self.lo) / 5.0);
            let n = ((self.hi - self.lo) / step).round() as usize;
            (0..=n).map(|i| self.lo + step * i as f64).collect()
        }
    }
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// A tick label: 1.2M, 350K, 12, 0.5.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}K", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(super) fn frame(out: &mut String, title: &str, y_label: &str, x_label: &str, y: &Scale) {
    let _ = write!(
        out,
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><title>{t}</title><rect x="0" y="0" width="{W}" height="{H}" fill="white"/><text x="{cx}" y="16" text-anchor="middle" font-size="13" font-weight="bold">{t}</text>"#,
        t = escape(title),
        cx = W / 2.0,
    );
    for t in y.ticks() {
        let py = y.at(t);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{x2}" y1="{py:.1}" y2="{py:.1}" stroke="#e4e4e4"/><text x="{tx}" y="{ty:.1}" text-anchor="end" font-size="10">{l}</text>"##,
            x2 = W - RIGHT,
            tx = LEFT - 4.0,
            ty = py + 3.5,
            l = short(t),
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{yb}" stroke="#444"/><line x1="{LEFT}" x2="{xr}" y1="{yb}" y2="{yb}" stroke="#444"/><text transform="translate(13,{my}) rotate(-90)" text-anchor="middle" font-size="11">{yl}</text><text x="{mx}" y="{xy}" text-anchor="middle" font-size="11">{xl}</text>"##,
        yb = H - BOTTOM,
        xr = W - RIGHT,
        my = (TOP + H - BOTTOM) / 2.0,
        mx = (LEFT + W - RIGHT) / 2.0,
        xy = H - BOTTOM + 30.0,
        yl = escape(y_label),
        xl = escape(x_label),
    );
}

fn legend(out: &mut String, names: &[&str], palette: Palette) {
    let entries: Vec<(&str, &str)> = (names.iter().enumerate())
        .map(|(i, n)| (*n, palette.of(n, i)))
        .collect();
    legend_of(out, &entries);
}

/// A legend of (name, colour) entries on one line under the chart.
pub(super) fn legend_of(out: &mut String, entries: &[(&str, &str)]) {
    // Many setups shrink the legend to fit one line under the chart rather than run off it.
    let advance = |n: &str| 22.0 + 6.0 * n.chars().count() as f64;
    let total: f64 = entries.iter().map(|(n, _)| advance(n)).sum();
    let scale = ((W - LEFT - 8.0) / total).min(1.0);
    let mut x = LEFT;
    let y = H - 14.0;
    for &(n, c) in entries {
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="{ry}" width="{box_:.1}" height="{box_:.1}" fill="{c}"/><text x="{tx:.1}" y="{y}" font-size="{fs:.1}">{name}</text>"#,
            ry = y - 9.0 * scale,
            box_ = 10.0 * scale,
            tx = x + 13.0 * scale,
            fs = 10.0 * scale,
            name = escape(n),
        );
        x += advance(n) * scale;
    }
}

impl LineChart {
    /// The x and y scales that hold every point (y from 0 unless logarithmic).
    pub(super) fn scales(&self) -> (Scale, Scale) {
        let pts = || self.lines.iter().flat_map(|l| l.points.iter());
        let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in pts() {
            xmin = xmin.min(x);
            xmax = xmax.max(x);
            ymin = ymin.min(y);
            ymax = ymax.max(y);
        }
        if xmin > xmax {
            (xmin, xmax, ymin, ymax) = (0.0, 1.0, 0.0, 1.0);
        }
        if !self.log_y {
            ymin = ymin.min(0.0);
        }
        let y = Scale::new(ymin, ymax, self.log_y, H - BOTTOM, TOP);
        let x = if self.x_names.is_empty() {
            Scale::new(xmin, xmax, false, LEFT + 6.0, W - RIGHT - 6.0)
        } else {
            let n = self.x_names.len().max(2) as f64;
            Scale {
                lo: 0.0,
                hi: n - 1.0,
                log: false,
                from: LEFT + 20.0,
                to: W - RIGHT - 20.0,
            }
        };
        (x, y)
    }

    /// The x axis's labels: numbers, or the category names.
    pub(super) fn x_ticks(&self, out: &mut String, x: &Scale) {
        let xticks: Vec<(f64, String)> = if self.x_names.is_empty() {
            x.ticks().into_iter().map(|t| (t, short(t))).collect()
        } else {
            self.x_names
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64, n.clone()))
                .collect()
        };
        for (t, l) in xticks {
            let _ = write!(
                out,
                r#"<text x="{px:.1}" y="{py}" text-anchor="middle" font-size="10">{l}</text>"#,
                px = x.at(t),
                py = H - BOTTOM + 13.0,
                l = escape(&l),
            );
        }
    }

    /// A path per line, and a dot with a tooltip per point when there are few.
    pub(super) fn line(out: &mut String, line: &Line, color: &str, x: &Scale, y: &Scale) {
        let d: Vec<String> = line
            .points
            .iter()
            .enumerate()
            .map(|(k, &(px, py))| {
                format!(
                    "{}{:.1},{:.1}",
                    if k == 0 { "M" } else { "L" },
                    x.at(px),
                    y.at(py)
                )
            })
            .collect();
        let _ = write!(
            out,
            r#"<path class="mark" d="{}" fill="none" stroke="{color}" stroke-width="1.8"/>"#,
            d.join(" ")
        );
        if line.points.len() <= 24 {
            for &(px, py) in &line.points {
                let _ = write!(
                    out,
                    r#"<circle class="mark" cx="{:.1}" cy="{:.1}" r="2.6" fill="{color}"><title>{}: {}</title></circle>"#,
                    x.at(px),
                    y.at(py),
                    escape(&line.name),
                    short(py)
                );
            }
        }
    }

    pub fn svg(&self) -> String {
        self.svg_in(Palette::default())
    }

    /// The chart with each line's colour from `palette`.
    pub fn svg_in(&self, palette: Palette) -> String {
        let (x, y) = self.scales();
        let mut out = String::new();
        frame(&mut out, &self.title, &self.y_label, &self.x_label, &y);
        self.x_ticks(&mut out, &x);
        for (i, line) in self.lines.iter().enumerate() {
            Self::line(&mut out, line, palette.of(&line.name, i), &x, &y);
        }
        let names: Vec<&str> = self.lines.iter().map(|l| l.name.as_str()).collect();
        legend(&mut out, &names, palette);
        out + "</svg>"
    }
}

impl BarChart {
    pub fn svg(&self) -> String {
        self.svg_in(Palette::default())
    }

    /// The chart with each series' colour from `palette`.
    pub fn svg_in(&self, palette: Palette) -> String {
        let mut ymax = self.reference.unwrap_or(0.0);
        for s in &self.series {
            for v in s.values.iter().flatten() {
                ymax = ymax.max(*v);
            }
            for (_, hi) in s.intervals.iter().flatten() {
                ymax = ymax.max(*hi);
            }
        }
        let y = Scale::new(0.0, ymax.max(1e-9) * 1.05, false, H - BOTTOM, TOP);
        let mut out = String::new();
        frame(&mut out, &self.title, &self.y_label, "", &y);
        let slot = (W - LEFT - RIGHT) / self.categories.len().max(1) as f64;
        let bw = (slot * 0.8 / self.series.len().max(1) as f64).min(40.0);
        for (ci, cat) in self.categories.iter().enumerate() {
            let x0 = LEFT + slot * ci as f64 + (slot - bw * self.series.len() as f64) / 2.0;
            let _ = write!(
                out,
                r#"<text transform="translate({tx:.1},{ty}) rotate(-30)" text-anchor="end" font-size="10">{l}</text>"#,
                tx = LEFT + slot * (ci as f64 + 0.5),
                ty = H - BOTTOM + 12.0,
                l = escape(cat),
            );
            for (si, s) in self.series.iter().enumerate() {
                let Some(v) = s.values.get(ci).copied().flatten() else {
                    continue;
                };
                let c = palette.of(&s.name, si);
                let bx = x0 + bw * si as f64;
                let (top, base) = (y.at(v), y.at(0.0));
                let _ = write!(
                    out,
                    r#"<rect class="mark" x="{bx:.1}" y="{top:.1}" width="{w:.1}" height="{h:.1}" fill="{c}"><title>{n} {cat}: {v:.3}</title></rect>"#,
                    w = (bw - 2.0).max(1.0),
                    h = (base - top).max(0.5),
                    n = escape(&s.name),
                    cat = escape(cat),
                );
                if let Some((lo, hi)) = s.intervals.get(ci).copied().flatten() {
                    let mx = bx + (bw - 2.0) / 2.0;
                    let _ = write!(
                        out,
                        r##"<path d="M{mx:.1},{a:.1} L{mx:.1},{b:.1} M{l:.1},{a:.1} L{r:.1},{a:.1} M{l:.1},{b:.1} L{r:.1},{b:.1}" stroke="#222" fill="none"/>"##,
                        a = y.at(lo),
                        b = y.at(hi),
                        l = mx - 3.0,
                        r = mx + 3.0,
                    );
                }
            }
        }
        if let Some(r) = self.reference {
            let py = y.at(r);
            let _ = write!(
                out,
                r##"<line x1="{LEFT}" x2="{x2}" y1="{py:.1}" y2="{py:.1}" stroke="#000" stroke-dasharray="4 3"/>"##,
                x2 = W - RIGHT
            );
        }
        let names: Vec<&str> = self.series.iter().map(|s| s.name.as_str()).collect();
        legend(&mut out, &names, palette);
        out + "</svg>"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_and_marks() {
        let s = Scale::new(0.0, 93.0, false, 100.0, 0.0);
        assert_eq!((s.lo, s.hi), (0.0, 100.0));
        assert_eq!(s.at(50.0), 50.0);
        let l = Scale::new(3.0, 4200.0, true, 0.0, 4.0);
        assert_eq!((l.lo, l.hi), (1.0, 10000.0));
        assert_eq!(l.ticks(), vec![1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert_eq!(short(1_250_000.0), "1.25M");
        assert_eq!(short(35_000.0), "35K");
        let chart = LineChart {
            title: "a<b".into(),
            x_label: "clients".into(),
            y_label: "ops/s".into(),
            lines: vec![Line {
                name: "x".into(),
                points: vec![(1.0, 10.0), (2.0, 18.0)],
            }],
            log_y: false,
            x_names: vec![],
        }
        .svg();
        assert!(chart.contains("a&lt;b") && chart.matches("class=\"mark\"").count() == 3);
    }
}
