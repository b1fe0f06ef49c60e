//! A run's steps in order: for each, the harness's own cost measured on the null engine (in
//! the engine's family, so the same client code runs), the database reopened where the step
//! asks, the step prepared (its tables and shared state) and driven on the engine, and its
//! summary written before the next starts.

use crate::findmax::{self, FindMax, Target};
use crate::open::OpenEngine;
use crate::place::Observer;
use crate::profile::Profiler;
use crate::resolve::RunSpec;
use anyhow::Context;
use fathom_api::family::{Db, Engine};
use fathom_api::step::StepPlan;
use fathom_api::stop::Stop;
use fathom_api::work::WorkMeter;
use fathom_measure::driver::{self, StepRun, Watch};
use fathom_measure::sample::Sampler;
use fathom_schema::result::{IntervalRecord, StepSummary};
use fathom_schema::store::RunDir;
use fathom_workloads::Workload;
use std::time::Duration;

/// How long the harness's cost is measured before each step.
const CALIBRATION: Duration = Duration::from_millis(200);

pub struct Steps<'a> {
    pub spec: &'a RunSpec,
    pub calibrate: bool,
    pub workload: &'a dyn Workload,
    pub engine: &'a mut OpenEngine,
    pub sampler: &'a Sampler,
    pub run_dir: &'a RunDir,
    /// `--profile`: samples each step's measured span.
    pub profiler: Option<&'a Profiler>,
    /// When each step may start (other client hosts' readiness).
    pub gate: &'a crate::gate::Gate,
    /// Asked to stop: the current step ends early and no other starts.
    pub stop: &'a Stop,
    /// `--network`: the path whose cost each step's meter measures.
    pub network: Option<&'a crate::network::RunNetwork>,
}

/// The steps run so far, and where the harness's cost is measured.
struct Ran<'n> {
    /// The last step's place in the run, from 1 (a search adds steps).
    index: usize,
    /// Steps the run has, as far as known.
    total: usize,
    null: Db<'n>,
}

impl Steps<'_> {
    pub fn run(&mut self, observer: &mut dyn Observer) -> anyhow::Result<()> {
        let null = fathom_engines::null::Null::new(self.run_dir.path.join(".null"));
        let null_db = null.db(self.engine().db().family())?;
        let mut ran = Ran {
            index: 0,
            total: self.workload.steps().len(),
            null: null_db,
        };
        for (i, plan) in self.workload.steps().iter().enumerate() {
            if self.stop.requested() {
                break;
            }
            let plan = self.driven(plan);
            match &self.spec.find_max {
                Some(f) if plan.runs_for_a_time() => {
                    self.search(i, &plan, f, &mut ran, observer)?
                }
                _ => {
                    self.one(i, &plan, None, &mut ran, observer)?;
                }
            }
        }
        Ok(())
    }

    /// Runs workload step `i` as `plan`, the run's next step, and saves its summary (with its
    /// probe's verdict when it is one of a search).
    fn one(
        &mut self,
        i: usize,
        plan: &StepPlan,
        probe: Option<(&str, &Target, Option<f64>, findmax::Phase)>,
        ran: &mut Ran<'_>,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<StepSummary> {
        ran.index += 1;
        ran.total = ran.total.max(ran.index);
        let added = self
            .engine
            .prepare(plan)
            .with_context(|| format!("before step {}", plan.name))?;
        let harness_ns = self.harness_cost(ran.null, i, plan)?;
        observer.step_started(ran.index, ran.total, plan);
        let mut summary = self.step(i, ran.index, plan, observer)?;
        summary.harness_ns_per_op = harness_ns;
        summary.engine_options = added;
        if let Some((step, target, rate, phase)) = probe {
            summary.probe = Some(findmax::probe(step, target, &summary, rate, phase));
        }
        self.run_dir.write_summary(&summary)?;
        observer.step_finished(&summary);
        Ok(summary)
    }

    /// `--find-max`: step `i` closed loop for its capacity, then open loop at the rates the
    /// search asks for, each probe a step of the run named for its rate (`run@1200`), then the
    /// confirmation of the best (`run@1200.settle1`, `run@1200.c1` ...).
    fn search(
        &mut self,
        i: usize,
        plan: &StepPlan,
        f: &FindMax,
        ran: &mut Ran<'_>,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<()> {
        // RunSpec::check refused a bad target before anything ran; a spec read back from its
        // serialized form (another process's, another host's) was not checked here.
        let kinds: Vec<&str> = plan.kinds.list().iter().map(|k| k.name).collect();
        f.target
            .check_kinds(&kinds)
            .map_err(|e| anyhow::anyhow!("step {}: {e}", plan.name))?;
        let own: usize = (plan.groups.iter())
            .filter(|g| g.rate.is_some())
            .map(|g| g.clients)
            .sum();
        if own >= plan.clients {
            anyhow::bail!(
                "--find-max: every client of step {} keeps a rate of its own (the workload \
                 file's); leave the rate out of the file to search for one",
                plan.name
            );
        }
        let name = plan.name.as_str();
        let closed = StepPlan {
            name: format!("{name}@max"),
            open_loop: None,
            ..plan.clone()
        };
        let capacity = self
            .one(
                i,
                &closed,
                Some((name, &f.target, None, findmax::Phase::Search)),
                ran,
                observer,
            )?
            .ops_per_sec;
        let mut search = findmax::Search::default();
        let mut next = search.next(None, capacity);
        while let Some(rate) = next {
            if self.stop.requested() {
                return Ok(());
            }
            let (met, headroom) =
                self.probe(i, plan, f, (rate, findmax::Phase::Search, 0), ran, observer)?;
            next = search.next(Some((rate, met, headroom)), capacity);
        }
        // The confirmations of each rate are numbered from 1, after its settling probe.
        let (mut confirm, mut n) = (search.confirm(None), 0);
        while let Some((rate, phase)) = confirm {
            if self.stop.requested() {
                break;
            }
            n = if phase == findmax::Phase::Settle {
                0
            } else {
                n + 1
            };
            let met = self.probe(i, plan, f, (rate, phase, n), ran, observer)?;
            confirm = search.confirm((phase == findmax::Phase::Confirm).then_some(met));
        }
        Ok(())
    }

    /// One open-loop probe of step `i` at a rate, for a phase of the search (its `n`th of that
    /// phase at that rate): whether it met the target, and its headroom.
    fn probe(
        &mut self,
        i: usize,
        plan: &StepPlan,
        f: &FindMax,
        (rate, phase, n): (f64, findmax::Phase, usize),
        ran: &mut Ran<'_>,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<(bool, Option<f64>)> {
        let name = plan.name.as_str();
        let probe = StepPlan {
            name: format!(
                "{name}@{}{}",
                findmax::rate_name(rate),
                findmax::suffix(phase, n)
            ),
            open_loop: Some(f.open_loop(rate)),
            ..plan.clone()
        };
        let s = self.one(
            i,
            &probe,
            Some((name, &f.target, Some(rate), phase)),
            ran,
            observer,
        )?;
        let p = s.probe.as_ref();
        Ok((p.is_some_and(|p| p.met), p.and_then(|p| p.headroom)))
    }

    fn engine(&self) -> &Engine {
        self.engine
            .get()
            .expect("open: a failed reopen ends the run")
    }

    /// The step as the spec drives it. A `--rate` holds for timed steps (a request phase),
    /// not for steps that run a fixed amount of work to its end (a load), as LinkbenchX rates
    /// its requests only; it replaces a rate the workload gave its step (LinkBench's
    /// `requestrate`).
    fn driven(&self, plan: &StepPlan) -> StepPlan {
        let mut plan = plan.clone();
        if plan.runs_for_a_time() && self.spec.open_loop.is_some() {
            plan.open_loop = self.spec.open_loop;
        }
        plan
    }

    /// The harness's CPU per operation of step `i`, measured on the null engine.
    fn harness_cost(&self, null: Db<'_>, i: usize, plan: &StepPlan) -> anyhow::Result<Option<f64>> {
        if !self.calibrate || plan.clients == 0 {
            return Ok(None);
        }
        let work = self.engine().target().work_meter();
        calibrate(self.workload, (null, work), i, plan, self.stop)
    }

    fn step(
        &self,
        i: usize,
        index: usize,
        plan: &StepPlan,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<fathom_schema::result::StepSummary> {
        let crew = self
            .workload
            .step(self.engine().db(), i, self.stop)?
            .crew()?;
        // Clients connected and ready: wait here for the other hosts, if any.
        self.gate.wait(index, &plan.name, self.stop)?;
        // Attached once the clients are connected (a server's backends exist), events off
        // until the driver says the measured span begins.
        let mut profile = self
            .profiler
            .map(|p| p.start(&self.run_dir.path, index, &plan.name))
            .transpose()?;
        let mut meter = self.network.map(crate::network::RunNetwork::meter);
        let mut on_interval = |r: &IntervalRecord| observer.interval(r);
        let mut watches: Vec<&mut dyn Watch> = Vec::new();
        watches.extend(profile.iter_mut().map(|p| p as &mut dyn Watch));
        watches.extend(meter.iter_mut().map(|m| m as &mut dyn Watch));
        let mut summary = driver::run_step(StepRun {
            plan,
            index,
            crew,
            target: self.engine().target(),
            sampler: self.sampler,
            interval: self.spec.interval,
            files: self.run_dir.step_files(index, &plan.name),
            on_interval: &mut on_interval,
            watches,
            stop: self.stop,
            waits: self.spec.waits,
        })?;
        if let Some(p) = profile {
            summary.profile = Some(p.finish()?);
        }
        let statements = (summary.engine_stats.other)
            .get(fathom_api::target::STATEMENT_TIME_US)
            .copied();
        summary.network = meter.and_then(|m| m.finish(summary.ops, summary.seconds, statements));
        Ok(summary)
    }
}

/// The harness's CPU per operation of step `i` of `workload`: its first client driven for
/// `CALIBRATION` on `null` (the null engine in the run's family), alone. The step gets a stop
/// token of its own, requested when the budget ends (or `outer` is), so a client that waits
/// — a settle wait, a gate on a helper the calibration has none of — stops waiting then.
pub fn calibrate(
    workload: &dyn Workload,
    (null, work): (Db<'_>, Option<&dyn WorkMeter>),
    i: usize,
    plan: &StepPlan,
    outer: &Stop,
) -> anyhow::Result<Option<f64>> {
    let stop = Stop::new();
    let step = workload.step(null, i, &stop)?;
    let Some(client) = step.clients()?.into_iter().next() else {
        return Ok(None);
    };
    outer.within(&stop, CALIBRATION, || {
        let budget = (CALIBRATION, plan.ops_per_client);
        driver::harness_cost(client, &plan.kinds, budget, work)
    })
}
