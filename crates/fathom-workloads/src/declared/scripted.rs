//! A workload file's SQL tables and scripts at work: the load makes the tables and fills them
//! with multi-row INSERTs (the clients taking batches in turn; the last to finish vacuums and
//! analyzes them, as `pgbench -i` does), and a script phase's clients run one script, chosen by
//! weight, as one operation: its `\set`s, then its statements on one connection, sent as text
//! with the values written in (pgbench's default `-M simple`) or prepared.

use super::script::{Class, Command, Val};
use super::sqlfile::{ScriptDef, SentAs, TableDef, MOST_SCRIPTS};
use crate::statements::Statements;
use fathom_api::kind::Done;
use fathom_api::kind::{QueryMix, StepKinds};
use fathom_api::sql::{Dialect, SqlConn, SqlEngine, Stmt, Value};
use fathom_api::step::Client;
use rand::rngs::SmallRng;
use rand::Rng;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Rows per INSERT of the load.
const BATCH: u64 = 1000;

fathom_api::kinds! {
    /// A workload file's SQL operations: a batch of the load, or one run of a script (reports
    /// print the script's name).
    pub enum ScriptKind {
        Load = ("LOAD", Load, "a multi-row INSERT of up to 1,000 of a table's rows"),
        S1 = ("script1", Write, "one run of the phase's first script: every statement"),
        S2 = ("script2", Write, "one run of the phase's second script"),
        S3 = ("script3", Write, "one run of the phase's third script"),
        S4 = ("script4", Write, "one run of the phase's fourth script"),
        S5 = ("script5", Write, "one run of the phase's fifth script"),
        S6 = ("script6", Write, "one run of the phase's sixth script"),
        S7 = ("script7", Write, "one run of the phase's seventh script"),
        S8 = ("script8", Write, "one run of the phase's eighth script"),
    }
}

const SLOTS: [ScriptKind; MOST_SCRIPTS] = [
    ScriptKind::S1,
    ScriptKind::S2,
    ScriptKind::S3,
    ScriptKind::S4,
    ScriptKind::S5,
    ScriptKind::S6,
    ScriptKind::S7,
    ScriptKind::S8,
];

/// A script phase's kinds: a slot per script, named as the script is, with its statements per
/// run by class (sysbench's reads, writes and others, for queries per second).
pub fn script_kinds(scripts: &[ScriptDef]) -> StepKinds {
    let mut kinds = StepKinds::of(&SLOTS[..scripts.len()]);
    for (slot, s) in SLOTS.iter().zip(scripts) {
        let mut mix = QueryMix::default();
        for class in s.commands.iter().filter_map(Command::class) {
            match class {
                Class::Read => mix.read += 1.0,
                Class::Write => mix.write += 1.0,
                Class::Other => mix.other += 1.0,
            }
        }
        // Names live as long as the run; a run names its scripts once.
        let name: &'static str = Box::leak(s.name.get_ref().clone().into_boxed_str());
        kinds = kinds.named(*slot, name).with_queries(*slot, mix);
    }
    kinds
}

/// The load's tables as its statements make them: dropped, then created with their primary
/// key (before the rows, where `pgbench -i` adds it after) and, on PostgreSQL, fill factor.
/// A column of type `serial` is PostgreSQL's; on MariaDB it is `INTEGER NOT NULL
/// AUTO_INCREMENT`, as sysbench makes its `id` on each.
pub fn tables_ddl(d: Dialect, storage: Option<&str>, tables: &[TableDef]) -> Vec<String> {
    let mut out: Vec<String> = (tables.iter().rev())
        .map(|t| format!("DROP TABLE IF EXISTS {}", t.name.get_ref()))
        .collect();
    for t in tables {
        let columns: Vec<String> = (t.columns.get_ref().iter())
            .map(|c| column_on(d, c))
            .collect();
        let mut cols = columns.join(", ");
        if let Some(pk) = &t.primary_key {
            cols.push_str(&format!(", PRIMARY KEY ({pk})"));
        }
        let with = match (d, &t.fillfactor) {
            (Dialect::Postgres, Some(f)) => format!(" WITH (fillfactor={})", f.get_ref()),
            _ => String::new(),
        };
        let name = t.name.get_ref();
        out.push(format!(
            "CREATE TABLE {name} ({cols}){with}{}",
            d.table_suffix(storage)
        ));
    }
    out
}

/// A column definition as `d` writes it: `serial` in the type's place becomes MariaDB's
/// auto-increment integer there.
fn column_on(d: Dialect, def: &str) -> String {
    let mut words = def.split_whitespace();
    let (Some(name), Some(kind)) = (words.next(), words.next()) else {
        return def.to_string();
    };
    if d != Dialect::MariaDb || !kind.eq_ignore_ascii_case("serial") {
        return def.to_string();
    }
    let rest: Vec<&str> = words.collect();
    format!("{name} INTEGER NOT NULL AUTO_INCREMENT {}", rest.join(" "))
        .trim_end()
        .to_string()
}

/// What the load's clients share: each table's rows, the next batch, and who finished.
pub struct LoadShared {
    /// Per table: its name, its rows, and the first batch of it (batches count on across
    /// tables).
    pub tables: Vec<(String, u64, u64)>,
    next: AtomicU64,
    batches: u64,
    finished: AtomicUsize,
    clients: usize,
}

impl LoadShared {
    pub fn new(tables: Vec<(String, u64)>, clients: usize) -> LoadShared {
        let mut first = 0;
        let tables = (tables.into_iter())
            .map(|(name, rows)| {
                let t = (name, rows, first);
                first += rows.div_ceil(BATCH);
                t
            })
            .collect();
        LoadShared {
            tables,
            next: AtomicU64::new(0),
            batches: first,
            finished: AtomicUsize::new(0),
            clients,
        }
    }
}

/// A client of the load.
pub struct TableLoader<'a> {
    pub conn: Box<dyn SqlConn + 'a>,
    pub dialect: Dialect,
    pub shared: std::sync::Arc<LoadShared>,
    pub defs: &'a [TableDef],
    pub vars: Vec<Val>,
    pub row_slot: usize,
    pub rng: SmallRng,
    sql: String,
}

impl<'a> TableLoader<'a> {
    pub fn new(
        conn: Box<dyn SqlConn + 'a>,
        dialect: Dialect,
        shared: std::sync::Arc<LoadShared>,
        defs: &'a [TableDef],
        (vars, row_slot): (Vec<Val>, usize),
        rng: SmallRng,
    ) -> TableLoader<'a> {
        TableLoader {
            conn,
            dialect,
            shared,
            defs,
            vars,
            row_slot,
            rng,
            sql: String::new(),
        }
    }

    /// The last client to finish runs each table's `after_load` statements, then vacuums
    /// and analyzes the tables, as `pgbench -i`.
    fn finish(&mut self) -> anyhow::Result<()> {
        let last = self.shared.finished.fetch_add(1, Ordering::Relaxed) + 1 == self.shared.clients;
        if !last {
            return Ok(());
        }
        for sql in self.defs.iter().flat_map(|t| &t.after_load) {
            self.conn.exec(sql)?;
        }
        for (name, _, _) in &self.shared.tables {
            let sql = match self.dialect {
                Dialect::Postgres => format!("VACUUM ANALYZE {name}"),
                Dialect::MariaDb => format!("ANALYZE TABLE {name}"),
                Dialect::Sqlite => format!("ANALYZE {name}"),
            };
            self.conn.exec(&sql)?;
        }
        Ok(())
    }
}

impl Client for TableLoader<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        let batch = self.shared.next.fetch_add(1, Ordering::Relaxed);
        if batch >= self.shared.batches {
            self.finish()?;
            return Ok(None);
        }
        let t = (self.shared.tables.iter())
            .rposition(|(_, _, first)| *first <= batch)
            .unwrap_or(0);
        let (name, rows, first) = &self.shared.tables[t];
        let from = (batch - first) * BATCH + 1;
        let to = (from + BATCH - 1).min(*rows);
        use std::fmt::Write;
        self.sql.clear();
        let _ = write!(self.sql, "INSERT INTO {name} VALUES ");
        for row in from..=to {
            self.vars[self.row_slot] = Val::Int(row as i64);
            self.sql.push_str(if row == from { "(" } else { ",(" });
            for (i, e) in self.defs[t].value_exprs.iter().enumerate() {
                if i > 0 {
                    self.sql.push(',');
                }
                match e
                    .eval(&self.vars, &mut self.rng)
                    .map_err(anyhow::Error::msg)?
                {
                    Val::Int(v) => {
                        let _ = write!(self.sql, "{v}");
                    }
                    Val::Text(s) => {
                        let _ = write!(self.sql, "'{}'", s.replace('\'', "''"));
                    }
                    Val::Null => self.sql.push_str("NULL"),
                    Val::Default => self.sql.push_str("DEFAULT"),
                }
            }
            self.sql.push(')');
        }
        self.conn.exec(&self.sql)?;
        let mut done = Done::of(ScriptKind::Load);
        done.rows = to + 1 - from;
        done.bytes = self.sql.len() as u64;
        Ok(Some(done))
    }
}

/// A statement of a script as this connection sends it.
enum Sent {
    /// Transaction control (`BEGIN`, `END`, `COMMIT`), sent as it is.
    Exec(String),
    /// With its variables' slots.
    Run(Stmt, Vec<usize>),
}

/// One client of a script phase.
pub struct ScriptClient<'a> {
    conn: Box<dyn SqlConn + 'a>,
    scripts: &'a [ScriptDef],
    /// Per script, its statements as sent.
    sent: Vec<Vec<Sent>>,
    cumulative: Vec<f64>,
    vars: Vec<Val>,
    rng: SmallRng,
    quota: Option<u64>,
}

impl<'a> ScriptClient<'a> {
    pub fn new(
        engine: &'a dyn SqlEngine,
        statements: Statements,
        scripts: &'a [ScriptDef],
        vars: Vec<Val>,
        (rng, quota): (SmallRng, Option<u64>),
    ) -> anyhow::Result<ScriptClient<'a>> {
        let d = engine.dialect();
        let mut conn = engine.connect()?;
        let mut sent = Vec::new();
        for s in scripts {
            let original: &[Dialect] = match s.statements {
                SentAs::Text => &[Dialect::MariaDb, Dialect::Postgres],
                SentAs::Prepared => &[],
            };
            let text = statements.text_on(d, original)?;
            let mut these = Vec::new();
            for c in &s.commands {
                let Command::Sql { text: sql, args } = c else {
                    continue;
                };
                // pgbench sends a statement with its `;`; MariaDB's parser takes one statement
                // without it.
                let sql = match d {
                    Dialect::Postgres if text => format!("{sql};"),
                    _ => sql.clone(),
                };
                if args.is_empty() && c.class() == Some(Class::Other) {
                    // pgbench's END is PostgreSQL's COMMIT; MariaDB knows only the latter.
                    let end = sql.eq_ignore_ascii_case("END") && d != Dialect::Postgres;
                    these.push(Sent::Exec(if end { "COMMIT".into() } else { sql }));
                    continue;
                }
                let stmt = match text {
                    true => conn.prepare_text(&sql)?,
                    false => conn.prepare(&sql)?,
                };
                these.push(Sent::Run(stmt, args.clone()));
            }
            sent.push(these);
        }
        let total: f64 = scripts.iter().map(|s| *s.weight.get_ref()).sum();
        let mut acc = 0.0;
        let cumulative = (scripts.iter())
            .map(|s| {
                acc += s.weight.get_ref() / total;
                acc
            })
            .collect();
        Ok(ScriptClient {
            conn,
            scripts,
            sent,
            cumulative,
            vars,
            rng,
            quota,
        })
    }
}

impl Client for ScriptClient<'_> {
    fn next(&mut self) -> anyhow::Result<Option<Done>> {
        if let Some(q) = &mut self.quota {
            if *q == 0 {
                return Ok(None);
            }
            *q -= 1;
        }
        let u: f64 = self.rng.gen();
        let k = (self.cumulative.iter().position(|c| u < *c)).unwrap_or(self.scripts.len() - 1);
        let mut done = Done::of(SLOTS[k]);
        let mut stmts = self.sent[k].iter();
        for c in &self.scripts[k].commands {
            match c {
                Command::Set(slot, e) => {
                    let name = &self.scripts[k].name;
                    self.vars[*slot] = e
                        .eval(&self.vars, &mut self.rng)
                        .map_err(|e| anyhow::anyhow!("script {}: {e}", name.get_ref()))?;
                }
                Command::Sql { .. } => match stmts.next() {
                    Some(Sent::Exec(sql)) => self.conn.exec(sql)?,
                    Some(Sent::Run(stmt, args)) => {
                        let params: Vec<Value<'_>> = (args.iter())
                            .map(|a| match &self.vars[*a] {
                                Val::Int(i) => Ok(Value::Int(*i)),
                                Val::Text(t) => Ok(Value::Text(t)),
                                Val::Null | Val::Default => {
                                    Err(anyhow::anyhow!("a null or default bound to a statement"))
                                }
                            })
                            .collect::<anyhow::Result<_>>()?;
                        let out = self.conn.run(*stmt, &params)?;
                        done.rows += out.rows.max(out.affected);
                        done.bytes += out.bytes;
                    }
                    None => {}
                },
            }
        }
        Ok(Some(done))
    }
}
