//! `fathom engines` and `fathom workloads`: what this build can run, with every setting and
//! parameter, its default, and where an engine's options syntax is documented.

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
        let settings = (e.settings)();
        if settings.is_empty() {
            let _ = writeln!(out, "  --set: none");
        }
        for s in &settings {
            let _ = writeln!(
                out,
                "  --set {}=<{}>  (default {}) {}",
                s.name, s.values, s.default, s.help
            );
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
        let params = (w.params)();
        let width = params
            .iter()
            .map(|p| p.name.len() + p.default.len())
            .max()
            .unwrap_or(0)
            + 1;
        for p in &params {
            let pair = format!("{}={}", p.name, p.default);
            let _ = writeln!(out, "  --param {pair:<width$}  {}", p.help);
        }
        out.push('\n');
    }
    out
}
