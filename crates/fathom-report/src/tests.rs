//! The crate's own shape: its files import one another in one direction.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every source file's module path (`sections::steps`, `render`, `` for lib.rs) and its code
/// before its tests.
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into()).collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            if parts.last().map(String::as_str) == Some("tests") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
            out.insert(parts.join("::"), code);
        }
    }
    out
}

/// The paths a file's code names through `crate::` or `super::`, with `use` groups
/// (`use crate::a::{b, c::d}`) spread out; comments skipped.
fn paths_named(code: &str) -> Vec<String> {
    let code: String = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let at = from + at;
            from = at + start.len();
            let before = at.checked_sub(1).map(|i| bytes[i] as char);
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            spread(&code[at..], &mut String::new(), &mut out);
        }
    }
    out
}

/// Reads one path from the start of `text` (a `{...}` group spread into one path per item)
/// onto `prefix`.
fn spread(text: &str, prefix: &mut String, out: &mut Vec<String>) {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    let head = &text[..end];
    let full = format!("{prefix}{head}");
    if text[end..].starts_with('{') && head.ends_with("::") {
        let mut depth = 0;
        let mut item_start = end + 1;
        for (i, c) in text[end..].char_indices() {
            let i = end + i;
            match c {
                '{' => depth += 1,
                '}' | ',' if depth == 1 => {
                    let item = text[item_start..i].trim();
                    if !item.is_empty() {
                        let mut p = full.clone();
                        spread(item, &mut p, out);
                    }
                    item_start = i + 1;
                    if c == '}' {
                        return;
                    }
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        return;
    }
    out.push(
        full.trim_end_matches("::self")
            .trim_end_matches("::")
            .to_string(),
    );
}

/// The module a path lands in: the longest of its prefixes that is a file's module, `super`
/// read from `from`.
fn target(path: &str, from: &str, modules: &BTreeMap<String, String>) -> Option<String> {
    let mut parts: Vec<&str> = from.split("::").filter(|p| !p.is_empty()).collect();
    let mut segments = path.split("::").peekable();
    match segments.next()? {
        "crate" => parts.clear(),
        "super" => {
            parts.pop();
            while segments.peek() == Some(&"super") {
                segments.next();
                parts.pop();
            }
        }
        _ => return None,
    }
    let mut best = parts.join("::");
    for s in segments {
        parts.push(s);
        let candidate = parts.join("::");
        if modules.contains_key(&candidate) {
            best = candidate;
        } else {
            break;
        }
    }
    Some(best)
}

/// Sections, renderers, drawing and the comparison table each import only what comes before
/// them: no file's imports lead back to it. A type a folder's files share lives in a file of
/// its own (the section types in `section`, the renderer trait in `render/renderer`), not in
/// the folder's `mod.rs` beside the list that imports them.
#[test]
fn the_crate_imports_in_one_direction() {
    let modules = modules();
    assert!(modules.len() > 20, "{:?}", modules.keys());
    let mut edges: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &modules {
        let named = paths_named(code);
        let to = edges.entry(module).or_default();
        for path in named {
            if let Some(t) = target(&path, module, &modules).filter(|t| t != module) {
                to.insert(t);
            }
        }
    }
    // A depth-first walk that reports the first circle it meets.
    fn walk<'a>(
        at: &'a str,
        edges: &'a BTreeMap<&str, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(i) = path.iter().position(|p| *p == at) {
            panic!(
                "an import circle: {}",
                [&path[i..], &[at]].concat().join(" -> ")
            );
        }
        if !done.insert(at) {
            return;
        }
        path.push(at);
        for next in edges.get(at).into_iter().flatten() {
            walk(next, edges, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in edges.keys() {
        let mut path = Vec::new();
        if !done.contains(module) {
            walk(module, &edges, &mut path, &mut done);
        }
    }
    // The reader itself finds what it should: a use group and a path in the code.
    let named = paths_named("use crate::a::{b, c::{d, e}};\nlet x = super::f::g(); // crate::no");
    assert_eq!(
        named,
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::e",
            "super::f::g"
        ]
    );
}
