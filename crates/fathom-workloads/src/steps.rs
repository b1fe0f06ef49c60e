//! A workload's steps, each its plan beside the work that is the workload's own, pushed and
//! read together so that a step's plan and its work cannot drift apart by position.

use fathom_api::step::StepPlan;

/// The steps of a workload in order: what the runner reads of each (`plans`) and what the
/// workload does in it (`W`: which loader, which test, which key space).
#[derive(Debug)]
pub struct Steps<W> {
    plans: Vec<StepPlan>,
    work: Vec<W>,
}

impl<W> Default for Steps<W> {
    fn default() -> Steps<W> {
        Steps {
            plans: Vec::new(),
            work: Vec::new(),
        }
    }
}

impl<W> Steps<W> {
    /// Appends a step: its plan and its work.
    pub fn push(&mut self, plan: StepPlan, work: W) {
        self.plans.push(plan);
        self.work.push(work);
    }

    /// Every step's plan, in order (the runner's view).
    pub fn plans(&self) -> &[StepPlan] {
        &self.plans
    }

    /// Step `index`'s plan.
    pub fn plan(&self, index: usize) -> &StepPlan {
        &self.plans[index]
    }

    /// Step `index`'s work.
    pub fn work(&self, index: usize) -> &W {
        &self.work[index]
    }

    /// Every step's work, in order.
    pub fn works(&self) -> impl Iterator<Item = &W> {
        self.work.iter()
    }

    pub fn len(&self) -> usize {
        self.plans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }
}
