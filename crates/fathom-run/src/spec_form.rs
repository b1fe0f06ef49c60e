//! A `RunSpec` as it crosses to a run's own process: the engine and the workload by their
//! registry names, everything else as resolved. Reading it back checks the names and the
//! allocator again, on the machine that runs it.

use crate::input::AllocatorName;
use crate::resolve::{Allocator, RunSpec, Setup};
use fathom_api::step::OpenLoop;
use fathom_workloads::params::Params;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The serialized form of a `RunSpec`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecForm {
    setup: SetupForm,
    workload: String,
    title: String,
    params: BTreeMap<String, String>,
    clients: usize,
    interval: Duration,
    open_loop: Option<OpenLoop>,
    #[serde(default)]
    find_max: Option<crate::findmax::FindMax>,
    implied: Vec<String>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(
        default,
        deserialize_with = "fathom_measure::sample::waits::deserialize_method"
    )]
    waits: Option<fathom_measure::sample::waits::Method>,
    #[serde(default)]
    live: crate::input::LiveTargets,
}

/// The serialized form of a resolved `Setup`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetupForm {
    name: String,
    engine: String,
    options: String,
    settings: BTreeMap<String, String>,
    memory_limit: Option<u64>,
    #[serde(default)]
    device: Option<fathom_schema::result::device::DeviceProfile>,
    #[serde(default)]
    network: Option<fathom_schema::result::network::NetworkProfile>,
    allocator: Option<AllocatorName>,
    profile_hz: Option<u32>,
}

impl From<RunSpec> for SpecForm {
    fn from(spec: RunSpec) -> SpecForm {
        let s = spec.setup;
        SpecForm {
            setup: SetupForm {
                name: s.name,
                engine: s.engine.name.to_string(),
                options: s.options,
                settings: s.settings,
                memory_limit: s.memory_limit,
                device: s.device,
                network: s.network,
                allocator: s.allocator.map(|a| a.which),
                profile_hz: s.profile_hz,
            },
            workload: spec.workload.name.to_string(),
            title: spec.title,
            params: spec.params.given().clone(),
            clients: spec.clients,
            interval: spec.interval,
            open_loop: spec.open_loop,
            find_max: spec.find_max,
            implied: spec.implied,
            warnings: spec.warnings,
            waits: spec.waits,
            live: spec.live,
        }
    }
}

/// A `RunSpec` serializes as its form, so this module, not `resolve`, knows the form.
impl Serialize for RunSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        SpecForm::from(self.clone()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for RunSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RunSpec::try_from(SpecForm::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<SpecForm> for RunSpec {
    type Error = anyhow::Error;

    fn try_from(f: SpecForm) -> anyhow::Result<RunSpec> {
        let s = f.setup;
        let engine = fathom_engines::find(&s.engine)?;
        let allocator = s
            .allocator
            .map(|a| Allocator::named(a, engine, "allocator"))
            .transpose()?
            .flatten();
        Ok(RunSpec {
            setup: Setup {
                name: s.name,
                engine,
                options: s.options,
                settings: s.settings,
                memory_limit: s.memory_limit,
                device: s.device,
                network: s.network,
                allocator,
                profile_hz: s.profile_hz,
            },
            workload: fathom_workloads::find(&f.workload)?,
            title: f.title,
            params: Params::new(f.params),
            clients: f.clients,
            interval: f.interval,
            open_loop: f.open_loop,
            find_max: f.find_max,
            implied: f.implied,
            warnings: f.warnings,
            waits: f.waits,
            live: f.live,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::input::{DriveInput, SetupInput, WorkloadInput};
    use crate::resolve::{resolve, Keys, RunSpec};
    use std::path::Path;

    /// A spec read back from its form is the spec: what a run's own process runs is what the
    /// command resolved.
    #[test]
    fn a_spec_crosses_as_its_form() {
        let setup = SetupInput {
            name: "a".into(),
            engine: "null".into(),
            ..Default::default()
        };
        let workload = WorkloadInput {
            name: "dbbench".into(),
            params: [("num_keys".to_string(), "1000".to_string())].into(),
        };
        let drive = DriveInput {
            rate: Some(100.0),
            ..Default::default()
        };
        let keys = Keys::Flags;
        let spec = resolve(&setup, &workload, &drive, 3, &keys, Path::new(".")).unwrap();
        let text = serde_json::to_string(&spec).unwrap();
        let back: RunSpec = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        assert_eq!(
            (back.setup.engine.name, back.workload.name),
            ("null", "dbbench")
        );
        assert_eq!(back.params.given()["num_keys"], "1000");
        assert_eq!(back.open_loop, spec.open_loop);
        let renamed = text.replace("\"null\"", "\"nosuch\"");
        let e = serde_json::from_str::<RunSpec>(&renamed).unwrap_err();
        assert!(e.to_string().contains("unknown engine `nosuch`"), "{e}");
    }
}
