//! Property tests of every parser that reads what fathom does not control — /proc files, the
//! sizes, durations and key=value pairs users type, and result files on disk: on any input
//! they return a value or an error, never panic; and what they read back, they read right.

use fathom_api::units::{format_duration, parse_duration, parse_key_values, parse_size};
use fathom_measure::sample::{cpu, diskstats, process};
use fathom_schema::store::LoadedRun;
use proptest::prelude::*;
use std::time::Duration;

/// Text shaped like /proc files: digits, names, spaces, colons, parentheses and newlines,
/// mixed with anything.
fn proc_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9 :()\\n\\t-]{0,400}",
        "(cpu[0-9]? ( [0-9]{1,20}){0,12}\\n){0,4}",
        "([0-9]{1,3} +[0-9]{1,3} [a-z]{2,5}[0-9]?( [0-9]{1,20}){0,20}\\n){0,4}",
        "[0-9]{1,7} \\([^\\n]{0,20}\\) [A-Z]( -?[0-9]{1,20}){0,50}",
        "((Name|VmRSS|VmHWM|PPid|read_bytes|write_bytes|rchar):[ \\t]*[0-9a-z ]{0,24}\\n){0,8}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn proc_parsers_never_panic(text in proc_like(), major in 0u32..300, minor in 0u32..300) {
        let _ = cpu::parse(&text);
        let _ = diskstats::parse(&text, major, minor);
        let _ = diskstats::device_name(&text, major, minor);
        let _ = process::parse_reaped(&text);
        let _ = process::parse_stat(&text);
        let _ = process::parse_ppid(&text);
        let _ = process::parse_status(&text);
        let _ = process::parse_io(&text);
    }

    #[test]
    fn a_stat_line_reads_back_whatever_the_command_name(
        name in "[^\\n]{0,30}",
        utime in 0u64..1 << 40,
        stime in 0u64..1 << 40,
        majflt in 0u64..1 << 40,
    ) {
        // Fields after the name: state, ppid, pgrp, session, tty, tpgid, flags, minflt,
        // cminflt, majflt, cmajflt, utime, stime.
        let line = format!("42 ({name}) S 1 42 42 0 -1 4194560 100 0 {majflt} 0 {utime} {stime} 0 0 20 0 1 0");
        prop_assert_eq!(process::parse_stat(&line), Some((utime, stime, majflt)));
        prop_assert_eq!(process::parse_ppid(&line), Some(1));
    }

    #[test]
    fn sizes_and_durations_never_panic(text in "[0-9.eE+-]{0,30}[a-zA-Z]{0,4}[0-9.]{0,5}[a-z]{0,3}|\\PC{0,20}") {
        let _ = parse_size(&text);
        let _ = parse_duration(&text);
    }

    #[test]
    fn a_size_reads_back(n in 0u64..1 << 20, unit in 0usize..5) {
        let (suffix, mult) = [("", 1u64), ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("t", 1 << 40)][unit];
        prop_assert_eq!(parse_size(&format!("{n}{suffix}")), Ok(n * mult));
    }

    #[test]
    fn a_size_beyond_64_bits_is_an_error(n in 1u64 << 24..u64::MAX) {
        let text = format!("{n}t");
        let error = parse_size(&text).unwrap_err();
        prop_assert!(error.contains("too large"), "{}", error);
    }

    #[test]
    fn a_duration_reads_back_as_formatted(ms in 0u64..(1 << 40)) {
        let d = Duration::from_millis(ms);
        let back = parse_duration(&format_duration(d)).unwrap();
        let diff = back.abs_diff(d);
        prop_assert!(diff <= Duration::from_millis(1) + d / 1_000_000, "{d:?} -> {back:?}");
    }

    #[test]
    fn key_values_never_panic(pairs in proptest::collection::vec("\\PC{0,12}", 0..6)) {
        match parse_key_values(&pairs, "--set") {
            Ok(map) => prop_assert!(map.len() <= pairs.len()),
            Err(e) => prop_assert!(e.contains("--set") && e.contains("key=value")),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), ..ProptestConfig::default() })]

    /// A run directory whose run.json and step summary hold arbitrary bytes, or a good file cut
    /// short or with a byte changed: loading it fails with the file's name, or succeeds.
    #[test]
    fn result_files_never_panic_the_loader(
        manifest in prop_oneof![any::<Vec<u8>>().prop_map(Some), Just(None)],
        cut in 0usize..2000,
        flip in 0usize..2000,
        byte in any::<u8>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path();
        std::fs::create_dir_all(run.join("steps")).unwrap();
        let good_summary = include_str!("data/summary.json").as_bytes();
        let mut summary = good_summary[..cut.min(good_summary.len())].to_vec();
        if let Some(b) = summary.get_mut(flip) {
            *b = byte;
        }
        std::fs::write(run.join("steps/01-fillseq.json"), &summary).unwrap();
        let manifest = manifest.unwrap_or_else(|| include_bytes!("data/run.json").to_vec());
        std::fs::write(run.join("run.json"), &manifest).unwrap();
        if let Err(e) = LoadedRun::load(run) {
            let text = format!("{e:#}");
            prop_assert!(text.contains("run.json") || text.contains("01-fillseq.json"), "{text}");
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
