//! Engine releases fetched from the package registries (`scripts/fetch-engine.sh ENGINE
//! VERSION`): where they live, and how a `version` setting finds one or says which command
//! fetches it. The same rule is in the script.

use std::path::PathBuf;

/// Where fetched engines live: `$FATHOM_ENGINES`; else, for root, `/var/cache/fathom/engines`
/// (a server fathom starts runs as its own user, which cannot enter root's home); else
/// `~/.cache/fathom/engines`.
pub fn engines_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("FATHOM_ENGINES").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/cache/fathom/engines");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".cache/fathom/engines")
}

/// The release directory of `engine` `version` (`…/postgres/17.6`), which must hold `inside`
/// (`bin/postgres`); an error naming the command that fetches it when it does not.
pub fn release(engine: &str, version: &str, inside: &str) -> anyhow::Result<PathBuf> {
    let dir = engines_dir().join(engine).join(version);
    if !dir.join(inside).exists() {
        anyhow::bail!(
            "setting `version`: {engine} {version} is not fetched ({} is missing); \
             `scripts/fetch-engine.sh {engine} {version}` fetches it",
            dir.join(inside).display()
        );
    }
    Ok(dir)
}

/// What the fetch recorded about where a release came from (its `SOURCE` file), if anything.
pub fn source(release: &std::path::Path) -> Option<String> {
    std::fs::read_to_string(release.join("SOURCE"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}
