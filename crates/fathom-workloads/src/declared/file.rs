//! A workload file (TOML), read and checked before anything runs: its data, an optional load
//! phase and its run phases, each with its mix and key distribution. Every key is YCSB's
//! property under a name that says what it holds (docs/declared.md maps them); an unknown key,
//! a wrong type or a value out of range is refused naming the file, the line and the key.

use crate::params::Span;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The workload files fathom ships (`workloads/` in the repository), by the name `--workload`
/// takes for them.
pub const BUNDLED: &[(&str, &str)] = &[
    (
        "ycsb/workloada",
        include_str!("../../../../workloads/ycsb/workloada.toml"),
    ),
    (
        "ycsb/workloadb",
        include_str!("../../../../workloads/ycsb/workloadb.toml"),
    ),
    (
        "ycsb/workloadc",
        include_str!("../../../../workloads/ycsb/workloadc.toml"),
    ),
    (
        "ycsb/workloadd",
        include_str!("../../../../workloads/ycsb/workloadd.toml"),
    ),
    (
        "ycsb/workloade",
        include_str!("../../../../workloads/ycsb/workloade.toml"),
    ),
    (
        "ycsb/workloadf",
        include_str!("../../../../workloads/ycsb/workloadf.toml"),
    ),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// What reports call the workload.
    pub name: String,
    /// One line on what it does.
    pub about: String,
    /// Where it comes from and how it differs, for the docs.
    #[serde(default)]
    pub origin: String,
    pub data: Data,
    /// Insert every record once before the phases (YCSB's load), split across the clients.
    #[serde(default)]
    pub load: Option<Load>,
    #[serde(default, rename = "phase")]
    pub phases: Vec<Phase>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Load {
    /// The load step's name.
    #[serde(default = "load_name")]
    pub name: String,
}

fn load_name() -> String {
    "load".into()
}

/// The records (YCSB's `recordcount`, `fieldcount`, `fieldlength`, `insertorder`, ...).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Data {
    pub records: Spanned<u64>,
    pub fields: Spanned<u64>,
    pub field_prefix: String,
    pub field_length: Spanned<u64>,
    pub field_length_distribution: LengthDistribution,
    pub min_field_length: u64,
    pub key_prefix: String,
    pub insert_order: InsertOrder,
    pub zero_padding: u64,
    /// The table (SQL) or collection (documents) the records live in.
    pub table: String,
}

impl Default for Data {
    fn default() -> Self {
        Data {
            records: Spanned::new(0..0, 1000),
            fields: Spanned::new(0..0, 10),
            field_prefix: "field".into(),
            field_length: Spanned::new(0..0, 100),
            field_length_distribution: LengthDistribution::Constant,
            min_field_length: 1,
            key_prefix: "user".into(),
            insert_order: InsertOrder::Hashed,
            zero_padding: 1,
            table: "usertable".into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LengthDistribution {
    Constant,
    Uniform,
    Zipfian,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InsertOrder {
    Hashed,
    Ordered,
}

/// Which record an operation takes (YCSB's `requestdistribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    Zipfian,
    Latest,
    Hotspot,
    Exponential,
    Sequential,
}

/// A timed or counted phase of operations.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    pub name: Spanned<String>,
    /// Operations in all, split across the clients (YCSB's `operationcount`).
    #[serde(default)]
    pub operations: Option<Spanned<u64>>,
    /// Or a length of time.
    #[serde(default)]
    pub duration: Option<Span>,
    #[serde(default)]
    pub warmup: Option<Span>,
    #[serde(default = "uniform")]
    pub distribution: Distribution,
    #[serde(default = "hot_data")]
    pub hotspot_data_fraction: Spanned<f64>,
    #[serde(default = "hot_ops")]
    pub hotspot_ops_fraction: Spanned<f64>,
    #[serde(default = "exp_percentile")]
    pub exponential_percentile: Spanned<f64>,
    #[serde(default = "exp_frac")]
    pub exponential_frac: Spanned<f64>,
    #[serde(default = "yes")]
    pub read_all_fields: bool,
    #[serde(default)]
    pub write_all_fields: bool,
    #[serde(default = "one")]
    pub min_scan_length: u64,
    #[serde(default = "thousand")]
    pub max_scan_length: Spanned<u64>,
    #[serde(default = "uniform_length")]
    pub scan_length_distribution: LengthDistribution,
    pub mix: Spanned<Mix>,
}

fn uniform() -> Distribution {
    Distribution::Uniform
}
fn hot_data() -> Spanned<f64> {
    Spanned::new(0..0, 0.2)
}
fn hot_ops() -> Spanned<f64> {
    Spanned::new(0..0, 0.8)
}
fn exp_percentile() -> Spanned<f64> {
    Spanned::new(0..0, 95.0)
}
fn exp_frac() -> Spanned<f64> {
    Spanned::new(0..0, 0.857_142_857_1)
}
fn yes() -> bool {
    true
}
fn one() -> u64 {
    1
}
fn thousand() -> Spanned<u64> {
    Spanned::new(0..0, 1000)
}
fn uniform_length() -> LengthDistribution {
    LengthDistribution::Uniform
}

/// The share of each operation (YCSB's `*proportion`), any non-negative weights.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Mix {
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub readmodifywrite: f64,
    pub delete: f64,
}

impl Mix {
    /// The weights in the order YCSB's operation chooser adds them.
    pub fn weights(&self) -> [f64; 6] {
        [
            self.read,
            self.update,
            self.insert,
            self.scan,
            self.readmodifywrite,
            self.delete,
        ]
    }
}

/// A workload file read: its text (recorded with the run), where it came from, and its form.
#[derive(Debug)]
pub struct Loaded {
    pub source: String,
    pub text: String,
    pub file: File,
}

/// Whether `--workload NAME` names a workload file: a bundled one or a `.toml` path.
pub fn is_file(name: &str) -> bool {
    name.ends_with(".toml") || BUNDLED.iter().any(|(n, _)| *n == name)
}

/// Reads a bundled workload by name, or a file by path, and checks it.
pub fn load(source: &str) -> anyhow::Result<Loaded> {
    let text = match BUNDLED.iter().find(|(n, _)| *n == source) {
        Some((_, text)) => text.to_string(),
        None => std::fs::read_to_string(source)
            .map_err(|e| anyhow::anyhow!("workload file {source}: {e}"))?,
    };
    let file = parse(source, &text)?;
    Ok(Loaded {
        source: source.to_string(),
        text,
        file,
    })
}

/// The absolute form of a workload file's path, relative to `base` (an experiment file's
/// directory); a bundled name as it is.
pub fn resolve_path(name: &str, base: &Path) -> String {
    if BUNDLED.iter().any(|(n, _)| *n == name) {
        return name.to_string();
    }
    let p = PathBuf::from(name);
    let p = if p.is_absolute() { p } else { base.join(p) };
    p.to_string_lossy().into_owned()
}

/// Parses and checks a workload file's text; errors name `source`, the line and the key.
pub fn parse(source: &str, text: &str) -> anyhow::Result<File> {
    let file: File = toml::from_str(text).map_err(|e| {
        // The line, and its text: serde's message names the value, the line names the key.
        let at = e.span().map(|s| {
            let n = line_of(text, s.start);
            let written = text.lines().nth(n - 1).unwrap_or("").trim();
            format!(", line {n} (`{written}`)")
        });
        anyhow::anyhow!(
            "workload file {source}{}: {}",
            at.unwrap_or_default(),
            e.message()
        )
    })?;
    check(&file).map_err(|Refusal { at, key, what }| {
        let line = match at {
            Some(at) => format!(", line {}", line_of(text, at)),
            None => String::new(),
        };
        anyhow::anyhow!("workload file {source}{line}: key `{key}`: {what}")
    })?;
    Ok(file)
}

/// The 1-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// What is wrong with a file that parsed: where, which key, and what was expected.
struct Refusal {
    at: Option<usize>,
    key: String,
    what: String,
}

fn refuse<T>(at: &Spanned<T>, key: impl Into<String>, what: impl Into<String>) -> Refusal {
    let span = at.span();
    Refusal {
        at: (span.end > 0).then_some(span.start),
        key: key.into(),
        what: what.into(),
    }
}

fn check(f: &File) -> Result<(), Refusal> {
    let d = &f.data;
    if *d.records.get_ref() == 0 {
        return Err(refuse(&d.records, "data.records", "at least 1 record"));
    }
    if *d.fields.get_ref() == 0 {
        return Err(refuse(&d.fields, "data.fields", "at least 1 field"));
    }
    if d.field_length_distribution != LengthDistribution::Constant
        && d.min_field_length > *d.field_length.get_ref()
    {
        return Err(refuse(
            &d.field_length,
            "data.field_length",
            format!(
                "at least min_field_length ({}) for a {:?} length",
                d.min_field_length, d.field_length_distribution
            ),
        ));
    }
    if f.load.is_none() && f.phases.is_empty() {
        return Err(Refusal {
            at: None,
            key: "phase".into(),
            what: "a [load] or at least one [[phase]]".into(),
        });
    }
    let mut names: Vec<&str> = f.load.iter().map(|l| l.name.as_str()).collect();
    for (i, p) in f.phases.iter().enumerate() {
        check_phase(i, p, &mut names)?;
    }
    Ok(())
}

/// Phase `i` (0-based) of the file; `names` holds the steps' names so far.
fn check_phase<'f>(i: usize, p: &'f Phase, names: &mut Vec<&'f str>) -> Result<(), Refusal> {
    let key = |k: &str| format!("phase[{}].{k}", i + 1);
    let name = p.name.get_ref().as_str();
    if name.is_empty() || names.contains(&name) {
        return Err(refuse(&p.name, key("name"), "a name no other phase has"));
    }
    names.push(name);
    match (&p.operations, &p.duration) {
        (None, None) => {
            return Err(refuse(
                &p.name,
                key("operations"),
                "the phase's length: operations = N or duration = \"30s\"",
            ))
        }
        (Some(ops), _) if *ops.get_ref() == 0 => {
            return Err(refuse(ops, key("operations"), "at least 1"))
        }
        _ => {}
    }
    let weights = p.mix.get_ref().weights();
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(refuse(&p.mix, key("mix"), "weights of 0 or more"));
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(refuse(&p.mix, key("mix"), "at least one weight above 0"));
    }
    for (v, k) in [
        (&p.hotspot_data_fraction, "hotspot_data_fraction"),
        (&p.hotspot_ops_fraction, "hotspot_ops_fraction"),
        (&p.exponential_frac, "exponential_frac"),
    ] {
        if !(0.0..=1.0).contains(v.get_ref()) {
            return Err(refuse(v, key(k), "a fraction between 0 and 1"));
        }
    }
    let pct = &p.exponential_percentile;
    if !(*pct.get_ref() > 0.0 && *pct.get_ref() < 100.0) {
        return Err(refuse(
            pct,
            key("exponential_percentile"),
            "a percentile between 0 and 100",
        ));
    }
    if p.min_scan_length == 0 || p.min_scan_length > *p.max_scan_length.get_ref() {
        return Err(refuse(
            &p.max_scan_length,
            key("max_scan_length"),
            format!(
                "at least min_scan_length ({}), which is at least 1",
                p.min_scan_length
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse("w.toml", text).unwrap_err().to_string()
    }

    const HEAD: &str = "name = \"w\"\nabout = \"a test\"\n[data]\nrecords = 10\n";

    #[test]
    fn every_bundled_file_parses() {
        for (name, text) in BUNDLED {
            parse(name, text).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// A file whose phase `p` has `extra` lines after its name and length, and `mix` as its mix.
    fn phase(extra: &str, mix: &str) -> String {
        format!("{HEAD}[[phase]]\nname = \"run\"\noperations = 10\n{extra}\n[phase.mix]\n{mix}\n")
    }

    #[test]
    fn thirty_bad_files_each_refused_by_line_and_key() {
        // (the file, its line the error names, what the error holds)
        let cases: Vec<(String, usize, &str)> = vec![
            ("nmae = \"w\"\n".to_string(), 1, "nmae"),
            ("name = 3\nabout = \"a\"\n[data]\n[load]\n".into(), 1, "string"),
            ("name = \"w\"\nabout = \"a\"\n[data]\n".into(), 0, "a [load] or at least one [[phase]]"),
            (format!("{HEAD}recrods = 5\n"), 5, "recrods"),
            (format!("{HEAD}fields = 0\n[load]\n"), 5, "data.fields"),
            (format!("{HEAD}fields = -2\n[load]\n"), 5, "fields = -2"),
            (format!("{HEAD}field_length = \"long\"\n[load]\n"), 5, "field_length"),
            (format!("{HEAD}field_length_distribution = \"normal\"\n[load]\n"), 5, "normal"),
            (format!("{HEAD}field_length_distribution = \"uniform\"\nmin_field_length = 200\n[load]\n"), 0, "data.field_length"),
            (format!("{HEAD}insert_order = \"random\"\n[load]\n"), 5, "random"),
            (format!("{HEAD}zero_padding = \"x\"\n[load]\n"), 5, "zero_padding"),
            (format!("{HEAD}[load]\nnmae = \"l\"\n"), 6, "nmae"),
            (phase("distribution = \"zipfan\"", "read = 1"), 8, "zipfan"),
            (phase("", "read = -1"), 9, "phase[1].mix"),
            (phase("", "read = 0"), 9, "at least one weight above 0"),
            (phase("", "reed = 1"), 10, "reed"),
            (phase("", "read = \"half\""), 10, "read = \"half\""),
            (phase("hotspot_data_fraction = 1.5", "read = 1"), 8, "phase[1].hotspot_data_fraction"),
            (phase("hotspot_ops_fraction = -0.1", "read = 1"), 8, "phase[1].hotspot_ops_fraction"),
            (phase("exponential_frac = 2", "read = 1"), 8, "phase[1].exponential_frac"),
            (phase("exponential_percentile = 100", "read = 1"), 8, "phase[1].exponential_percentile"),
            (phase("max_scan_length = 0", "scan = 1"), 8, "phase[1].max_scan_length"),
            (phase("min_scan_length = 0", "scan = 1"), 0, "phase[1].max_scan_length"),
            (phase("scan_length_distribution = \"latest\"", "scan = 1"), 8, "latest"),
            (phase("read_all_fields = \"yes\"", "read = 1"), 8, "read_all_fields"),
            (phase("duration = \"forever\"", "read = 1"), 8, "forever"),
            (phase("warmup = 5", "read = 1"), 8, "warmup"),
            (phase("operatoins = 3", "read = 1"), 8, "operatoins"),
            (format!("{HEAD}[[phase]]\nname = \"run\"\noperations = 0\n[phase.mix]\nread = 1\n"), 7, "phase[1].operations"),
            (format!("{HEAD}[load]\n[[phase]]\nname = \"load\"\noperations = 1\n[phase.mix]\nread = 1\n"), 7, "phase[1].name"),
            (format!("{HEAD}[[phase]]\nname = \"run\"\noperations = 1\n"), 5, "mix"),
        ];
        assert!(cases.len() >= 30);
        for (text, line, wanted) in &cases {
            let e = err(text);
            assert!(e.starts_with("workload file w.toml"), "{e}");
            if *line > 0 {
                assert!(
                    e.contains(&format!("line {line}")),
                    "wanted line {line}: {e}\n{text}"
                );
            }
            assert!(e.contains(wanted), "wanted `{wanted}`: {e}\n{text}");
        }
    }

    #[test]
    fn bad_files_are_refused_by_file_line_and_key() {
        let e = err(&format!("{HEAD}recrods = 5\n"));
        assert!(e.contains("w.toml, line 5") && e.contains("recrods"), "{e}");
        let e = err(&format!(
            "{HEAD}[[phase]]\nname = \"run\"\noperations = 10\n[phase.mix]\nread = -1\n"
        ));
        assert!(e.contains("line 8") && e.contains("phase[1].mix"), "{e}");
        let e = err(&format!(
            "{HEAD}[[phase]]\nname = \"run\"\n[phase.mix]\nread = 1\n"
        ));
        assert!(
            e.contains("line 6") && e.contains("phase[1].operations"),
            "{e}"
        );
        let e = err(&format!(
            "{HEAD}[[phase]]\nname = \"run\"\noperations = 1\ndistribution = \"zipfan\"\n[phase.mix]\nread = 1\n"
        ));
        assert!(e.contains("line 8") && e.contains("zipfan"), "{e}");
        let e = err("name = \"w\"\nabout = \"a\"\n[data]\nrecords = 0\n[load]\n");
        assert!(e.contains("line 4") && e.contains("data.records"), "{e}");
    }
}
