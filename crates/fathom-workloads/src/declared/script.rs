//! SQL scripts as pgbench writes them: `\set NAME EXPRESSION` lines and SQL statements ending
//! in `;` whose `:NAME`s are bound from the variables; and the expressions, which tables'
//! column values use too (integers, `+ - * / %`, parentheses, `'text'`, `null`, and pgbench's
//! functions `random`, `random_gaussian`, `random_exponential`, `abs`, `least`, `greatest`;
//! and sysbench's `sysbench_special`, `sysbench_gaussian`, `sysbench_pareto` and
//! `random_string`, drawn by the sysbench workload's own code).

use crate::sysbench::rand as sb;
use rand::rngs::SmallRng;
use rand::Rng;

/// A value an expression gives.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(i64),
    Text(String),
    Null,
    /// SQL's `DEFAULT`: a table's column value the server fills (an auto-increment id).
    Default,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(i64),
    Text(String),
    Null,
    Default,
    /// A variable, by its slot among the script's variables.
    Var(usize),
    Neg(Box<Expr>),
    Bin(u8, Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Func {
    Random,
    Gaussian,
    Exponential,
    Abs,
    Least,
    Greatest,
    /// sysbench 1.0.20's distributions over [lo, hi], with its default options.
    SbSpecial,
    SbGaussian,
    SbPareto,
    /// `sysbench.rand.string(template)`: `#` a digit, `@` a letter.
    RandomString,
}

/// Variables by name; an expression refers to them by slot.
#[derive(Clone, Debug, Default)]
pub struct Names(pub Vec<String>);

impl Names {
    /// The variable's slot, if an expression names it.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|n| n == name)
    }

    pub fn slot(&mut self, name: &str) -> usize {
        match self.0.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.0.push(name.to_string());
                self.0.len() - 1
            }
        }
    }
}

/// One command of a script.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Set(usize, Expr),
    /// A statement with `?` where its variables go, and their slots in order.
    Sql {
        text: String,
        args: Vec<usize>,
    },
}

/// What reads a statement as: a read (it returns rows), a write, or other (BEGIN, END).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Read,
    Write,
    Other,
}

impl Command {
    pub fn class(&self) -> Option<Class> {
        let Command::Sql { text, .. } = self else {
            return None;
        };
        let first = text
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        Some(match first.as_str() {
            "SELECT" | "WITH" | "VALUES" | "SHOW" => Class::Read,
            "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "MERGE" | "COPY" => Class::Write,
            _ => Class::Other,
        })
    }
}

/// Parses a script; an error names the script's line (from 1).
pub fn parse(text: &str, names: &mut Names) -> Result<Vec<Command>, (usize, String)> {
    let mut out = Vec::new();
    let mut sql = String::new();
    let mut sql_line = 0;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim();
        if sql.is_empty() && (trimmed.is_empty() || trimmed.starts_with("--")) {
            continue;
        }
        if sql.is_empty() && trimmed.starts_with('\\') {
            let rest = trimmed.strip_prefix("\\set").ok_or_else(|| {
                (
                    n,
                    format!("`{trimmed}`: of the meta-commands only \\set is known"),
                )
            })?;
            let rest = rest.trim();
            let (name, expr) = rest.split_once(char::is_whitespace).ok_or_else(|| {
                (
                    n,
                    "\\set NAME EXPRESSION: a name and an expression".to_string(),
                )
            })?;
            let slot = names.slot(name);
            let expr = parse_expr(expr, names).map_err(|e| (n, e))?;
            out.push(Command::Set(slot, expr));
            continue;
        }
        if sql.is_empty() {
            sql_line = n;
        } else {
            sql.push(' ');
        }
        sql.push_str(trimmed);
        if let Some(done) = sql.strip_suffix(';') {
            out.push(statement(done.trim(), names).map_err(|e| (sql_line, e))?);
            sql.clear();
        }
    }
    if !sql.is_empty() {
        return Err((sql_line, "a statement without its closing `;`".into()));
    }
    if !out.iter().any(|c| matches!(c, Command::Sql { .. })) {
        return Err((1, "at least one SQL statement".into()));
    }
    Ok(out)
}

/// A statement's `:name`s replaced by `?` (a `::` cast and quoted text left alone).
fn statement(sql: &str, names: &mut Names) -> Result<Command, String> {
    let b = sql.as_bytes();
    let (mut text, mut args, mut i, mut quoted) = (String::new(), Vec::new(), 0, false);
    while i < b.len() {
        let c = b[i] as char;
        if c == '\'' {
            quoted = !quoted;
        }
        let next = b.get(i + 1).map(|x| *x as char);
        if !quoted && c == ':' && next == Some(':') {
            text.push_str("::");
            i += 2;
            continue;
        }
        if !quoted && c == ':' && next.is_some_and(|x| x.is_ascii_alphabetic() || x == '_') {
            let end = (i + 1..b.len())
                .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_'))
                .unwrap_or(b.len());
            args.push(names.slot(&sql[i + 1..end]));
            text.push('?');
            i = end;
            continue;
        }
        if c == '?' && !quoted {
            return Err("a `?` in a statement: write a :variable".into());
        }
        text.push(c);
        i += 1;
    }
    Ok(Command::Sql { text, args })
}

/// Parses an expression.
pub fn parse_expr(text: &str, names: &mut Names) -> Result<Expr, String> {
    let tokens = tokenize(text)?;
    let mut p = Parser {
        t: &tokens,
        at: 0,
        names,
    };
    let e = p.sum()?;
    if p.at < tokens.len() {
        return Err(format!("`{text}`: unexpected `{}`", tokens[p.at]));
    }
    Ok(e)
}

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
            let mut t = String::new();
            while let Some(&c) = chars.peek() {
                if !(c.is_ascii_alphanumeric() || c == '_' || (c == ':' && t.is_empty())) {
                    break;
                }
                t.push(c);
                chars.next();
            }
            out.push(t);
        } else if c == '\'' {
            chars.next();
            let mut t = String::from("'");
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some(c) => t.push(c),
                    None => return Err(format!("`{text}`: a string without its closing '")),
                }
            }
            out.push(t);
        } else if "+-*/%(),".contains(c) {
            out.push(c.to_string());
            chars.next();
        } else {
            return Err(format!("`{text}`: unexpected `{c}`"));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    t: &'a [String],
    at: usize,
    names: &'a mut Names,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.t.get(self.at).map(String::as_str)
    }

    fn take(&mut self, want: &str) -> Result<(), String> {
        match self.peek() {
            Some(t) if t == want => {
                self.at += 1;
                Ok(())
            }
            t => Err(format!(
                "expected `{want}`, found `{}`",
                t.unwrap_or("the end")
            )),
        }
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut e = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            let op = op.as_bytes()[0];
            self.at += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.product()?));
        }
        Ok(e)
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        while let Some(op @ ("*" | "/" | "%")) = self.peek() {
            let op = op.as_bytes()[0];
            self.at += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.peek() == Some("-") {
            self.at += 1;
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        let Some(t) = self.peek().map(str::to_string) else {
            return Err("an expression ends too soon".into());
        };
        self.at += 1;
        if t == "(" {
            let e = self.sum()?;
            self.take(")")?;
            return Ok(e);
        }
        if let Some(s) = t.strip_prefix('\'') {
            return Ok(Expr::Text(s.to_string()));
        }
        if let Some(name) = t.strip_prefix(':') {
            return Ok(Expr::Var(self.names.slot(name)));
        }
        if let Ok(n) = t.parse::<i64>() {
            return Ok(Expr::Int(n));
        }
        if t.eq_ignore_ascii_case("null") {
            return Ok(Expr::Null);
        }
        if t.eq_ignore_ascii_case("default") {
            return Ok(Expr::Default);
        }
        let f = match t.as_str() {
            "random" | "random_uniform" => Func::Random,
            "random_gaussian" => Func::Gaussian,
            "random_exponential" => Func::Exponential,
            "abs" => Func::Abs,
            "least" => Func::Least,
            "greatest" => Func::Greatest,
            "sysbench_special" => Func::SbSpecial,
            "sysbench_gaussian" => Func::SbGaussian,
            "sysbench_pareto" => Func::SbPareto,
            "random_string" => Func::RandomString,
            _ => {
                return Err(format!(
                    "`{t}`: a number, :variable, 'text', null, default or function"
                ))
            }
        };
        self.take("(")?;
        let mut args = vec![self.sum()?];
        while self.peek() == Some(",") {
            self.at += 1;
            args.push(self.sum()?);
        }
        self.take(")")?;
        let want = match f {
            Func::Random | Func::SbSpecial | Func::SbGaussian | Func::SbPareto => 2..=2,
            Func::RandomString => 1..=1,
            Func::Gaussian | Func::Exponential => 3..=3,
            Func::Abs => 1..=1,
            Func::Least | Func::Greatest => 1..=64,
        };
        if !want.contains(&args.len()) {
            return Err(format!(
                "`{t}` takes {want:?} arguments, {} given",
                args.len()
            ));
        }
        Ok(Expr::Call(f, args))
    }
}

impl Expr {
    /// The expression's value with `vars` set; integer arithmetic as pgbench's.
    pub fn eval(&self, vars: &[Val], rng: &mut SmallRng) -> Result<Val, String> {
        let int = |e: &Expr, rng: &mut SmallRng| match e.eval(vars, rng)? {
            Val::Int(i) => Ok(i),
            Val::Text(t) => Err(format!("'{t}' where a number goes")),
            Val::Null => Err("null where a number goes".to_string()),
            Val::Default => Err("default where a number goes".to_string()),
        };
        Ok(Val::Int(match self {
            Expr::Int(i) => *i,
            Expr::Text(t) => return Ok(Val::Text(t.clone())),
            Expr::Null => return Ok(Val::Null),
            Expr::Default => return Ok(Val::Default),
            Expr::Var(v) => return Ok(vars[*v].clone()),
            Expr::Neg(e) => -int(e, rng)?,
            Expr::Bin(op, a, b) => {
                let (a, b) = (int(a, rng)?, int(b, rng)?);
                match op {
                    b'+' => a.wrapping_add(b),
                    b'-' => a.wrapping_sub(b),
                    b'*' => a.wrapping_mul(b),
                    _ if b == 0 => return Err("division by zero".into()),
                    b'/' => a / b,
                    _ => a % b,
                }
            }
            Expr::Call(Func::RandomString, args) => {
                let Val::Text(template) = args[0].eval(vars, rng)? else {
                    return Err("random_string takes a 'template'".into());
                };
                let mut out = String::with_capacity(template.len());
                sb::fill_string(rng, &template, &mut out);
                return Ok(Val::Text(out));
            }
            Expr::Call(f, args) => {
                let ints: Vec<i64> = args.iter().map(|a| int(a, rng)).collect::<Result<_, _>>()?;
                call(*f, &ints, rng)?
            }
        }))
    }
}

/// pgbench's functions (pgbench.c's getrand, getGaussianRand, getExponentialRand).
fn call(f: Func, a: &[i64], rng: &mut SmallRng) -> Result<i64, String> {
    let range = |lo: i64, hi: i64| {
        if lo > hi {
            Err(format!("random range {lo}..{hi} is empty"))
        } else {
            Ok((hi - lo + 1) as f64)
        }
    };
    Ok(match f {
        Func::Random => {
            range(a[0], a[1])?;
            rng.gen_range(a[0]..=a[1])
        }
        Func::Gaussian => {
            let (lo, n, param) = (a[0], range(a[0], a[1])?, a[2] as f64);
            if param < 2.0 {
                return Err("random_gaussian's parameter is at least 2".into());
            }
            // Box-Muller, drawn again outside [-param, param).
            let stdev = loop {
                let (r1, r2): (f64, f64) = (1.0 - rng.gen::<f64>(), rng.gen());
                let s = (-2.0 * r1.ln()).sqrt() * (2.0 * std::f64::consts::PI * r2).sin();
                if (-param..param).contains(&s) {
                    break s;
                }
            };
            lo + (n * (stdev + param) / (2.0 * param)) as i64
        }
        Func::Exponential => {
            let (lo, n, param) = (a[0], range(a[0], a[1])?, a[2] as f64);
            if param <= 0.0 {
                return Err("random_exponential's parameter is above 0".into());
            }
            let cut = (-param).exp();
            let u = 1.0 - rng.gen::<f64>();
            lo + (n * (-(cut + (1.0 - cut) * u).ln() / param)) as i64
        }
        Func::SbSpecial | Func::SbGaussian | Func::SbPareto => {
            range(a[0], a[1])?;
            let kind = match f {
                Func::SbSpecial => sb::SPECIAL,
                Func::SbGaussian => sb::GAUSSIAN,
                _ => sb::PARETO,
            };
            sb::draw(kind, rng, a[0], a[1]).expect("stateless")
        }
        Func::RandomString => unreachable!("evaluated with its text argument"),
        Func::Abs => a[0].abs(),
        Func::Least => *a.iter().min().unwrap_or(&0),
        Func::Greatest => *a.iter().max().unwrap_or(&0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const TPCB: &str = "\\set aid random(1, 100000 * :scale)\n\\set delta random(-5000, 5000)\n\
        BEGIN;\nUPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
        SELECT abalance FROM pgbench_accounts\n  WHERE aid = :aid;\nEND;\n";

    #[test]
    fn a_pgbench_script_parses_into_sets_and_statements() {
        let mut names = Names::default();
        let script = parse(TPCB, &mut names).unwrap();
        assert_eq!(names.0, ["aid", "scale", "delta"]);
        assert_eq!(script.len(), 6);
        assert_eq!(
            script[3],
            Command::Sql {
                text: "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?".into(),
                args: vec![2, 0]
            }
        );
        assert_eq!(script[4].class(), Some(Class::Read));
        assert_eq!(script[5].class(), Some(Class::Other));
    }

    #[test]
    fn expressions_compute_as_pgbench_does() {
        let mut names = Names::default();
        let mut rng = SmallRng::seed_from_u64(1);
        let e = parse_expr("(:row - 1) / 100000 + 1", &mut names).unwrap();
        let v = e.eval(&[Val::Int(100_001)], &mut rng).unwrap();
        assert_eq!(v, Val::Int(2));
        let r = parse_expr("random(1, 10 * :scale)", &mut names).unwrap();
        let vars = [Val::Int(0), Val::Int(3)];
        for _ in 0..1000 {
            let Val::Int(x) = r.eval(&vars, &mut rng).unwrap() else {
                panic!()
            };
            assert!((1..=30).contains(&x));
        }
        let g = parse_expr("random_gaussian(1, 100, 5)", &mut names).unwrap();
        let mean: f64 = (0..10_000)
            .map(|_| match g.eval(&vars, &mut rng).unwrap() {
                Val::Int(x) => x as f64,
                _ => 0.0,
            })
            .sum::<f64>()
            / 10_000.0;
        assert!((48.0..53.0).contains(&mean), "{mean}");
    }

    /// sysbench's distributions come from the sysbench workload's own code: special puts
    /// three draws in four in the middle 1% of the range, pareto 80% in the first 20%.
    #[test]
    fn sysbench_functions_draw_as_sysbench_does() {
        let mut names = Names::default();
        let mut rng = SmallRng::seed_from_u64(2);
        let mut share = |text: &str, within: std::ops::Range<i64>| {
            let e = parse_expr(text, &mut names).unwrap();
            let n = 20_000;
            let hits = (0..n)
                .filter(|_| match e.eval(&[], &mut rng).unwrap() {
                    Val::Int(x) => {
                        assert!((1..=10_000).contains(&x), "{text}: {x}");
                        within.contains(&x)
                    }
                    v => panic!("{v:?}"),
                })
                .count();
            hits as f64 / n as f64
        };
        let special = share("sysbench_special(1, 10000)", 4950..5051);
        assert!((0.74..0.80).contains(&special), "{special}");
        let pareto = share("sysbench_pareto(1, 10000)", 1..2001);
        assert!((0.78..0.82).contains(&pareto), "{pareto}");
        let gaussian = share("sysbench_gaussian(1, 10000)", 4000..6001);
        // The mean of twelve uniforms: within 1.2 standard deviations of the middle.
        assert!((0.72..0.82).contains(&gaussian), "{gaussian}");
        let s = parse_expr("random_string('##-@@')", &mut names).unwrap();
        let Val::Text(t) = s.eval(&[], &mut rng).unwrap() else {
            panic!()
        };
        let b = t.as_bytes();
        assert!(b.len() == 5 && b[2] == b'-', "{t}");
        assert!(b[..2].iter().all(u8::is_ascii_digit), "{t}");
        assert!(b[3..].iter().all(u8::is_ascii_lowercase), "{t}");
        let d = parse_expr("DEFAULT", &mut names).unwrap();
        assert_eq!(d.eval(&[], &mut rng).unwrap(), Val::Default);
    }

    #[test]
    fn bad_scripts_name_their_line() {
        let mut names = Names::default();
        for (text, line, wanted) in [
            ("\\sleep 1\nSELECT 1;", 1, "only \\set"),
            ("SELECT 1;\n\\set x random(1)", 2, "takes 2..=2 arguments"),
            ("SELECT 1;\nSELECT\n 2", 2, "closing `;`"),
            ("\\set x 1 +", 1, "ends too soon"),
            ("\\set x 1", 1, "at least one SQL statement"),
            ("SELECT ? ;", 1, "write a :variable"),
            ("\\set x foo(1)", 1, "`foo`"),
            ("\\set x sysbench_special(1)", 1, "takes 2..=2"),
        ] {
            let (n, e) = parse(text, &mut names).unwrap_err();
            assert_eq!(n, line, "{text}: {e}");
            assert!(e.contains(wanted), "{text}: {e}");
        }
    }
}
