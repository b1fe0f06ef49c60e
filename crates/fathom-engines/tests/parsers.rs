//! Property tests of what the engines read from users: settings of every engine, options
//! strings given to each embedded engine as it opens, server config lines, `pid` settings and
//! RocksDB's OPTIONS files. Any input gives a value or an error naming what was wrong, never
//! a panic.

use fathom_engines::server::{config_lines, parse_pid};
use fathom_engines::settings::{validate, SettingSpec, Settings};
use fathom_engines::{open, EngineConfig, ENGINES};
use proptest::prelude::*;

/// A setting's value as users might type it, right or wrong.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{1,12}[kmgtKMGT]?[bB]?",
        "(true|false|on|off|yes|no|none|all|reads|flush|fathom|mysql|postgres)",
        "\\PC{0,16}",
        Just(String::new()),
    ]
}

/// Settings of `specs` named by the picked indexes, with the picked values.
fn picked(specs: &[SettingSpec], pick: &[(prop::sample::Index, String)]) -> Settings {
    let mut given = Settings::new();
    if !specs.is_empty() {
        for (i, v) in pick {
            given.insert(specs[i.index(specs.len())].name.to_string(), v.clone());
        }
    }
    given
}

/// An options string in the shape engines take (`a=b;c=d`, `a=b,c=(d=e)`), with noise.
fn options() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just(String::new()),
        // Keys naming a path are left out: a relative one would put files beside the test.
        2 => proptest::collection::vec(
            (
                "[a-z_]{1,24}"
                    .prop_filter("no paths", |k| !k.contains("dir") && !k.contains("path")),
                "[a-z0-9_.()=]{0,10}"
            ),
            0..4
        )
        .prop_map(|kv| kv
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")),
        1 => "[a-z_=;,()0-9 ]{0,40}",
        1 => "\\PC{0,24}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(500), ..ProptestConfig::default() })]

    #[test]
    fn settings_of_every_engine_are_checked_without_panic(
        engine in 0..ENGINES.len(),
        pick in proptest::collection::vec((any::<prop::sample::Index>(), value()), 0..4),
        unknown in proptest::option::of("[a-z_]{1,12}"),
    ) {
        let entry = &ENGINES[engine];
        let specs = (entry.settings.specs)();
        let mut given = picked(&specs, &pick);
        if let Some(k) = &unknown {
            given.insert(k.clone(), "1".into());
        }
        if let Err(e) = validate(entry.name, &specs, &given) {
            let text = format!("{e:#}");
            prop_assert!(given.keys().any(|k| text.contains(k.as_str())), "{}: {text}", entry.name);
        }
    }

    #[test]
    fn server_config_lines_and_pids_never_panic(text in "\\PC{0,80}", lines in "[a-z_=\\n .-]{0,80}") {
        let _ = config_lines(&text, '-', true, "name = value");
        let _ = config_lines(&lines, '.', false, "name");
        let _ = parse_pid(&text);
    }

    #[test]
    fn rocksdb_options_files_never_panic(text in "(\\[[A-Za-z \"]{0,20}\\]\\n|[a-z_]{0,12}=[a-z0-9]{0,6}\\n|\\PC{0,20}\\n){0,10}") {
        let _ = fathom_engines::rocksdb::parse_options_file(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(40), ..ProptestConfig::default() })]

    /// Every embedded engine opened with an arbitrary options string and settings of any
    /// value: it opens or says why.
    #[test]
    fn embedded_engines_open_or_refuse_any_options_and_settings(
        engine in prop::sample::select(embedded()),
        opts in options(),
        pick in proptest::collection::vec((any::<prop::sample::Index>(), value()), 0..2),
    ) {
        let entry = &ENGINES[engine];
        let specs = (entry.settings.specs)();
        let settings = picked(&specs, &pick);
        let dir = tempfile::tempdir().unwrap();
        let config = EngineConfig {
            data_dir: dir.path().join("db"),
            options: opts.clone(),
            settings,
            ..EngineConfig::default()
        };
        let opened = open(entry, &config);
        if let Err(e) = &opened {
            prop_assert!(!format!("{e:#}").is_empty(), "{} {opts:?}", entry.name);
        }
        // The engine closes before its directory is removed. (As the block's last expression
        // the `if let`'s temporary, the open engine, outlived `dir`: WiredTiger then
        // checkpointed into a deleted directory on close and panicked.)
        drop(opened);
        drop(dir);
    }
}

/// The registry positions of the engines that run inside fathom.
fn embedded() -> Vec<usize> {
    (0..ENGINES.len()).filter(|&i| !ENGINES[i].server).collect()
}

/// `PROPTEST_CASES` when set (bench/faults.sh asks for many), else the bounded count CI runs.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
