//! The crates' layers: which fathom crates each may depend on (docs/architecture.md's table).
//! An engine builds against `fathom-api` alone, a workload against it and the result schema
//! (never the driver that measures it), the result schema holds no sampler, the statistics run
//! no sampler and the measurement judges nothing: a dependency added across a
//! layer fails here, naming the crate and the dependency.

use std::collections::BTreeMap;
use std::path::Path;

/// Each crate and the fathom crates its `[dependencies]` may name.
const LAYERS: &[(&str, &[&str])] = &[
    ("fathom-macros", &[]),
    ("fathom-bpf", &[]),
    ("fathom-api", &["fathom-macros"]),
    ("fathom-schema", &["fathom-api", "fathom-macros"]),
    ("fathom-stats", &["fathom-api", "fathom-schema"]),
    (
        "fathom-measure",
        &["fathom-api", "fathom-macros", "fathom-schema", "fathom-bpf"],
    ),
    ("fathom-engines", &["fathom-api"]),
    (
        "fathom-workloads",
        &[
            "fathom-api",
            "fathom-schema",
            "fathom-measure",
            "fathom-engines",
        ],
    ),
    (
        "fathom-report",
        &[
            "fathom-api",
            "fathom-schema",
            "fathom-stats",
            "fathom-workloads",
        ],
    ),
    (
        "fathom-run",
        &[
            "fathom-api",
            "fathom-schema",
            "fathom-stats",
            "fathom-measure",
            "fathom-engines",
            "fathom-workloads",
        ],
    ),
];

/// The fathom crates named in a manifest's `[dependencies]` table.
fn fathom_dependencies(manifest: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && line.starts_with("fathom-") {
            let name = line.split(['.', ' ', '=']).next().unwrap_or_default();
            out.push(name.to_string());
        }
    }
    out
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let layers: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(crates).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        if name == "fathom-cli" {
            continue;
        }
        let Some(allowed) = layers.get(name.as_str()) else {
            wrong.push(format!(
                "{name}: not in LAYERS (say which crates it may use)"
            ));
            continue;
        };
        for dep in fathom_dependencies(&manifest) {
            if !allowed.contains(&dep.as_str()) {
                wrong.push(format!("{name} depends on {dep}, outside its layer"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_dependency_across_a_layer_is_found() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\nfathom-stats.workspace = true\n\
                    fathom-api = { path = \"../fathom-api\" }\n[dev-dependencies]\nfathom-run.workspace = true\n";
    assert_eq!(
        fathom_dependencies(manifest),
        ["fathom-stats", "fathom-api"]
    );
}
