//! fathom-run: running a benchmark as a library. `resolve` turns what a user wrote (command
//! flags or an experiment file) into checked `RunSpec`s through one path, `runner` executes a
//! spec into a run directory, and `experiment` runs a matrix of specs with resume. The `fathom`
//! command and the end-to-end tests both drive it.

pub mod child;
pub mod device_profile;
pub mod experiment;
pub mod findmax;
pub mod gate;
pub mod history;
pub mod input;
pub mod live;
mod named;
pub mod network;
mod open;
mod place;
pub mod profile;
pub mod records;
pub mod resolve;
pub mod runner;
mod spec_form;
mod steps;
pub use steps::calibrate;
pub mod supervise;

pub use input::{DriveInput, SetupInput, WorkloadInput};
pub use resolve::{read_options_file, resolve, resolve_setup, Keys, RunSpec, Setup};
pub use runner::{run, Observer, Place, Quiet};
