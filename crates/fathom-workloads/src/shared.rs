//! State a step's clients share (a work queue, id counters), made by the workload's
//! `prepare_step` before the step's clients are built, so each step starts from the database
//! and the harness's calibration on the null engine (prepared first) never takes the real
//! step's state.

use std::sync::{Arc, Mutex};

/// The prepared step's shared value.
pub struct PerStep<T> {
    current: Mutex<Option<(usize, Arc<T>)>>,
}

impl<T> Default for PerStep<T> {
    fn default() -> Self {
        PerStep {
            current: Mutex::new(None),
        }
    }
}

impl<T> PerStep<T> {
    /// Makes `value` the state of `step`, replacing what an earlier preparation made.
    pub fn set(&self, step: usize, value: T) {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some((step, Arc::new(value)));
    }

    /// The state of `step`, which must have been prepared.
    pub fn get(&self, step: usize) -> anyhow::Result<Arc<T>> {
        match &*self.current.lock().unwrap_or_else(|p| p.into_inner()) {
            Some((s, v)) if *s == step => Ok(Arc::clone(v)),
            _ => anyhow::bail!("step {step}'s clients were built before the step was prepared"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_share_what_the_preparation_made() {
        let p = PerStep::default();
        assert!(p.get(0).is_err(), "nothing before the step is prepared");
        p.set(0, 1);
        assert!(Arc::ptr_eq(&p.get(0).unwrap(), &p.get(0).unwrap()));
        // Calibration prepares on the null engine, then the real step prepares afresh.
        p.set(0, 3);
        assert_eq!(*p.get(0).unwrap(), 3);
        assert!(p.get(1).is_err());
    }
}
