//! State a step's clients share (a work queue, id counters), made anew when the step's first
//! client is built: each step starts from the database, and the harness's calibration on the
//! null engine (which builds one client first) never takes the real step's state.

use std::sync::{Arc, Mutex};

/// The current step's shared value.
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
    /// The value for client `thread` of `step`: `make` builds a fresh one for thread 0 (or a
    /// step not seen yet); the step's other clients and its background writer share it.
    pub fn get(&self, step: usize, thread: usize, make: impl FnOnce() -> T) -> Arc<T> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        match &*current {
            Some((s, v)) if *s == step && thread != 0 => Arc::clone(v),
            _ => {
                let v = Arc::new(make());
                *current = Some((step, Arc::clone(&v)));
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_client_makes_it_and_the_others_share_it() {
        let p = PerStep::default();
        let a = p.get(0, 0, || 1);
        assert!(Arc::ptr_eq(&a, &p.get(0, 1, || 2)));
        // A calibration client 0 then the real client 0: the real one is fresh.
        let b = p.get(0, 0, || 3);
        assert_eq!(*b, 3);
        assert_eq!(
            *p.get(1, 5, || 4),
            4,
            "a new step is made whatever the thread"
        );
    }
}
