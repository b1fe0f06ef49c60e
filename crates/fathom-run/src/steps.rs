//! A run's steps in order: for each, the harness's own cost measured on the null engine (in
//! the engine's family, so the same client code runs), the database reopened where the step
//! asks, the step prepared (its tables and shared state) and driven on the engine, and its
//! summary written before the next starts.

use crate::open::OpenEngine;
use crate::place::Observer;
use crate::profile::Profiler;
use crate::resolve::RunSpec;
use anyhow::Context;
use fathom_core::driver::{self, StepPlan, StepRun, Watch};
use fathom_core::family::{Db, Engine};
use fathom_core::result::IntervalRecord;
use fathom_core::sample::Sampler;
use fathom_core::stop::Stop;
use fathom_core::store::RunDir;
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
}

impl Steps<'_> {
    pub fn run(&mut self, observer: &mut dyn Observer) -> anyhow::Result<()> {
        let null = fathom_engines::null::Null::new(self.run_dir.path.join(".null"));
        let null_db = match self.engine() {
            Engine::Kv(_) => Db::Kv(&null),
            Engine::Sql(_) => Db::Sql(&null),
            Engine::Doc(_) => Db::Doc(&null),
        };
        let total = self.workload.steps().len();
        for (i, plan) in self.workload.steps().iter().enumerate() {
            if self.stop.requested() {
                break;
            }
            let plan = self.driven(plan);
            let added = self
                .engine
                .prepare(&plan)
                .with_context(|| format!("before step {}", plan.name))?;
            let harness_ns = self.harness_cost(null_db, i, &plan)?;
            observer.step_started(i + 1, total, &plan);
            let mut summary = self.step(i, &plan, observer)?;
            summary.harness_ns_per_op = harness_ns;
            summary.engine_options = added;
            self.run_dir.write_summary(&summary)?;
            observer.step_finished(&summary);
        }
        Ok(())
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
        if plan.clients > 0 && plan.duration.is_some() && self.spec.open_loop.is_some() {
            plan.open_loop = self.spec.open_loop;
        }
        plan
    }

    /// The harness's CPU per operation of step `i`, measured on the null engine.
    fn harness_cost(&self, null: Db<'_>, i: usize, plan: &StepPlan) -> anyhow::Result<Option<f64>> {
        if !self.calibrate || plan.clients == 0 {
            return Ok(None);
        }
        let step = self.workload.step(null, i, self.stop)?;
        let Some(client) = step.clients()?.into_iter().next() else {
            return Ok(None);
        };
        driver::harness_cost(client, &plan.kinds, CALIBRATION, plan.ops_per_client)
    }

    fn step(
        &self,
        i: usize,
        plan: &StepPlan,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<fathom_core::result::StepSummary> {
        let crew = self
            .workload
            .step(self.engine().db(), i, self.stop)?
            .crew()?;
        // Clients connected and ready: wait here for the other hosts, if any.
        self.gate.wait(i + 1, &plan.name, self.stop)?;
        // Attached once the clients are connected (a server's backends exist), events off
        // until the driver says the measured span begins.
        let mut profile = self
            .profiler
            .map(|p| p.start(&self.run_dir.path, i + 1, &plan.name))
            .transpose()?;
        let mut on_interval = |r: &IntervalRecord| observer.interval(r);
        let mut summary = driver::run_step(StepRun {
            plan,
            index: i + 1,
            crew,
            target: self.engine().target(),
            sampler: self.sampler,
            interval: self.spec.interval,
            files: self.run_dir.step_files(i + 1, &plan.name),
            on_interval: &mut on_interval,
            watch: profile.as_mut().map(|p| p as &mut dyn Watch),
            stop: self.stop,
        })?;
        if let Some(p) = profile {
            summary.profile = Some(p.finish()?);
        }
        Ok(summary)
    }
}
