//! `fathom engines` and `fathom workloads`: what this build can run, with every setting and
//! parameter, its default, where an engine's options syntax is documented, and what one
//! operation of each of a workload's kinds is.

use std::fmt::Write;

pub fn engines() -> String {
    let mut out = String::new();
    for e in fathom_engines::ENGINES {
        let version = (e.version)().unwrap_or_else(|err| format!("version unknown: {err:#}"));
        let _ = writeln!(
            out,
            "{} {version} ({} family): {}",
            e.name,
            e.family(),
            e.about
        );
        let _ = writeln!(out, "  --setup: {}", e.options_doc);
        let settings = (e.settings.specs)();
        if settings.is_empty() {
            let _ = writeln!(out, "  --set: none");
        }
        for s in &settings {
            knob(&mut out, "--set", s);
        }
        out.push('\n');
    }
    out += "Every engine also takes --memory-limit SIZE (a cgroup child group holding the engine's processes).\n";
    out
}

pub fn workloads() -> String {
    let mut out = String::new();
    for w in fathom_workloads::WORKLOADS {
        let _ = writeln!(out, "{}: {}", w.name, w.about);
        let _ = writeln!(
            out,
            "  --duration sets `{}`: the length of every timed step",
            w.duration_param
        );
        for p in &(w.params)() {
            knob(&mut out, "--param", p);
        }
        let _ = writeln!(out, "  operations (kind, role: what one is):");
        for k in (w.kinds)() {
            let role = fathom_api::knobs::text(&k.role);
            let _ = writeln!(out, "    {} ({role}): {}", k.name, k.about);
        }
        out.push('\n');
    }
    out += "Workload files (--workload NAME, or --workload PATH.toml; docs/declared.md):\n";
    for (name, text) in fathom_workloads::declared::file::BUNDLED {
        let about = fathom_workloads::declared::file::parse(name, text)
            .map_or_else(|e| format!("{e:#}"), |f| f.about);
        let _ = writeln!(out, "  {name}: {about}");
    }
    out
}

/// One setting or parameter: the flag with what it takes, its default, its help.
fn knob(out: &mut String, flag: &str, k: &fathom_api::knobs::Spec) {
    let default = match k.default.as_str() {
        "" => "empty",
        d => d,
    };
    let _ = writeln!(
        out,
        "  {flag} {}=<{}>  (default {default}) {}",
        k.name, k.values, k.help
    );
}

/// `fathom networks`: the bundled network profiles, a paragraph each.
pub fn networks() -> String {
    let mut out = String::new();
    for p in fathom_run::network::profile::bundled() {
        out.push_str(&format!("{}\n  source: {}\n\n", p.describe(), p.source));
    }
    out.push_str(
        "A profile file (`--network FILE.toml`) gives name and rtt_ms (0 to 2000), and \
         optionally jitter_ms (up to half the round trip), mbit (0.1 to 10000) and source; see \
         docs/network.md.\n",
    );
    out
}

/// `fathom devices`: the bundled device profiles, a paragraph each.
pub fn devices() -> String {
    let mut out = String::new();
    for mut p in fathom_run::device_profile::bundled() {
        p.layer = fathom_schema::result::device::DeviceLayer::Loop;
        out.push_str(&format!("{}\n  source: {}\n\n", p.describe(), p.source));
    }
    out.push_str(
        "A profile file (`--device FILE.toml`) gives name, read_iops, write_iops, read_mibps, \
         write_mibps (each above 0), and optionally source, service_us and queue_depth; see docs/devices.md.\n",
    );
    out
}
