//! A step's verdict as the report states it: whose time is judged, the bound the rule gives
//! over the repeats, the qualifier that says whether the bound was a resource at its limit
//! (saturated) or one operation's chain of waits (latency-bound), with its evidence in figures
//! (host CPU idle, IOPS against the device's calibrated limit at the observed queue depth,
//! flushes against the calibrated synced-write rate), and a confidence that falls with a small
//! margin, unexplained time, disturbance, a soft device limit or repeats that disagree.

use super::{mean_shares, shares_of, Bound, Confidence, Share, RULE};
use fathom_schema::result::device::{DeviceLimits, Used};
use fathom_schema::result::threads::GroupTime;
use fathom_schema::result::StepSummary;

/// A share of a resource's limit at or above which the resource counts as saturated.
pub const SATURATED: f64 = 0.8;
/// Host CPU idle, percent, under which the CPU counts as saturated.
pub const CPU_SATURATED_IDLE_PCT: f64 = 5.0;
/// An unexplained share ("off cpu": asleep in nothing `--waits` names, or not split at all)
/// at or above which a verdict about another share is less sure.
pub const UNEXPLAINED: f64 = 0.25;

/// What the report says of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Whose time: "clients" or "server's busy threads".
    pub whose: &'static str,
    pub bound: Bound,
    /// The mean shares over the repeats.
    pub shares: Vec<Share>,
    /// `saturated`, `latency-bound`, `interference`, `the offered load was met`, with its
    /// evidence; `None` for no single bound.
    pub qualifier: Option<String>,
    pub confidence: Confidence,
    /// What lowered the confidence.
    pub why: Vec<String>,
}

/// Whose time a step is judged by, and its shares: an embedded engine's clients (they run its
/// code; fathom's part of their CPU is the harness's; asleep in a timer other than their
/// pacing, they were held back by the engine: "engine throttling"); beside a server, its busy threads when
/// the clients spend over half their time off a CPU (they wait on it), else the clients, whose
/// CPU is all fathom's. Over a network with a measured round trip (`--network`), when the
/// clients spend over half their time on the wire, the clients, their wait split into the wire
/// ("network": round trips × the round trip) and the server's answer ("server": its own time on
/// the statements where it counts it, the rest "hand-offs").
pub fn judged_shares(m: &StepSummary) -> Option<(&'static str, Vec<Share>)> {
    let time = m.time.as_ref()?;
    let c = &time.clients;
    if c.wall_s <= 0.0 {
        return None;
    }
    let waits = m.waits.as_ref();
    if m.per_op.cpu_us_harness.is_none() {
        let harness = m.harness_ns_per_op.map(|ns| ns * m.ops as f64 / 1e9);
        let mut shares = shares_of(c, harness, waits.map(|w| &w.clients));
        for s in shares.iter_mut().filter(|s| s.name == "sleep") {
            s.name = "engine throttling";
        }
        return Some(("clients", shares));
    }
    if let Some(shares) = on_the_wire(m, c) {
        return Some(("clients", shares));
    }
    if c.other_s / c.wall_s > 0.5 && time.engine.wall_s > 0.0 {
        Some((
            "server's busy threads",
            shares_of(&time.engine, None, waits.map(|w| &w.engine)),
        ))
    } else {
        Some((
            "clients",
            shares_of(c, Some(c.cpu_s), waits.map(|w| &w.clients)),
        ))
    }
}

/// The clients' shares split by the wire when they spent over half their time on it: on a CPU
/// (fathom's), waiting for one, paced, on the wire, and the rest of their waits: the server's
/// answer (its own time on the statements, where it counts it) and the hand-offs around it (its
/// queue, its protocol work outside the statement, the wake-ups on both sides).
fn on_the_wire(m: &StepSummary, c: &GroupTime) -> Option<Vec<Share>> {
    let n = m.network.as_ref()?;
    let wire_us = n.wire_us_per_op?;
    let waited = c.wall_s - c.cpu_s - c.runq_s - c.paced_s.unwrap_or(0.0);
    let wire = (wire_us * m.ops as f64 / 1e6).min(waited.max(0.0));
    if wire / c.wall_s <= 0.5 {
        return None;
    }
    let answer = (waited - wire).max(0.0);
    let server = n
        .server_us_per_op
        .map_or(answer, |s| (s * m.ops as f64 / 1e6).min(answer));
    let f = |x: f64| x / c.wall_s;
    let mut shares = vec![
        Share {
            name: "harness cpu",
            fraction: f(c.cpu_s),
        },
        Share {
            name: "waiting for a cpu",
            fraction: f(c.runq_s),
        },
        Share {
            name: "network",
            fraction: f(wire),
        },
        Share {
            name: "server",
            fraction: f(server),
        },
    ];
    if n.server_us_per_op.is_some() {
        shares.push(Share {
            name: "hand-offs",
            fraction: f(answer - server),
        });
    }
    if let Some(p) = c.paced_s {
        shares.push(Share {
            name: "paced",
            fraction: f(p),
        });
    }
    Some(shares)
}

/// The verdict over a step's repeats (`None` without thread times); `median` is the repeats'
/// median step, whose host figures are the evidence; `limits` the device's calibrated limits.
pub fn judge(
    repeats: &[&StepSummary],
    median: &StepSummary,
    limits: Option<&DeviceLimits>,
) -> Option<Verdict> {
    let judged: Vec<(&'static str, Vec<Share>)> =
        repeats.iter().filter_map(|r| judged_shares(r)).collect();
    let whose = judged_shares(median).map(|j| j.0)?;
    let runs: Vec<Vec<Share>> = judged.into_iter().map(|j| j.1).collect();
    let bound = RULE.vote(&runs);
    let shares = mean_shares(&runs);
    let mut confidence = Confidence::of_margin(RULE.margin(&bound, &shares));
    let mut why = Vec::new();
    let mut lower = |reason: String| {
        confidence = confidence.lower();
        why.push(reason);
    };
    if runs.len() > 1 && runs.iter().any(|r| RULE.decide(r) != bound) {
        lower("repeats differ".into());
    }
    let named: Vec<&str> = match &bound {
        Bound::One(a) => vec![a],
        Bound::Two(a, b) => vec![a, b],
        _ => Vec::new(),
    };
    let unexplained = shares
        .iter()
        .find(|s| s.name == "off cpu")
        .map_or(0.0, |s| s.fraction);
    if named.contains(&"off cpu") {
        lower("the time off a CPU is not split (run with --waits)".into());
    } else if unexplained >= UNEXPLAINED {
        lower(format!("{:.0}% unexplained", 100.0 * unexplained));
    }
    if let Some(d) = median.host.disturbance(median.seconds) {
        lower(format!("disturbed: {d}"));
    }
    // Each named share explained: a two-part verdict says what held each part.
    let parts: Vec<String> = named
        .iter()
        .map(|name| {
            let q = qualify(name, median, limits);
            if let Some(soft) = q.soft {
                lower(soft);
            }
            match named.len() {
                1 => q.text,
                _ => format!("{name}: {}", q.text),
            }
        })
        .collect();
    let qualifier = (!parts.is_empty()).then(|| parts.join("; "));
    Some(Verdict {
        whose,
        bound,
        shares,
        qualifier,
        confidence,
        why,
    })
}

/// A qualifier and, when it rests on a soft limit, why it is soft.
struct Qualified {
    text: String,
    soft: Option<String>,
}

impl Qualified {
    fn plain(text: String) -> Qualified {
        Qualified { text, soft: None }
    }
}

/// Saturated or latency-bound, with the evidence, for the share `name` that bounded `m`.
fn qualify(name: &str, m: &StepSummary, limits: Option<&DeviceLimits>) -> Qualified {
    let h = &m.host;
    let idle = format!("host CPU {:.0}% idle", h.free_pct());
    // A full host is blamed on this run only when nothing else filled it.
    let full = |m: &StepSummary| match h.disturbance(m.seconds) {
        Some(d) => Qualified::plain(format!("interference: {d}; {idle}")),
        None => Qualified::plain(format!("saturated: {idle}")),
    };
    match name {
        "engine cpu" | "harness cpu" if h.free_pct() < CPU_SATURATED_IDLE_PCT => full(m),
        "engine cpu" | "harness cpu" => Qualified::plain(format!("latency-bound: {idle}")),
        "waiting for a cpu" => full(m),
        "paced" => Qualified::plain(match m.arrival_rate {
            Some(rate) => format!(
                "the offered load was met: {:.0} of {rate:.0} operations a second",
                m.ops_per_sec
            ),
            None => "the offered load was met".into(),
        }),
        "device" => device(m, limits),
        "commits" => commits(m, limits),
        "locks" => Qualified::plain(format!(
            "latency-bound: clients wait on each other ({:.1} context switches an operation)",
            m.per_op.cs.unwrap_or(0.0)
        )),
        "network" => network(m),
        "server" => Qualified::plain("latency-bound: waiting on the server's answer".into()),
        "hand-offs" => Qualified::plain(
            "latency-bound: the waits around the server's statements (its queue, its protocol \
             work, the wake-ups)"
                .into(),
        ),
        "sleep" => Qualified::plain("latency-bound: asleep in a timer (throttled?)".into()),
        "engine throttling" => Qualified::plain(
            "the engine held its clients back, asleep in a timer (RocksDB's write stalls when \
             its flushes or compactions fall behind; SQLite's busy handler waiting out a lock)"
                .into(),
        ),
        _ => unnamed_waits(m, limits),
    }
}

/// The network's qualifier: saturated at the profile's bandwidth cap, or latency-bound by the
/// round trips an operation makes (their count × the measured round trip, against the whole
/// operation); without a measured path, the clients waited on the other side.
fn network(m: &StepSummary) -> Qualified {
    let Some(n) = &m.network else {
        return Qualified::plain("latency-bound: waiting on the other side".into());
    };
    if let Some(used) = n.bandwidth_used.filter(|u| *u >= SATURATED) {
        return Qualified::plain(format!(
            "saturated: {:.0}% of the profile's bandwidth",
            100.0 * used
        ));
    }
    let server = (n.server_us_per_op)
        .map(|s| format!("; the server's own time {s:.0} µs"))
        .unwrap_or_default();
    match (n.rtt_us, n.wire_us_per_op) {
        (Some(rtt), Some(wire)) => Qualified::plain(format!(
            "latency-bound: {:.2} round trips an operation x {rtt:.0} µs = {wire:.0} µs of {:.0} µs{server}",
            n.round_trips_per_op, m.usec_op
        )),
        _ => Qualified::plain("latency-bound: waiting on the other side".into()),
    }
}

/// Time off a CPU nothing named: said as such, with the device's state where it was at its
/// limit meanwhile (on kernels whose per-thread IO delay is unreliable, `--waits` is what
/// names a wait for the device).
fn unnamed_waits(m: &StepSummary, limits: Option<&DeviceLimits>) -> Qualified {
    let plain = "latency-bound: waits --waits does not name";
    let d = device(m, limits);
    if d.text.starts_with("saturated") {
        return Qualified {
            text: format!("{plain}; meanwhile the device was {}", d.text),
            soft: d.soft,
        };
    }
    Qualified::plain(plain.into())
}

fn saturated_or_latency(util: f64) -> &'static str {
    if util >= SATURATED {
        "saturated"
    } else {
        "latency-bound"
    }
}

/// The device against its calibrated limit: random reads against the IOPS at the observed
/// queue depth, bandwidth against the sequential limits; the nearest its limit decides.
fn device(m: &StepSummary, limits: Option<&DeviceLimits>) -> Qualified {
    let h = &m.host;
    let (rps, qd) = (h.rps.unwrap_or(0.0), h.aqu_sz.unwrap_or(1.0));
    let seen = format!("{rps:.0} reads/s at queue depth {qd:.1}");
    let Some(l) = limits else {
        return Qualified::plain(format!(
            "{seen}; the device is not calibrated (fathom calibrate)"
        ));
    };
    let mut uses: Vec<(f64, String, Option<&fathom_schema::result::device::Figure>)> =
        (l.uses(h).into_iter())
            .map(|u| {
                let (share, x, limit) = (u.share(), u.seen, u.limit);
                let text = match u.what {
                    Used::Reads => format!(
                        "{seen}, {:.0}% of the {limit:.0} {}",
                        100.0 * share,
                        whose(l, "measured there")
                    ),
                    Used::Read | Used::Written => format!(
                        "{x:.0} MiB/s {}, {:.0}% of the {limit:.0} {}",
                        if u.what == Used::Read {
                            "read"
                        } else {
                            "written"
                        },
                        100.0 * share,
                        whose(l, "measured")
                    ),
                };
                (share, text, u.figure)
            })
            .collect();
    uses.sort_by(|a, b| b.0.total_cmp(&a.0));
    match uses.into_iter().next() {
        Some((util, evidence, figure)) => Qualified {
            text: format!("{}: {evidence}", saturated_or_latency(util)),
            soft: figure.and_then(|f| soft(l, f, util)),
        },
        None => Qualified::plain(seen),
    }
}

/// Where a limit comes from: the device profile the run was held to, else the calibration
/// (`measured`, as the sentence says it).
fn whose(l: &DeviceLimits, measured: &str) -> String {
    match &l.profile {
        Some(p) => format!("device profile {p} allows"),
        None => measured.to_string(),
    }
}

/// Commits against the device's synced-write rate: flushes a second (writes where the kernel
/// does not count flushes).
fn commits(m: &StepSummary, limits: Option<&DeviceLimits>) -> Qualified {
    let (rate, what) = match (m.host.fps, m.host.wps) {
        (Some(f), _) if f > 0.0 => (f, "flushes/s"),
        (_, Some(w)) => (w, "writes/s"),
        _ => (0.0, "flushes/s"),
    };
    let seen = format!("{rate:.0} {what}");
    match limits.and_then(|l| Some((l, l.get("syncwrite")?))) {
        Some((l, f)) => Qualified {
            text: format!(
                "{}: {seen}, {:.0}% of the {:.0} synced writes/s {}",
                saturated_or_latency(rate / f.median),
                100.0 * rate / f.median,
                f.median,
                whose(l, "measured")
            ),
            soft: soft(l, f, rate / f.median),
        },
        None => Qualified::plain(format!(
            "{seen}; the device is not calibrated (fathom calibrate)"
        )),
    }
}

/// Why a qualifier at `util` of figure `f` is less sure: the figure is soft (a host-cached
/// disk, or repeats that spread wide) and the step came near enough to it that a truer limit
/// could change saturated into latency-bound or back.
fn soft(l: &DeviceLimits, f: &fathom_schema::result::device::Figure, util: f64) -> Option<String> {
    (l.soft(f) && util >= SATURATED / 2.0).then(|| {
        format!(
            "{}'s {} is a soft limit ({})",
            l.device,
            f.name,
            if l.virtual_disk {
                "a host-cached disk"
            } else {
                "its repeats spread wide"
            }
        )
    })
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
