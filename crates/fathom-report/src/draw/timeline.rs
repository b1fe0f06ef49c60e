//! The tail's chart: a step's latency over time (its lines), what the engine did meanwhile as
//! shaded bands (a flush, a compaction, writes stopped) and the step's slowest operations as
//! points where they ended, each with a tooltip — the picture of "Why the slowest operations
//! were slow".

use super::svg::{
    escape, frame, legend_of, short, Line, LineChart, Palette, BOTTOM, H, LEFT, RIGHT, TOP, W,
};
use std::fmt::Write;

/// Something the engine did, from `from` to `to` on the chart's x axis.
pub struct Band {
    pub from: f64,
    pub to: f64,
    /// Its kind (`compaction`): bands of one kind share a colour and a legend entry.
    pub what: String,
    /// Its tooltip.
    pub note: String,
}

/// One slow operation: where it ended, its latency, its tooltip.
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub note: String,
}

pub struct Timeline {
    /// The lines, axes and title (`log_y` for latency).
    pub chart: LineChart,
    pub bands: Vec<Band>,
    pub marks: Vec<Mark>,
}

/// A kind of event's colour: stops and stalls warm, background work cool.
fn band_colour(what: &str) -> &'static str {
    match what {
        "write stop" => "#d62728",
        "write stall" => "#ff7f0e",
        "lock wait" => "#e377c2",
        "flush" => "#17becf",
        "compaction" => "#7f7f7f",
        "checkpoint" => "#9467bd",
        "eviction" => "#bcbd22",
        "purge" => "#8c564b",
        _ => "#2ca02c",
    }
}

const MARK_COLOUR: &str = "#000000";

impl Timeline {
    /// The chart, each line's colour from `palette`.
    pub fn svg_in(&self, palette: Palette) -> String {
        // The scales hold the lines, the marks and the bands' ends.
        let mut all: Vec<(f64, f64)> = self
            .chart
            .lines
            .iter()
            .flat_map(|l| l.points.clone())
            .collect();
        all.extend(self.marks.iter().map(|m| (m.x, m.y)));
        let bounds = LineChart {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            lines: vec![Line {
                name: String::new(),
                points: all,
            }],
            log_y: self.chart.log_y,
            x_names: Vec::new(),
        };
        let (x, y) = bounds.scales();
        let c = &self.chart;
        let mut out = String::new();
        frame(&mut out, &c.title, &c.y_label, &c.x_label, &y);
        let (x_lo, x_hi) = (LEFT, W - RIGHT);
        for b in &self.bands {
            let (a, z) = (x.at(b.from).max(x_lo), x.at(b.to).min(x_hi));
            if z <= a {
                continue;
            }
            let _ = write!(
                out,
                r#"<rect x="{a:.1}" y="{TOP}" width="{w:.1}" height="{h}" fill="{col}" fill-opacity="0.22"><title>{t}</title></rect>"#,
                w = (z - a).max(0.8),
                h = H - BOTTOM - TOP,
                col = band_colour(&b.what),
                t = escape(&b.note),
            );
        }
        c.x_ticks(&mut out, &x);
        for (i, line) in c.lines.iter().enumerate() {
            LineChart::line(&mut out, line, palette.of(&line.name, i), &x, &y);
        }
        for m in &self.marks {
            let _ = write!(
                out,
                r#"<circle class="mark" cx="{:.1}" cy="{:.1}" r="3.2" fill="none" stroke="{MARK_COLOUR}" stroke-width="1.4"><title>{} ({})</title></circle>"#,
                x.at(m.x),
                y.at(m.y),
                escape(&m.note),
                short(m.y),
            );
        }
        let mut kinds: Vec<&str> = self.bands.iter().map(|b| b.what.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let mut entries: Vec<(&str, &str)> = (c.lines.iter().enumerate())
            .map(|(i, l)| (l.name.as_str(), palette.of(&l.name, i)))
            .collect();
        entries.extend(kinds.iter().map(|k| (*k, band_colour(k))));
        if !self.marks.is_empty() {
            entries.push(("slowest operations", MARK_COLOUR));
        }
        legend_of(&mut out, &entries);
        out + "</svg>"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A band per event inside the axes (one outside left out), a point per slow operation,
    /// and a legend entry for each line, each kind of event and the points.
    #[test]
    fn draws_bands_marks_and_their_legend() {
        let t = Timeline {
            chart: LineChart {
                title: "overwrite".into(),
                x_label: "s".into(),
                y_label: "µs".into(),
                lines: vec![Line {
                    name: "p99".into(),
                    points: vec![(1.0, 30.0), (2.0, 35.0), (3.0, 28.0)],
                }],
                log_y: true,
                x_names: Vec::new(),
            },
            bands: vec![
                Band {
                    from: 1.2,
                    to: 1.9,
                    what: "write stop".into(),
                    note: "write stop: we have 4 level-0 files".into(),
                },
                Band {
                    from: 2.1,
                    to: 2.2,
                    what: "flush".into(),
                    note: "flush: 1.0 MiB".into(),
                },
                Band {
                    from: -50.0,
                    to: -40.0,
                    what: "flush".into(),
                    note: "before the window".into(),
                },
            ],
            marks: vec![Mark {
                x: 1.9,
                y: 240_000.0,
                note: "put, client 0: 240 ms".into(),
            }],
        };
        let svg = t.svg_in(Palette::default());
        assert_eq!(svg.matches("fill-opacity").count(), 2, "{svg}");
        assert!(svg.contains("<title>write stop: we have 4 level-0 files</title>"));
        assert!(svg.contains("put, client 0: 240 ms"));
        for name in ["p99", "flush", "write stop", "slowest operations"] {
            assert!(svg.contains(&format!(">{name}</text>")), "{name}: {svg}");
        }
    }
}
