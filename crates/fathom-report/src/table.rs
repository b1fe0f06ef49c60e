//! A table of strings rendered as aligned text, Markdown or CSV, so every report is built once
//! and printed in every format.

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.header.len());
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].len())
                    .chain([self.header[c].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Columns aligned with spaces: numbers right, the first and last (labels) left.
    pub fn text(&self) -> String {
        let w = self.widths();
        let last = self.header.len().saturating_sub(1);
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 || i == last {
                        format!("{c:<width$}", width = w[i])
                    } else {
                        format!("{c:>width$}", width = w[i])
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.header) + "\n";
        for r in &self.rows {
            out += &(line(r) + "\n");
        }
        out
    }

    pub fn markdown(&self) -> String {
        let row = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut out = row(&self.header);
        out += &format!("|{}\n", "---|".repeat(self.header.len()));
        for r in &self.rows {
            out += &row(r);
        }
        out
    }

    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        for record in std::iter::once(&self.header).chain(&self.rows) {
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

/// `num` of an optional figure; `-` where it is unknown.
pub fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), num)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let mut t = Table::new(&["step", "ops/s", "setup"]);
        t.push(vec!["fillseq".into(), "12345".into(), "a,b".into()]);
        assert_eq!(t.text(), "step     ops/s  setup\nfillseq  12345  a,b\n");
        assert_eq!(
            t.markdown(),
            "| step | ops/s | setup |\n|---|---|---|\n| fillseq | 12345 | a,b |\n"
        );
        assert_eq!(t.csv(), "step,ops/s,setup\nfillseq,12345,\"a,b\"\n");
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
        assert_eq!(opt(None), "-");
    }
}
