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
    if crate::server::is_root() {
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

/// What a server setup's `url`, `version` and `bin` settings name.
pub enum ServerInstall {
    /// A running server at `url`.
    Running,
    /// The server Debian's packages installed.
    Packaged,
    /// A release fetched under the engines directory, and where it came from.
    Fetched {
        dir: PathBuf,
        source: Option<String>,
    },
    /// An install the user points at.
    Given(PathBuf),
}

/// The install a server setup names: `engine` `version` fetched (its directory holding
/// `inside`), `bin`, a running server at `url`, or Debian's; naming two is an error.
pub fn server_install(
    engine: &str,
    inside: &str,
    url: &str,
    version: &str,
    bin: &str,
) -> anyhow::Result<ServerInstall> {
    match (url.trim(), version.trim(), bin.trim()) {
        ("", "", "") => Ok(ServerInstall::Packaged),
        ("", v, "") => {
            let dir = release(engine, v, inside)?;
            let source = source(&dir);
            Ok(ServerInstall::Fetched { dir, source })
        }
        ("", "", dir) => Ok(ServerInstall::Given(PathBuf::from(dir))),
        ("", _, _) => anyhow::bail!("settings `version` and `bin` both name a server; give one"),
        (_, "", "") => Ok(ServerInstall::Running),
        _ => anyhow::bail!(
            "setting `url` points at a running server; `version` and `bin` cannot apply"
        ),
    }
}
