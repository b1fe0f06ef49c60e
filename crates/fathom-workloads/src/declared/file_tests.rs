//! Workload files refused before anything runs, each by file, line and key; the bundled files parse.
use super::*;

fn err(text: &str) -> String {
    parse("w.toml", text).unwrap_err().to_string()
}

const HEAD: &str = "name = \"w\"\nabout = \"a test\"\n[data]\nrecords = 10\n";

#[test]
fn every_bundled_file_parses() {
    for (name, text) in BUNDLED {
        parse(name, text).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A file whose phase `p` has `extra` lines after its name and length, and `mix` as its mix.
fn phase(extra: &str, mix: &str) -> String {
    format!("{HEAD}[[phase]]\nname = \"run\"\noperations = 10\n{extra}\n[phase.mix]\n{mix}\n")
}

const TIMED: &str = "duration = \"5s\"";

/// A file whose phase has `length` and one group `g` with `body`.
fn groups(length: &str, body: &str) -> String {
    format!("{HEAD}[[phase]]\nname = \"run\"\n{length}\n[[phase.group]]\nname = \"g\"\n{body}\n")
}

/// Bad top-level keys and [data] (the file, the line its error names, what it holds).
fn bad_data_and_files() -> Vec<(String, usize, &'static str)> {
    vec![
        ("nmae = \"w\"\n".to_string(), 1, "nmae"),
        (
            "name = 3\nabout = \"a\"\n[data]\n[load]\n".into(),
            1,
            "string",
        ),
        (
            "name = \"w\"\nabout = \"a\"\n[data]\n".into(),
            0,
            "a [load] or at least one [[phase]]",
        ),
        (format!("{HEAD}recrods = 5\n"), 5, "recrods"),
        (format!("{HEAD}fields = 0\n[load]\n"), 5, "data.fields"),
        (format!("{HEAD}fields = -2\n[load]\n"), 5, "fields = -2"),
        (
            format!("{HEAD}field_length = \"long\"\n[load]\n"),
            5,
            "field_length",
        ),
        (
            format!("{HEAD}field_length_distribution = \"normal\"\n[load]\n"),
            5,
            "normal",
        ),
        (
            format!(
                "{HEAD}field_length_distribution = \"uniform\"\nmin_field_length = 200\n[load]\n"
            ),
            0,
            "data.field_length",
        ),
        (
            format!("{HEAD}insert_order = \"random\"\n[load]\n"),
            5,
            "random",
        ),
        (
            format!("{HEAD}zero_padding = \"x\"\n[load]\n"),
            5,
            "zero_padding",
        ),
        (format!("{HEAD}[load]\nnmae = \"l\"\n"), 6, "nmae"),
    ]
}

/// Bad key formats, value bytes and length histograms.
fn bad_formats() -> Vec<(String, usize, &'static str)> {
    let h = "field_length_histogram = { block_size = 8, buckets = [1, 2] }";
    vec![
        (format!("{HEAD}key_format = \"hex\"\n[load]\n"), 5, "hex"),
        (
            format!("{HEAD}key_format = \"binary\"\nkey_size = 4\n[load]\n"),
            6,
            "data.key_size",
        ),
        (
            format!("{HEAD}key_size = 16\n[load]\n"),
            5,
            "key_format = \"binary\" beside it",
        ),
        (
            format!("{HEAD}compression_ratio = 0\n[load]\n"),
            5,
            "data.compression_ratio",
        ),
        (
            format!("{HEAD}compression_ratio = 1.5\n[load]\n"),
            5,
            "at most 1",
        ),
        (
            format!("{HEAD}kv_value = \"raw\"\n[load]\n"),
            5,
            "fields = 1 beside it",
        ),
        (format!("{HEAD}kv_value = \"json\"\n[load]\n"), 5, "json"),
        (
            format!("{HEAD}field_length_distribution = \"histogram\"\n[load]\n"),
            5,
            "data.field_length_histogram",
        ),
        (
            format!("{HEAD}{h}\n[load]\n"),
            5,
            "field_length_distribution = \"histogram\" beside it",
        ),
        (
            format!(
                "{HEAD}field_length_distribution = \"histogram\"\n\
                 field_length_histogram = {{ block_size = 8, buckets = [0, 0] }}\n[load]\n"
            ),
            6,
            "a weight above 0",
        ),
        (
            format!(
                "{HEAD}field_length_distribution = \"histogram\"\n\
                 field_length_histogram = {{ block = 8, buckets = [1] }}\n[load]\n"
            ),
            6,
            "block",
        ),
        (
            phase("scan_length_distribution = \"histogram\"", "scan = 1"),
            0,
            "phase[1].scan_length_distribution",
        ),
    ]
}

/// Bad phases: lengths, mixes, distributions, fractions.
fn bad_phases() -> Vec<(String, usize, &'static str)> {
    vec![
        (phase("distribution = \"zipfan\"", "read = 1"), 8, "zipfan"),
        (phase("", "read = -1"), 9, "phase[1].mix"),
        (phase("", "read = 0"), 9, "at least one weight above 0"),
        (phase("", "reed = 1"), 10, "reed"),
        (phase("", "read = \"half\""), 10, "read = \"half\""),
        (
            phase("hotspot_data_fraction = 1.5", "read = 1"),
            8,
            "phase[1].hotspot_data_fraction",
        ),
        (
            phase("hotspot_ops_fraction = -0.1", "read = 1"),
            8,
            "phase[1].hotspot_ops_fraction",
        ),
        (
            phase("exponential_frac = 2", "read = 1"),
            8,
            "phase[1].exponential_frac",
        ),
        (
            phase("exponential_percentile = 100", "read = 1"),
            8,
            "phase[1].exponential_percentile",
        ),
        (
            phase("max_scan_length = 0", "scan = 1"),
            8,
            "phase[1].max_scan_length",
        ),
        (
            phase("min_scan_length = 0", "scan = 1"),
            0,
            "phase[1].max_scan_length",
        ),
        (
            phase("scan_length_distribution = \"latest\"", "scan = 1"),
            8,
            "latest",
        ),
        (
            phase("read_all_fields = \"yes\"", "read = 1"),
            8,
            "read_all_fields",
        ),
        (phase("duration = \"forever\"", "read = 1"), 8, "forever"),
        (phase("warmup = 5", "read = 1"), 8, "warmup"),
        (phase("operatoins = 3", "read = 1"), 8, "operatoins"),
        (
            format!("{HEAD}[[phase]]\nname = \"run\"\noperations = 0\n[phase.mix]\nread = 1\n"),
            7,
            "phase[1].operations",
        ),
        (
            format!(
                "{HEAD}[load]\n[[phase]]\nname = \"load\"\noperations = 1\n[phase.mix]\nread = 1\n"
            ),
            7,
            "phase[1].name",
        ),
        (
            format!("{HEAD}[[phase]]\nname = \"run\"\noperations = 1\n"),
            6,
            "phase[1].mix",
        ),
    ]
}

/// Bad rates, client groups and phase names.
fn bad_rates_groups_and_names() -> Vec<(String, usize, &'static str)> {
    vec![
        (phase("rate = 0", "read = 1"), 8, "phase[1].rate"),
        (
            phase("rate = [100, 200]", "read = 1"),
            8,
            "a duration for the phase",
        ),
        (phase("rate = { from = 1 }", "read = 1"), 8, "a ramp"),
        (
            phase(
                "rate = { start = 1, step = 1, every = \"later\" }",
                "read = 1",
            ),
            8,
            "not a duration",
        ),
        (phase("arrivals = \"bursty\"", "read = 1"), 8, "bursty"),
        (
            phase("distribution = \"sysbench_zipfian\"", "read = 1"),
            8,
            "sysbench_zipfian",
        ),
        (
            groups("operations = 10", "clients = 2\nmix = { read = 1 }"),
            9,
            "client groups run for a time",
        ),
        (
            groups(TIMED, "clients = 0\nmix = { read = 1 }"),
            10,
            "phase[1].group[1].clients",
        ),
        (
            groups(TIMED, "mix = { read = -1 }"),
            10,
            "phase[1].group[1].mix",
        ),
        (
            groups(TIMED, "clinets = 2\nmix = { read = 1 }"),
            10,
            "clinets",
        ),
        (
            groups(TIMED, "rate = [\"x\"]\nmix = { read = 1 }"),
            10,
            "phase[1].group[1].rate",
        ),
        (
            format!(
                "{}[[phase.group]]\nname = \"g\"\nmix = {{ read = 1 }}\n",
                groups(TIMED, "mix = { read = 1 }")
            ),
            12,
            "phase[1].group[2].name",
        ),
        (
            format!(
                "{}[phase.mix]\nread = 1\n",
                groups(TIMED, "mix = { read = 1 }")
            ),
            11,
            "no mix of the phase's own",
        ),
        (
            groups("duration = \"5s\"\nrate = 10", "mix = { read = 1 }"),
            8,
            "no rate of the phase's own",
        ),
    ]
}

#[test]
fn fifty_bad_files_each_refused_by_line_and_key() {
    let cases: Vec<(String, usize, &str)> = [
        bad_data_and_files(),
        bad_formats(),
        bad_phases(),
        bad_rates_groups_and_names(),
    ]
    .concat();
    assert!(cases.len() >= 50);
    for (text, line, wanted) in &cases {
        let e = err(text);
        assert!(e.starts_with("workload file w.toml"), "{e}");
        if *line > 0 {
            assert!(
                e.contains(&format!("line {line}")),
                "wanted line {line}: {e}\n{text}"
            );
        }
        assert!(e.contains(wanted), "wanted `{wanted}`: {e}\n{text}");
    }
}

#[test]
fn bad_files_are_refused_by_file_line_and_key() {
    let e = err(&format!("{HEAD}recrods = 5\n"));
    assert!(e.contains("w.toml, line 5") && e.contains("recrods"), "{e}");
    let e = err(&format!(
        "{HEAD}[[phase]]\nname = \"run\"\noperations = 10\n[phase.mix]\nread = -1\n"
    ));
    assert!(e.contains("line 8") && e.contains("phase[1].mix"), "{e}");
    let e = err(&format!(
        "{HEAD}[[phase]]\nname = \"run\"\n[phase.mix]\nread = 1\n"
    ));
    assert!(
        e.contains("line 6") && e.contains("phase[1].operations"),
        "{e}"
    );
    let e = err(&format!(
        "{HEAD}[[phase]]\nname = \"run\"\noperations = 1\ndistribution = \"zipfan\"\n[phase.mix]\nread = 1\n"
    ));
    assert!(e.contains("line 8") && e.contains("zipfan"), "{e}");
    let e = err("name = \"w\"\nabout = \"a\"\n[data]\nrecords = 0\n[load]\n");
    assert!(e.contains("line 4") && e.contains("data.records"), "{e}");
}
