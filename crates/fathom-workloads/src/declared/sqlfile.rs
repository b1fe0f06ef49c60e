//! The SQL parts of a workload file: `[[table]]`s its load creates and fills (columns, a row
//! count and each column's value as expressions of the row's number and the file's `[vars]`),
//! and a phase's `[[phase.script]]`s, pgbench scripts with weights. Read and checked with the
//! rest of the file; an error names the line in the file, inside a script too.

use super::script::{self, Command, Expr, Names};
use serde::Deserialize;
use toml::Spanned;

/// Scripts a phase may have.
pub const MOST_SCRIPTS: usize = 8;

/// A table the load makes and fills.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableDef {
    pub name: Spanned<String>,
    /// Column definitions as the SQL writes them (`aid int not null`).
    pub columns: Spanned<Vec<String>>,
    /// How many rows: an expression of the file's variables (`100000 * :scale`).
    pub rows: Spanned<String>,
    /// Each column's value in row `:row` (from 1): expressions, `'text'` for text.
    pub values: Spanned<Vec<String>>,
    /// The primary key's columns (`aid`).
    #[serde(default)]
    pub primary_key: Option<String>,
    /// PostgreSQL's fill factor for the table (`WITH (fillfactor=N)`); MariaDB has none.
    #[serde(default)]
    pub fillfactor: Option<Spanned<u64>>,
    /// Statements run once the rows are in, before the analyze (sysbench's
    /// `CREATE INDEX k_1 ON sbtest1(k)`).
    #[serde(default)]
    pub after_load: Vec<String>,
    #[serde(skip)]
    pub rows_expr: Option<Expr>,
    #[serde(skip)]
    pub value_exprs: Vec<Expr>,
}

/// A script of a phase, run as one operation, chosen by its weight.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptDef {
    pub name: Spanned<String>,
    #[serde(default = "one")]
    pub weight: Spanned<f64>,
    /// pgbench's script syntax: `\set NAME EXPRESSION` lines and statements ending in `;`.
    pub text: Spanned<String>,
    /// How the original client sent the statements, what `statements=original` does: as text
    /// with the values written in (pgbench's `-M simple`, sysbench's `con:query`) or prepared
    /// (sysbench's `con:prepare`).
    #[serde(default)]
    pub statements: SentAs,
    #[serde(skip)]
    pub commands: Vec<Command>,
}

/// How a script's original client sent its statements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SentAs {
    #[default]
    Text,
    Prepared,
}

fn one() -> Spanned<f64> {
    Spanned::new(0..0, 1.0)
}

/// Where an error is: a byte offset in the file and lines below it (inside a script).
pub struct At {
    pub offset: usize,
    pub lines_below: usize,
}

/// A refusal: where, which key, what was expected.
pub type Refused = (Option<At>, String, String);

fn at<T>(s: &Spanned<T>) -> Option<At> {
    let span = s.span();
    (span.end > 0).then_some(At {
        offset: span.start,
        lines_below: 0,
    })
}

/// Checks the tables: names, columns, row counts and values parse, one value per column.
pub fn check_tables(tables: &mut [TableDef], names: &mut Names) -> Result<(), Refused> {
    names.slot("row");
    let mut seen: Vec<String> = Vec::new();
    for (i, t) in tables.iter_mut().enumerate() {
        let key = |k: &str| format!("table[{}].{k}", i + 1);
        let name = t.name.get_ref();
        if name.is_empty() || seen.contains(name) || !name.chars().all(is_ident) {
            let what = "a table name (letters, digits, _) no other table has";
            return Err((at(&t.name), key("name"), what.into()));
        }
        seen.push(name.clone());
        if t.columns.get_ref().is_empty() {
            return Err((at(&t.columns), key("columns"), "at least one column".into()));
        }
        let rows = script::parse_expr(t.rows.get_ref(), names)
            .map_err(|e| (at(&t.rows), key("rows"), e))?;
        t.rows_expr = Some(rows);
        let (columns, values) = (t.columns.get_ref().len(), t.values.get_ref().len());
        if values != columns {
            let what = format!("one value per column: {columns} columns, {values} values");
            return Err((at(&t.values), key("values"), what));
        }
        t.value_exprs = (t.values.get_ref().iter())
            .map(|v| script::parse_expr(v, names))
            .collect::<Result<_, _>>()
            .map_err(|e| (at(&t.values), key("values"), e))?;
        if let Some(f) = t
            .fillfactor
            .as_ref()
            .filter(|f| !(10..=100).contains(f.get_ref()))
        {
            return Err((
                at(f),
                key("fillfactor"),
                "a fill factor from 10 to 100".into(),
            ));
        }
    }
    Ok(())
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Checks phase `i`'s scripts: names, weights, and each script's text.
pub fn check_scripts(
    i: usize,
    scripts: &mut [ScriptDef],
    text: &str,
    names: &mut Names,
) -> Result<(), Refused> {
    let mut seen: Vec<String> = Vec::new();
    if scripts.len() > MOST_SCRIPTS {
        let what = format!("at most {} scripts", MOST_SCRIPTS);
        return Err((
            at(&scripts[0].name),
            format!("phase[{}].script", i + 1),
            what,
        ));
    }
    for (j, s) in scripts.iter_mut().enumerate() {
        let key = |k: &str| format!("phase[{}].script[{}].{k}", i + 1, j + 1);
        let name = s.name.get_ref();
        if name.is_empty() || seen.contains(name) {
            return Err((
                at(&s.name),
                key("name"),
                "a name no other script has".into(),
            ));
        }
        seen.push(name.clone());
        let w = *s.weight.get_ref();
        if !(w.is_finite() && w >= 0.0) {
            return Err((at(&s.weight), key("weight"), "a weight of 0 or more".into()));
        }
        s.commands = script::parse(s.text.get_ref(), names).map_err(|(line, what)| {
            // A multi-line string's text starts on the line after its opening quotes.
            let start = s.text.span().start;
            let opens_block = text[start.min(text.len())..]
                .split('\n')
                .next()
                .is_some_and(|l| l.trim() == "\"\"\"" || l.trim() == "'''");
            let below = line - 1 + usize::from(opens_block);
            let place = at(&s.text).map(|a| At {
                lines_below: below,
                ..a
            });
            (place, key("text"), what)
        })?;
    }
    if scripts.iter().all(|s| *s.weight.get_ref() == 0.0) {
        let what = "at least one script with a weight above 0";
        return Err((
            at(&scripts[0].weight),
            format!("phase[{}].script", i + 1),
            what.into(),
        ));
    }
    Ok(())
}
