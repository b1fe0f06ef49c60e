//! Which PostgreSQL install a setup runs: the newest Debian server, a release fetched with
//! `scripts/fetch-engine.sh postgres VERSION` (`--set version=X`), or any other install
//! (`--set bin=DIR`); and whether the `postgres` user, which the server runs as, can reach it.

use super::{Pg, USER};
use crate::fetched::{self, ServerInstall};
use crate::server::settings::ServerSettings;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A PostgreSQL install fathom can start.
pub struct Bin {
    /// The directory holding `postgres` and `initdb`.
    pub dir: PathBuf,
    /// Where a fetched release came from (its SOURCE file).
    pub source: Option<String>,
}

/// The install a setup starts; None for a running server (`url`).
pub(super) fn chosen_bin(s: &ServerSettings<Pg>) -> anyhow::Result<Option<Bin>> {
    let install = fetched::server_install("postgres", "bin/postgres", &s.url, &s.version, &s.bin)?;
    let (dir, source) = match install {
        ServerInstall::Running => return Ok(None),
        ServerInstall::Packaged => (bin_dir()?, None),
        ServerInstall::Fetched { dir, source } => (dir.join("bin"), source),
        ServerInstall::Given(dir) => {
            let bin = [dir.clone(), dir.join("bin")]
                .into_iter()
                .find(|d| d.join("postgres").is_file() && d.join("initdb").is_file())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "setting `bin`: neither {0} nor {0}/bin holds `postgres` and `initdb`",
                        dir.display()
                    )
                })?;
            (bin, None)
        }
    };
    Ok(Some(Bin { dir, source }))
}

/// The newest installed Debian server's bin directory (`/usr/lib/postgresql/15/bin`).
fn bin_dir() -> anyhow::Result<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let v = e.file_name().to_str()?.parse().ok()?;
                    let bin = e.path().join("bin");
                    bin.join("postgres").exists().then_some((v, bin))
                })
                .collect()
        })
        .unwrap_or_default();
    versions.sort();
    versions.pop().map(|(_, b)| b).ok_or_else(|| {
        anyhow::anyhow!(
            "no PostgreSQL server under /usr/lib/postgresql: run scripts/setup.sh --servers"
        )
    })
}

pub(super) fn version() -> anyhow::Result<String> {
    let out = Command::new(bin_dir()?.join("postgres"))
        .arg("--version")
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .nth(2)
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("unexpected `postgres --version`: {text}"))
}

/// Fails unless the `postgres` user can reach `dir` (`what` it holds): every directory above it
/// must let it pass.
pub(super) fn reachable(dir: &Path, what: &str, (uid, gid): (u32, u32)) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let dir = std::fs::canonicalize(dir)?;
    for a in dir.ancestors().skip(1) {
        let m = std::fs::metadata(a)?;
        let mode = m.mode();
        let pass = if m.uid() == uid {
            mode & 0o100 != 0
        } else if m.gid() == gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !pass {
            anyhow::bail!(
                "PostgreSQL runs as the `{USER}` user, which cannot enter {} (mode {:o}) above {what} \
                 {}; put it elsewhere (e.g. under /tmp or /var/tmp)",
                a.display(),
                mode & 0o7777,
                dir.display()
            );
        }
    }
    Ok(())
}
