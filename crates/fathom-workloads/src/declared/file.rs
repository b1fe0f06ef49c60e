//! A workload file (TOML), read and checked before anything runs: its data, an optional load
//! phase and its run phases, each with its mix and key distribution. Every key is YCSB's
//! property under a name that says what it holds (docs/declared.md maps them); an unknown key,
//! a wrong type or a value out of range is refused naming the file, the line and the key.

use super::rate::Rate;
pub(super) use super::refusal::{refuse, Refusal};
use super::script::Names;
use super::sqlfile::{ScriptDef, TableDef};
use crate::params::Span;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

pub use super::bundled::BUNDLED;
pub use super::data::{Data, Histogram, InsertOrder, KeyFormat, KvValue};
pub use super::gen::{Distribution, LengthDistribution};

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
    /// YCSB's records (a file of SQL tables has none).
    #[serde(default)]
    pub data: Data,
    /// Insert every record once before the phases (YCSB's load), split across the clients.
    #[serde(default)]
    pub load: Option<Load>,
    #[serde(default, rename = "phase")]
    pub phases: Vec<Phase>,
    /// Integer variables the tables' and scripts' expressions use (`scale = 1`).
    #[serde(default)]
    pub vars: std::collections::BTreeMap<String, i64>,
    /// SQL tables the load makes and fills (instead of YCSB's records).
    #[serde(default, rename = "table")]
    pub tables: Vec<TableDef>,
    /// Every variable the file's expressions name, by slot: its `vars` first.
    #[serde(skip)]
    pub names: Names,
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
    /// The phase's mix; a phase with client groups has theirs instead.
    #[serde(default)]
    pub mix: Option<Spanned<Mix>>,
    /// The operations per second its clients start together (open loop); none: closed loop.
    #[serde(default)]
    pub rate: Option<Spanned<toml::Value>>,
    /// How the arrivals of a rate are spaced.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Groups of clients, each with its own mix, client count and rate.
    #[serde(default, rename = "group")]
    pub groups: Vec<Group>,
    /// SQL scripts (pgbench's), each run as one operation, chosen by weight: instead of a mix.
    #[serde(default, rename = "script")]
    pub scripts: Vec<ScriptDef>,
    /// The rate, read when the file is checked.
    #[serde(skip)]
    pub pace: Option<Rate>,
}

/// Some of a phase's clients, with their own mix, count and rate.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub name: Spanned<String>,
    /// Clients in the group; none: the run's client count.
    #[serde(default)]
    pub clients: Option<Spanned<u64>>,
    #[serde(default)]
    pub rate: Option<Spanned<toml::Value>>,
    pub mix: Spanned<Mix>,
    /// The rate, read when the file is checked.
    #[serde(skip)]
    pub pace: Option<Rate>,
}

/// How arrivals at a rate are spaced: Poisson (exponential gaps, as `--rate`) or evenly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    #[default]
    Poisson,
    Uniform,
}

impl Phase {
    /// The phase's groups as (name, client count or the run's, mix, rate): its own mix and rate
    /// as one group when it has none.
    pub fn groups(&self) -> Vec<(&str, Option<u64>, &Mix, Option<&Rate>)> {
        static NO_MIX: Mix = Mix {
            read: 0.0,
            update: 0.0,
            insert: 0.0,
            scan: 0.0,
            readmodifywrite: 0.0,
            delete: 0.0,
        };
        if !self.scripts.is_empty() {
            return vec![(
                self.name.get_ref().as_str(),
                None,
                &NO_MIX,
                self.pace.as_ref(),
            )];
        }
        match &self.mix {
            Some(mix) => vec![(
                self.name.get_ref().as_str(),
                None,
                mix.get_ref(),
                self.pace.as_ref(),
            )],
            None => (self.groups.iter())
                .map(|g| {
                    let clients = g.clients.as_ref().map(|c| *c.get_ref());
                    (
                        g.name.get_ref().as_str(),
                        clients,
                        g.mix.get_ref(),
                        g.pace.as_ref(),
                    )
                })
                .collect(),
        }
    }
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
    let mut file: File = toml::from_str(text).map_err(|e| {
        // The line, and its text: serde's message names the value, the line names the key. A
        // key missing from the top level has the whole file for its span: no line to name.
        let top =
            e.message().starts_with("missing field") && e.span().is_some_and(|s| s.start == 0);
        let at = e.span().filter(|_| !top).map(|s| {
            let n = line_of(text, s.start);
            let written = text.lines().nth(n - 1).unwrap_or("").trim();
            format!(", line {n} (`{written}`)")
        });
        let hint = if top {
            " at the file's top level (a workload file begins `name = \"...\"` and `about = \"what \
             it runs\"`, docs/declared.md)"
        } else {
            ""
        };
        anyhow::anyhow!(
            "workload file {source}{}: {}{hint}",
            at.unwrap_or_default(),
            e.message().trim_end()
        )
    })?;
    check(&mut file, text).map_err(
        |Refusal {
             at,
             below,
             key,
             what,
         }| {
            let line = match at {
                Some(at) => format!(", line {}", line_of(text, at) + below),
                None => String::new(),
            };
            anyhow::anyhow!("workload file {source}{line}: key `{key}`: {what}")
        },
    )?;
    Ok(file)
}

/// The 1-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn check(f: &mut File, text: &str) -> Result<(), Refusal> {
    for name in f.vars.keys() {
        f.names.slot(name);
    }
    f.names.slot("client_id");
    f.names.slot("clients");
    super::sqlfile::check_tables(&mut f.tables, &mut f.names)?;
    super::data::check(&f.data)?;
    if f.load.is_none() && f.phases.is_empty() {
        return Err(Refusal {
            at: None,
            below: 0,
            key: "phase".into(),
            what: "a [load] or at least one [[phase]]".into(),
        });
    }
    let mut names: Vec<String> = f.load.iter().map(|l| l.name.clone()).collect();
    for (i, p) in f.phases.iter_mut().enumerate() {
        check_phase(i, p, &mut names)?;
        if !p.scripts.is_empty() {
            super::sqlfile::check_scripts(i, &mut p.scripts, text, &mut f.names)?;
        }
    }
    // Every variable an expression names has a value: the file's, the row's, the client's, or
    // a script's \set before it is used (checked as the script runs).
    Ok(())
}

/// Reads a rate the file wrote at `key`; a list or a ramp needs the phase's duration.
fn read_rate(v: &Spanned<toml::Value>, key: String, timed: bool) -> Result<Rate, Refusal> {
    let rate = Rate::read(v.get_ref()).map_err(|what| refuse(v, key.clone(), what))?;
    if rate.needs_duration() && !timed {
        return Err(refuse(
            v,
            key,
            "a duration for the phase: a list of rates, a ramp or steps without an `end` \
             are laid out over it",
        ));
    }
    Ok(rate)
}

/// A mix's weights: each 0 or more, one above 0.
fn check_mix(mix: &Spanned<Mix>, key: String) -> Result<(), Refusal> {
    let weights = mix.get_ref().weights();
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(refuse(mix, key, "weights of 0 or more"));
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(refuse(mix, key, "at least one weight above 0"));
    }
    Ok(())
}

/// Phase `i`'s mix, rate and client groups.
fn check_groups(i: usize, p: &mut Phase) -> Result<(), Refusal> {
    let key = |k: &str| format!("phase[{}].{k}", i + 1);
    let timed = p.duration.is_some();
    if let Some(r) = &p.rate {
        p.pace = Some(read_rate(r, key("rate"), timed)?);
    }
    if let Some(first) = p.scripts.first() {
        if let Some(mix) = &p.mix {
            let what = "scripts or a mix, not both";
            return Err(refuse(mix, key("mix"), what));
        }
        if !p.groups.is_empty() {
            let what = "scripts or client groups, not both";
            return Err(refuse(&first.name, key("script"), what));
        }
        return Ok(());
    }
    match (&p.mix, p.groups.first()) {
        (Some(mix), None) => return check_mix(mix, key("mix")),
        (None, None) => {
            return Err(refuse(
                &p.name,
                key("mix"),
                "the phase's [phase.mix], [[phase.group]]s each with its mix, or \
                 [[phase.script]]s",
            ))
        }
        (Some(mix), Some(_)) => {
            return Err(refuse(
                mix,
                key("mix"),
                "no mix of the phase's own beside its groups: each group has its mix",
            ))
        }
        (None, Some(g)) if !timed => {
            return Err(refuse(
                &g.name,
                key("group"),
                "a duration for the phase: client groups run for a time",
            ))
        }
        (None, Some(_)) => {
            if let Some(r) = &p.rate {
                return Err(refuse(
                    r,
                    key("rate"),
                    "no rate of the phase's own beside its groups: give each group its rate",
                ));
            }
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for (j, g) in p.groups.iter_mut().enumerate() {
        let gkey = |k: &str| format!("phase[{}].group[{}].{k}", i + 1, j + 1);
        let name = g.name.get_ref().as_str();
        if name.is_empty() || names.contains(&name) {
            return Err(refuse(
                &g.name,
                gkey("name"),
                "a name no other group of the phase has",
            ));
        }
        names.push(name);
        if let Some(c) = g.clients.as_ref().filter(|c| *c.get_ref() == 0) {
            return Err(refuse(c, gkey("clients"), "at least 1 client"));
        }
        check_mix(&g.mix, gkey("mix"))?;
        if let Some(r) = &g.rate {
            g.pace = Some(read_rate(r, gkey("rate"), timed)?);
        }
    }
    Ok(())
}

/// Phase `i` (0-based) of the file; `names` holds the steps' names so far.
fn check_phase(i: usize, p: &mut Phase, names: &mut Vec<String>) -> Result<(), Refusal> {
    let key = |k: &str| format!("phase[{}].{k}", i + 1);
    let name = p.name.get_ref();
    if name.is_empty() || names.contains(name) {
        return Err(refuse(&p.name, key("name"), "a name no other phase has"));
    }
    names.push(name.clone());
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
    check_groups(i, p)?;
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
    if p.scan_length_distribution == LengthDistribution::Histogram {
        return Err(refuse(
            &p.max_scan_length,
            key("scan_length_distribution"),
            "constant, uniform or zipfian (a histogram is for field lengths, as in YCSB)",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
