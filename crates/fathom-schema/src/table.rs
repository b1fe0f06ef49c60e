//! A report's tables hold typed cells (numbers with the precision they print at, text, the
//! unknown), so every format renders one table: aligned text, Markdown and CSV print each cell
//! as the seeds do, JSON gives numbers as numbers, and the page gives real table cells.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::fmt;

/// How a number prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Precision that suits its size: 12345, 123.4, 1.234, 0.012.
    Auto,
    /// A fixed number of decimals.
    Fixed(u8),
    /// Operations per second as the seeds print them: whole; below 10 with decimals, so a slow
    /// step (a few requests a second, one check in minutes) does not read as none.
    Rate,
    /// Gibibytes with a `G` after them (resident memory).
    Gib,
    /// Seconds, one decimal (a step's length).
    Seconds,
    /// A percentage, one decimal, without the sign (vmstat's us+sy).
    Percent,
    /// A spread given as a fraction (a coefficient of variation), as `±x%`: one decimal
    /// below 10%.
    Spread,
}

impl Style {
    fn format(self, x: f64) -> String {
        match self {
            Style::Auto => num(x),
            Style::Fixed(d) => format!("{x:.*}", d as usize),
            Style::Rate => rate(x),
            Style::Gib => format!("{}G", num(x)),
            Style::Seconds | Style::Percent => format!("{x:.1}"),
            Style::Spread if x < 0.1 => format!("±{:.1}%", x * 100.0),
            Style::Spread => format!("±{:.0}%", x * 100.0),
        }
    }
}

/// One cell of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Unknown or not applicable: `-` in text, null in JSON.
    Missing,
    Text(String),
    Number(f64, Style),
    /// Text that the page links to an anchor of its own (a profiled step's flame graph);
    /// other formats print the text alone.
    Link(String, String),
    /// Two numbers read together: `a/b` (GiB allocated/apparent, runs base/new) or `a-b` (an
    /// interval); a two-element array in JSON.
    Pair(f64, f64, Style, char),
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// A number at the precision that suits its size.
    pub fn num(x: f64) -> Cell {
        Cell::Number(x, Style::Auto)
    }

    /// `num` of a figure that may be unknown.
    pub fn opt(x: Option<f64>) -> Cell {
        Cell::styled(x, Style::Auto)
    }

    /// A figure that may be unknown, printed with `decimals`.
    pub fn fixed(x: Option<f64>, decimals: u8) -> Cell {
        Cell::styled(x, Style::Fixed(decimals))
    }

    pub fn styled(x: Option<f64>, style: Style) -> Cell {
        x.map_or(Cell::Missing, |v| Cell::Number(v, style))
    }

    /// A count: whole.
    pub fn count(n: impl Into<f64>) -> Cell {
        Cell::Number(n.into(), Style::Fixed(0))
    }

    /// A database's size in GiB, allocated/apparent.
    pub fn db_gb(d: &crate::result::DbGb) -> Cell {
        Cell::Pair(d.allocated, d.apparent, Style::Auto, '/')
    }

    /// True for cells that print as numbers (right-aligned).
    pub fn is_numeric(&self) -> bool {
        !matches!(self, Cell::Text(_) | Cell::Link(..))
    }

    /// The cell as JSON: a number, a string, null or a pair of numbers.
    pub fn json(&self) -> serde_json::Value {
        use serde_json::Value;
        let number = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
        match self {
            Cell::Missing => Value::Null,
            Cell::Text(s) | Cell::Link(s, _) => Value::String(s.clone()),
            Cell::Number(x, _) => number(*x),
            Cell::Pair(a, b, _, _) => Value::Array(vec![number(*a), number(*b)]),
        }
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Missing => f.write_str("-"),
            Cell::Text(s) | Cell::Link(s, _) => f.write_str(s),
            Cell::Number(x, style) => f.write_str(&style.format(*x)),
            Cell::Pair(a, b, style, sep) => {
                write!(f, "{}{sep}{}", style.format(*a), style.format(*b))
            }
        }
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::text(s)
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}

/// A table with the title reports print above it.
#[derive(Clone, Debug, Serialize)]
pub struct Titled {
    pub title: String,
    #[serde(flatten)]
    pub table: Table,
}

/// A table: a header and rows of cells. `over` names what the numeric columns' headers are
/// (the sweep's `clients`): the text formats print it where the seeds do, over the label
/// column; the page prints it over the numeric columns.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub over: Option<String>,
}

impl Serialize for Table {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rows: Vec<Vec<serde_json::Value>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(Cell::json).collect())
            .collect();
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("header", &self.header)?;
        if let Some(over) = &self.over {
            m.serialize_entry("columns_are", over)?;
        }
        m.serialize_entry("rows", &rows)?;
        m.end()
    }
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            over: None,
        }
    }

    /// The table without the columns named `names`.
    /// The table without the columns `Missing` in every row (the step table's spread with one
    /// repeat, a figure no setup has), the first column kept; a table without rows is whole.
    pub fn without_missing(&self) -> Table {
        let missing: Vec<&str> = (self.header.iter().enumerate().skip(1))
            .filter(|(i, _)| {
                !self.rows.is_empty()
                    && self
                        .rows
                        .iter()
                        .all(|r| matches!(r.get(*i), Some(Cell::Missing)))
            })
            .map(|(_, h)| h.as_str())
            .collect();
        self.without(&missing)
    }

    pub fn without(&self, names: &[&str]) -> Table {
        let keep: Vec<bool> = (self.header.iter())
            .map(|h| !names.contains(&h.as_str()))
            .collect();
        fn kept<T: Clone>(row: &[T], keep: &[bool]) -> Vec<T> {
            (row.iter().zip(keep))
                .filter(|(_, k)| **k)
                .map(|(c, _)| c.clone())
                .collect()
        }
        Table {
            header: kept(&self.header, &keep),
            rows: self.rows.iter().map(|r| kept(r, &keep)).collect(),
            over: self.over.clone(),
        }
    }

    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.header.len());
        self.rows.push(row);
    }

    /// The header as the text formats print it: `over` in place of the last (label) column's
    /// name, as seed 003's `8 16 32 40 clients`.
    pub fn text_header(&self) -> Vec<String> {
        let mut h = self.header.clone();
        if let (Some(over), Some(last)) = (&self.over, h.last_mut()) {
            *last = over.clone();
        }
        h
    }

    /// Per column, whether it holds numbers (some number, and no text): right-aligned where it
    /// does. Computed once per rendering.
    pub fn numeric_columns(&self) -> Vec<bool> {
        (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .any(|r| matches!(r[c], Cell::Number(..) | Cell::Pair(..)))
                    && self.rows.iter().all(|r| r[c].is_numeric())
            })
            .collect()
    }

    fn cells(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|r| r.iter().map(Cell::to_string).collect())
            .collect()
    }

    /// Columns aligned with spaces: numbers right, text left.
    pub fn text(&self) -> String {
        let header = self.text_header();
        let cells = self.cells();
        let width = |c: usize| {
            cells
                .iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..header.len()).map(width).collect();
        let right = self.numeric_columns();
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = " ".repeat(widths[i].saturating_sub(c.chars().count()));
                    if right[i] {
                        format!("{pad}{c}")
                    } else {
                        format!("{c}{pad}")
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&header) + "\n";
        for r in &cells {
            out += &(line(r) + "\n");
        }
        out
    }

    pub fn markdown(&self) -> String {
        let header = self.text_header();
        let row = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut out = row(&header);
        let rule: String = self
            .numeric_columns()
            .into_iter()
            .map(|n| if n { "---:|" } else { "---|" })
            .collect();
        out += &format!("|{rule}\n");
        for r in &self.cells() {
            out += &row(r);
        }
        out
    }

    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        for record in std::iter::once(&self.header).chain(&self.cells()) {
            w.write_record(record)
                .expect("writing CSV to memory cannot fail");
        }
        let bytes = w.into_inner().expect("flushing CSV to memory cannot fail");
        String::from_utf8(bytes).expect("the cells are UTF-8")
    }
}

/// A number with precision that suits its size: 12345, 123.4, 1.234, 0.012.
pub fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a == 0.0 {
        "0".to_string()
    } else {
        format!("{x:.3}")
    }
}

/// Operations per second: whole, below 10 with decimals.
pub fn rate(x: f64) -> String {
    if x >= 9.95 || x <= 0.0 {
        format!("{x:.0}")
    } else if x >= 0.095 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new(&["step", "ops/s", "p50", "setup"]);
        t.push(vec![
            "fillseq".into(),
            Cell::Number(12345.4, Style::Rate),
            Cell::Missing,
            "a,b".into(),
        ]);
        t.push(vec![
            "readrandom".into(),
            Cell::Number(0.4, Style::Rate),
            Cell::num(2.3161),
            "c".into(),
        ]);
        t
    }

    #[test]
    fn a_column_missing_in_every_row_is_left_out() {
        let mut t = table();
        assert_eq!(t.without_missing().header, t.header, "p50 has a value");
        t.rows[1][2] = Cell::Missing;
        assert_eq!(t.without_missing().header, ["step", "ops/s", "setup"]);
        assert_eq!(Table::new(&["step", "x"]).without_missing().header.len(), 2);
    }

    #[test]
    fn text_formats_align_numbers_right_and_text_left() {
        let t = table();
        assert_eq!(
            t.text(),
            "step        ops/s   p50  setup\n\
             fillseq     12345     -  a,b\n\
             readrandom    0.4  2.32  c\n"
        );
        assert_eq!(
            t.markdown(),
            "| step | ops/s | p50 | setup |\n|---|---:|---:|---|\n| fillseq | 12345 | - | a,b |\n| readrandom | 0.4 | 2.32 | c |\n"
        );
        assert_eq!(
            t.csv(),
            "step,ops/s,p50,setup\nfillseq,12345,-,\"a,b\"\nreadrandom,0.4,2.32,c\n"
        );
    }

    #[test]
    fn json_has_numbers_nulls_and_pairs() {
        let mut t = table();
        t.header.push("db.gb".into());
        t.rows[0].push(Cell::Pair(0.5, 0.75, Style::Auto, '/'));
        t.rows[1].push(Cell::Missing);
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(
            v["rows"][0],
            serde_json::json!(["fillseq", 12345.4, null, "a,b", [0.5, 0.75]])
        );
        assert_eq!(t.rows[0][4].to_string(), "0.500/0.750");
    }

    /// The sweep's layout: client counts over numbers, `clients` over the setups in text.
    #[test]
    fn a_caption_over_the_numbers() {
        let mut t = Table::new(&["1", "16", "setup"]);
        t.over = Some("clients".into());
        t.push(vec![Cell::count(9.0), Cell::count(120.0), "a".into()]);
        assert_eq!(t.text(), "1   16  clients\n9  120  a\n");
        assert_eq!(serde_json::to_value(&t).unwrap()["columns_are"], "clients");
    }

    #[test]
    fn numbers() {
        for (v, text) in [
            (51416.4, "51416"),
            (2.3161, "2.32"),
            (0.01634, "0.016"),
            (0.0, "0"),
        ] {
            assert_eq!(num(v), text);
        }
        assert_eq!(Cell::opt(None).to_string(), "-");
        assert_eq!(rate(12345.6), "12346");
        assert_eq!(rate(10.0), "10");
        assert_eq!(rate(0.4), "0.4");
        assert_eq!(rate(0.0056), "0.006");
        assert_eq!(rate(0.0), "0");
    }
}
