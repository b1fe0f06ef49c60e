//! `--metrics ADDR` and `--metrics-push URL`: a run's live figures in Prometheus' text format,
//! served at `http://ADDR/metrics` while runs go and pushed to a Pushgateway after every
//! interval, for the dashboards and alerts a team runs beside its other tools. The figures are
//! the last interval's — operations a second, latency percentiles per kind, the host's CPU and
//! the device's rates (the interval's costs per operation times its rate), memory and database
//! size — with the step running and counters over the run. One process serves at a time: a
//! supervising fathom lets go of the address while its child run (`fathom child-run`, handed
//! the targets in its run's spec) serves, and takes it back after.

mod http;

use crate::input::LiveTargets;
use crate::place::Observer;
use crate::resolve::RunSpec;
use fathom_api::step::StepPlan;
use fathom_schema::result::{IntervalRecord, RunManifest, StepSummary};
use http::{pusher, Server};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

/// What the last intervals said, and of which run.
#[derive(Default)]
struct State {
    /// `setup="…",workload="…",clients="…"`.
    labels: String,
    step: Option<(usize, String)>,
    last: Option<IntervalRecord>,
    operations: u64,
    failed: u64,
    retries: u64,
    steps_finished: u64,
}

/// The live figures of this process, when asked for.
struct Live {
    state: Arc<Mutex<State>>,
    addr: Option<String>,
    server: Option<Server>,
    pusher: Option<Sender<String>>,
}

static LIVE: Mutex<Option<Live>> = Mutex::new(None);

/// Starts serving (and pushing) to `targets`; nothing when neither is given.
pub fn start(targets: &LiveTargets) -> anyhow::Result<()> {
    let addr = targets.metrics.clone().filter(|a| !a.is_empty());
    let push = targets.metrics_push.clone().filter(|p| !p.is_empty());
    if addr.is_none() && push.is_none() {
        return Ok(());
    }
    let state = Arc::new(Mutex::new(State::default()));
    let pusher = push.map(|url| pusher(&url)).transpose()?;
    let server = match &addr {
        Some(a) => Some(Server::start(a, Arc::clone(&state))?),
        None => None,
    };
    *LIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Live {
        state,
        addr,
        server,
        pusher,
    });
    Ok(())
}

/// Lets go of the address while a child run serves it.
pub fn pause() {
    if let Some(l) = LIVE.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        l.server = None;
    }
}

/// Takes the address back after a child run.
pub fn resume() {
    if let Some(l) = LIVE.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        if l.server.is_none() {
            l.server = l
                .addr
                .as_deref()
                .and_then(|a| Server::start(a, Arc::clone(&l.state)).ok());
        }
    }
}

/// An observer that keeps the live figures and passes everything on to `inner`.
pub struct Observing<'a>(pub &'a mut dyn Observer);

fn with_state(f: impl FnOnce(&mut State)) {
    let live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    let Some(l) = live.as_ref() else {
        return;
    };
    let mut s = l.state.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut s);
    if let Some(p) = &l.pusher {
        let _ = p.send(text(&s));
    }
}

impl Observer for Observing<'_> {
    fn run_started(&mut self, manifest: &RunManifest, spec: &RunSpec, dir: &std::path::Path) {
        with_state(|s| {
            *s = State {
                labels: format!(
                    "setup=\"{}\",workload=\"{}\",clients=\"{}\"",
                    escape(&spec.setup.name),
                    escape(spec.workload.name),
                    spec.clients
                ),
                ..State::default()
            }
        });
        self.0.run_started(manifest, spec, dir);
    }

    fn step_started(&mut self, index: usize, total: usize, plan: &StepPlan) {
        with_state(|s| {
            s.step = Some((index, plan.name.clone()));
            s.last = None;
        });
        self.0.step_started(index, total, plan);
    }

    fn interval(&mut self, record: &IntervalRecord) {
        with_state(|s| {
            s.operations += record.ops;
            s.failed += record.failed;
            s.retries += record.retries;
            s.last = Some(record.clone());
        });
        self.0.interval(record);
    }

    fn step_finished(&mut self, summary: &StepSummary) {
        with_state(|s| s.steps_finished += 1);
        self.0.step_finished(summary);
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Prometheus' text format (version 0.0.4), a metric at a time.
#[derive(Default)]
struct Text(String);

impl Text {
    /// A metric's help and type lines and its samples (`labels`, value); none, nothing.
    fn metric(&mut self, name: &str, kind: &str, help: &str, samples: &[(String, f64)]) {
        if samples.is_empty() {
            return;
        }
        self.0
            .push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        for (labels, v) in samples {
            self.0.push_str(&format!("{name}{{{labels}}} {v}\n"));
        }
    }

    /// A gauge of one sample.
    fn gauge(&mut self, name: &str, help: &str, labels: &str, v: f64) {
        self.metric(name, "gauge", help, &[(labels.to_string(), v)]);
    }
}

/// The figures: the run's own, then the last interval's.
fn text(s: &State) -> String {
    let mut t = Text::default();
    let run = &s.labels;
    let step = match &s.step {
        Some((_, name)) => format!("{run},step=\"{}\"", escape(name)),
        None => run.clone(),
    };
    t.gauge(
        "fathom_up",
        "1 while fathom serves a run's figures.",
        run,
        1.0,
    );
    if let Some((index, _)) = &s.step {
        let help = "The step running: its number in the run, labelled with its name.";
        t.gauge("fathom_step", help, &step, *index as f64);
    }
    for (name, help, v) in [
        (
            "fathom_operations_total",
            "Operations done in the run's measured intervals.",
            s.operations,
        ),
        (
            "fathom_failed_operations_total",
            "Operations that failed with a tolerated error.",
            s.failed,
        ),
        (
            "fathom_retries_total",
            "Operations retried after a deadlock or conflict.",
            s.retries,
        ),
        (
            "fathom_steps_finished_total",
            "Steps of the run finished.",
            s.steps_finished,
        ),
    ] {
        t.metric(name, "counter", help, &[(run.clone(), v as f64)]);
    }
    if let Some(r) = &s.last {
        interval(&mut t, r, &step);
    }
    t.0
}

/// The last interval's figures, labelled `l`: its rate, latency per kind, the host's and the
/// device's rates (its costs per operation times its rate), memory and size.
fn interval(t: &mut Text, r: &IntervalRecord, l: &str) {
    t.gauge(
        "fathom_ops_per_second",
        "Operations a second over the last interval.",
        l,
        r.ops_per_sec,
    );
    let kinds = std::iter::once(("all", &r.latency_us))
        .chain(r.by_kind.iter().map(|k| (k.kind, &k.latency_us)));
    let mut latency = Vec::new();
    for (kind, lat) in kinds {
        for (q, v) in [
            ("0.5", lat.p50),
            ("0.99", lat.p99),
            ("0.999", lat.p99_9),
            ("1", lat.max),
        ] {
            latency.push((format!("{l},kind=\"{}\",quantile=\"{q}\"", escape(kind)), v));
        }
    }
    let help =
        "Latency percentiles over the last interval, per kind of operation (all: every kind).";
    t.metric("fathom_latency_microseconds", "gauge", help, &latency);
    let p = &r.per_op;
    for (name, help, per_op) in [
        (
            "fathom_host_cpu_cores",
            "The host's CPU in use (user and system), cores.",
            p.cpu_us.map(|c| c / 1e6),
        ),
        (
            "fathom_device_reads_per_second",
            "The data device's reads a second.",
            p.reads,
        ),
        (
            "fathom_device_read_kilobytes_per_second",
            "KB read from the data device a second.",
            p.read_kb,
        ),
        (
            "fathom_device_write_kilobytes_per_second",
            "KB written to the data device a second.",
            p.write_kb,
        ),
        (
            "fathom_context_switches_per_second",
            "The host's context switches a second.",
            p.cs,
        ),
    ] {
        if let Some(x) = per_op {
            t.gauge(name, help, l, x * r.ops_per_sec);
        }
    }
    t.gauge(
        "fathom_rss_gigabytes",
        "The engine's resident memory, GB.",
        l,
        r.rss_gb,
    );
    let help = "The database's size on disk (allocated), GB.";
    t.gauge("fathom_database_gigabytes", help, l, r.db_gb.allocated);
}
