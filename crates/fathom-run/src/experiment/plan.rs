//! `fathom run FILE --dry-run`: what an experiment would run, before it runs. Its cells and
//! their steps with each step's length, the time the timed steps take at `min` and at `max`
//! rounds, and the engine releases its setups name, fetched or not.

use super::Experiment;
use fathom_api::units::format_duration;
use std::fmt::Write;
use std::time::Duration;

/// One step of a run as the workload plans it: its name and how it ends.
fn step_line(step: &fathom_api::step::StepPlan) -> (String, Duration) {
    let warmup = if step.warmup.is_zero() {
        String::new()
    } else {
        format!(" after {} warmup", format_duration(step.warmup))
    };
    match (step.duration, step.ops_per_client) {
        (Some(d), _) => (
            format!("{} {}{warmup}", step.name, format_duration(d)),
            step.timed().unwrap_or_default(),
        ),
        (None, Some(n)) => (format!("{} ({n} ops a client)", step.name), Duration::ZERO),
        (None, None) => (format!("{} (until done)", step.name), Duration::ZERO),
    }
}

/// Hours, minutes and seconds, as a person reads a plan.
fn human(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, _) => format!("{h}h {m:02}m"),
    }
}

/// `n` things, in the plural unless one.
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The plan, as printed.
pub fn plan(exp: &Experiment) -> anyhow::Result<String> {
    let rounds = &exp.rounds;
    let mut out = String::new();
    let per_round = exp.cells.iter().filter(|c| c.repeat == 1).count();
    writeln!(
        out,
        "experiment {}: {}, {}, {}: {} a round",
        exp.name,
        count(exp.setups, "setup"),
        count(exp.workloads, "workload"),
        count(exp.client_counts.len(), "client count"),
        count(per_round, "run")
    )?;
    if rounds.adaptive() {
        writeln!(
            out,
            "rounds: {} to {}, another while a comparison with {} is undecided at ±{:.1}%{}",
            rounds.min,
            rounds.max,
            rounds.base.as_deref().unwrap_or("the first setup"),
            rounds.threshold * 100.0,
            if rounds.decide.is_empty() {
                String::new()
            } else {
                format!(" (deciding on {})", rounds.decide.join(", "))
            }
        )?;
    } else {
        writeln!(out, "rounds: {}", rounds.min)?;
    }
    if exp.setups > 1 {
        writeln!(
            out,
            "setups: {}",
            match exp.setup_order {
                super::SetupOrder::Rotate =>
                    "in an order rotated from round to round (setup_order = \"rotate\")",
                super::SetupOrder::Shuffle =>
                    "in an order drawn per round (setup_order = \"shuffle\")",
                super::SetupOrder::Fixed =>
                    "in the same order every round (setup_order = \"fixed\")",
            }
        )?;
    }
    let mut round = Duration::ZERO;
    let mut open_ended = 0;
    writeln!(out, "\nruns of the first round, in order:")?;
    for cell in exp.cells.iter().filter(|c| c.repeat == 1) {
        let spec = exp.spec(cell);
        let built = spec.build()?;
        let mut steps = Vec::new();
        for s in built.steps() {
            let (line, timed) = step_line(s);
            if timed.is_zero() {
                open_ended += 1;
            }
            round += timed;
            steps.push(line);
        }
        writeln!(
            out,
            "  {}: {} {}, {}: {}",
            exp.cell_name(cell).trim_end_matches(".r1"),
            spec.setup.engine.name,
            spec.workload.name,
            count(cell.clients, "client"),
            steps.join(", ")
        )?;
    }
    let at = |n: usize| human(round * n as u32);
    writeln!(
        out,
        "\ntimed steps: {} a round; {} at {} rounds{}",
        human(round),
        at(rounds.min),
        rounds.min,
        if rounds.adaptive() {
            format!(", {} at {} rounds", at(rounds.max), rounds.max)
        } else {
            String::new()
        }
    )?;
    if open_ended > 0 {
        writeln!(
            out,
            "  and {open_ended} steps a round that end on a count (loads, fills): their time is known once run"
        )?;
    }
    releases(exp, &mut out)?;
    Ok(out)
}

/// The engine releases the setups name, and whether each is fetched.
fn releases(exp: &Experiment, out: &mut String) -> anyhow::Result<()> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for cell in exp.cells.iter().filter(|c| c.repeat == 1) {
        let setup = &exp.spec(cell).setup;
        let engine = setup.engine.name.to_string();
        if let Some(v) = setup.settings.get("version") {
            if !seen.contains(&(engine.clone(), v.clone())) {
                seen.push((engine, v.clone()));
            }
        }
    }
    if seen.is_empty() {
        return Ok(writeln!(out, "engine releases: the ones built in")?);
    }
    writeln!(out, "engine releases:")?;
    for (engine, version) in seen {
        let dir = fathom_engines::fetched::engines_dir()
            .join(&engine)
            .join(&version);
        if dir.exists() {
            writeln!(out, "  {engine} {version}: fetched ({})", dir.display())?;
        } else {
            writeln!(
                out,
                "  {engine} {version}: to fetch (scripts/fathom does; or scripts/fetch-engine.sh {engine} {version})"
            )?;
        }
    }
    Ok(())
}
