//! A finished run as the rows of the results database's `runs` and `steps`, in values both
//! databases bind alike.

use fathom_schema::figures::View;
use fathom_schema::store::LoadedRun;

/// A value bound to a statement or read from a row.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Text(Option<String>),
    Int(Option<i64>),
    Real(Option<f64>),
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            _ => None,
        }
    }
    /// A number, whichever way the database stored it.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Real(v) => *v,
            Value::Int(v) => v.map(|i| i as f64),
            Value::Text(_) => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(v) => v.as_deref(),
            _ => None,
        }
    }
    pub(crate) fn text(s: impl Into<String>) -> Value {
        Value::Text(Some(s.into()))
    }
}

pub const RUN_COLUMNS: &[&str] = &[
    "id",
    "path",
    "experiment",
    "cell",
    "repeat",
    "setup",
    "engine",
    "engine_version",
    "workload",
    "clients",
    "hostname",
    "cpu_model",
    "kernel",
    "fathom_version",
    "started_at",
    "finished_at",
    "manifest",
];

/// The `steps` table's columns: the step, its recorded figures (`fathom_schema::figures`) and
/// its summary.
pub fn step_columns() -> Vec<&'static str> {
    let figures = fathom_schema::figures::recorded_figures().map(|(_, r)| r.column);
    ["run_id", "idx", "step", "ops"]
        .into_iter()
        .chain(figures)
        .chain(["summary"])
        .collect()
}

/// `INSERT` of a row that leaves a row with the same `key` as it is.
pub fn insert_sql(table: &str, columns: &[&str], key: &str) -> String {
    format!(
        "INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT ({key}) DO NOTHING",
        columns.join(", "),
        vec!["?"; columns.len()].join(", ")
    )
}

/// The run's directory, made absolute.
fn absolute(run: &LoadedRun) -> String {
    std::fs::canonicalize(&run.path)
        .unwrap_or_else(|_| run.path.clone())
        .display()
        .to_string()
}

/// The run's `runs` row, in `RUN_COLUMNS`' order, and its id: the host that ran it, its
/// directory (made absolute) and when it started. Importing a directory again finds the same
/// runs; a moved directory is recorded anew.
pub fn run(run: &LoadedRun) -> anyhow::Result<(String, Vec<Value>)> {
    let m = &run.manifest;
    let exp = m.experiment.as_ref();
    let path = absolute(run);
    let id = format!("{}:{path}@{}", m.host.hostname, m.started_at);
    let row = vec![
        Value::text(&id),
        Value::text(path),
        Value::Text(exp.map(|e| e.name.clone())),
        Value::Text(exp.map(|e| e.cell.clone())),
        Value::Int(exp.map(|e| e.repeat as i64)),
        Value::text(&m.setup.name),
        Value::text(&m.setup.engine),
        Value::text(&m.setup.engine_version),
        Value::text(&m.workload),
        Value::Int(Some(m.clients as i64)),
        Value::text(&m.host.hostname),
        Value::Text(m.host.cpu_model.clone()),
        Value::text(&m.host.kernel),
        Value::text(&m.host.fathom_version),
        Value::text(&m.started_at),
        Value::Text(m.finished_at.clone()),
        Value::text(serde_json::to_string(m)?),
    ];
    Ok((id, row))
}

/// The `steps` rows of the run `id`, in `step_columns()`' order; a figure that is unknown and
/// may not be NULL is recorded as 0.
pub fn steps(run: &LoadedRun, id: &str) -> anyhow::Result<Vec<Vec<Value>>> {
    let cores = Some(run.manifest.host.cores);
    run.steps
        .iter()
        .map(|s| {
            let view = View::of_step(s, cores, run.manifest.host.device_limits.as_ref());
            let mut row = vec![
                Value::text(id),
                Value::Int(Some(s.index as i64)),
                Value::text(&s.step),
                Value::Int(Some(s.ops as i64)),
            ];
            for (f, r) in fathom_schema::figures::recorded_figures() {
                let value = f.of(&view).or((!r.nullable).then_some(0.0));
                row.push(Value::Real(value));
            }
            row.push(Value::text(serde_json::to_string(s)?));
            Ok(row)
        })
        .collect()
}
