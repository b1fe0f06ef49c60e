//! Property tests of the experiment loader: files made of the real keys with values of every
//! TOML type, lines dropped and unknown keys added, all load or fail naming the file; none
//! panics.

use super::Experiment;
use proptest::prelude::*;

/// A TOML value of any type, in the forms experiment files use and others.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..40).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        "\"[a-z0-9 ._,-]{0,12}\"",
        Just("true".to_string()),
        Just("1.5".to_string()),
        proptest::collection::vec(0i64..5, 0..3).prop_map(|v| format!("{v:?}")),
        Just("[\"a\", 2]".to_string()),
        Just("{ num_keys = 1000, steps = \"fillseq\" }".to_string()),
        Just("{ nosuch = 1 }".to_string()),
    ]
}

const TOP: &[&str] = &[
    "name",
    "description",
    "clients",
    "repeats",
    "order",
    "duration",
    "interval",
    "memory_limit",
    "device",
    "network",
    "rate",
    "arrivals",
    "queue",
    "threads",
];
const SETUP: &[&str] = &[
    "name",
    "engine",
    "options",
    "options_file",
    "settings",
    "memory_limit",
    "device",
    "network",
    "nosuch",
];
const WORKLOAD: &[&str] = &["name", "params", "duration", "nosuch"];

/// `key = value` lines for some of `keys`, with names and engines likely to resolve.
fn table(keys: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::collection::vec((0..keys.len(), value(), any::<bool>()), 0..6).prop_map(
        move |lines| {
            lines
                .into_iter()
                .map(|(k, v, plausible)| {
                    let v = match (keys[k], plausible) {
                        ("name", true) => "\"n\"".to_string(),
                        ("engine", true) => "\"null\"".to_string(),
                        _ => v,
                    };
                    format!("{} = {v}\n", keys[k])
                })
                .collect()
        },
    )
}

fn file() -> impl Strategy<Value = String> {
    (
        table(TOP),
        proptest::collection::vec(table(SETUP), 0..3),
        proptest::collection::vec(table(WORKLOAD), 0..2),
    )
        .prop_map(|(top, setups, workloads)| {
            let mut text = top;
            for s in setups {
                text += &format!("[[setup]]\n{s}");
            }
            for w in workloads {
                text += &format!("[[workload]]\n{w}");
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1000), ..ProptestConfig::default() })]

    #[test]
    fn any_experiment_file_loads_or_names_itself(text in file()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.toml");
        std::fs::write(&path, &text).unwrap();
        if let Err(e) = Experiment::load(&path, &crate::DriveInput::default()) {
            let msg = format!("{e:#}");
            prop_assert!(msg.contains("e.toml"), "{text}\n=> {msg}");
        }
    }
}

/// `PROPTEST_CASES` when set (bench/faults.sh asks for many), else the bounded count CI runs.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
