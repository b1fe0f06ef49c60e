//! Which MariaDB install a setup runs: Debian's (`/usr/sbin/mariadbd`), a release fetched with
//! `scripts/fetch-engine.sh mariadb VERSION` (`--set version=X`), or any other install (`--set
//! bin=DIR`). An install other than Debian's gets its base directory in my.cnf, so the server
//! finds its messages, character sets and plugins there.

use crate::fetched::{self, ServerInstall};
use std::path::{Path, PathBuf};

const DEBIAN_MARIADBD: &str = "/usr/sbin/mariadbd";
const DEBIAN_INSTALL_DB: &str = "/usr/bin/mariadb-install-db";
const DEBIAN_PLUGINS: &str = "/usr/lib/mysql/plugin";

/// A MariaDB install.
pub struct Install {
    pub mariadbd: PathBuf,
    pub install_db: PathBuf,
    /// The base directory (`basedir`) of an install other than Debian's.
    pub base: Option<PathBuf>,
    pub plugins: PathBuf,
    /// Where a fetched release came from (its SOURCE file).
    pub source: Option<String>,
}

impl Install {
    /// Debian's server.
    pub fn debian() -> Install {
        Install {
            mariadbd: DEBIAN_MARIADBD.into(),
            install_db: DEBIAN_INSTALL_DB.into(),
            base: None,
            plugins: DEBIAN_PLUGINS.into(),
            source: None,
        }
    }

    /// The install the `version` and `bin` settings name (Debian's when neither does); None
    /// for a running server (`url`).
    pub fn chosen(url: &str, version: &str, bin: &str) -> anyhow::Result<Option<Install>> {
        let install = fetched::server_install("mariadb", "bin/mariadbd", url, version, bin)?;
        Ok(Some(match install {
            ServerInstall::Running => return Ok(None),
            ServerInstall::Packaged => Install::debian(),
            ServerInstall::Fetched { dir, source } => Install {
                source,
                ..Install::at(&dir).map_err(|e| {
                    anyhow::anyhow!(
                        "setting `version`: the fetched MariaDB {version} is incomplete: {e}"
                    )
                })?
            },
            ServerInstall::Given(dir) => {
                Install::at(&dir).map_err(|e| anyhow::anyhow!("setting `bin`: {e}"))?
            }
        }))
    }

    /// The install whose base directory is `dir`, or whose `mariadbd` is in `dir`.
    fn at(dir: &Path) -> anyhow::Result<Install> {
        let base = if dir.join("mariadbd").is_file() {
            dir.parent().unwrap_or(dir).to_path_buf()
        } else {
            dir.to_path_buf()
        };
        let first = |candidates: &[&str]| -> Option<PathBuf> {
            candidates
                .iter()
                .map(|c| base.join(c))
                .find(|p| p.is_file())
        };
        let mariadbd = first(&["bin/mariadbd", "sbin/mariadbd", "libexec/mariadbd"])
            .ok_or_else(|| anyhow::anyhow!("no mariadbd in {}", dir.display()))?;
        let install_db = first(&["scripts/mariadb-install-db", "bin/mariadb-install-db"])
            .ok_or_else(|| anyhow::anyhow!("no mariadb-install-db in {}", base.display()))?;
        let plugins = ["lib/plugin", "lib/mysql/plugin"]
            .iter()
            .map(|p| base.join(p))
            .find(|p| p.is_dir())
            .unwrap_or_else(|| base.join("lib/plugin"));
        Ok(Install {
            mariadbd,
            install_db,
            base: Some(base),
            plugins,
            source: None,
        })
    }

    /// my.cnf lines that point the server at this install (none for Debian's).
    pub fn cnf_lines(&self) -> Vec<String> {
        match &self.base {
            None => Vec::new(),
            Some(base) => vec![
                format!("basedir={}", base.display()),
                format!("lc-messages-dir={}", base.join("share").display()),
                format!("plugin-dir={}", self.plugins.display()),
            ],
        }
    }

    /// Fails unless the install has the storage engine's plugin (MyRocks' `ha_rocksdb.so`),
    /// saying how to get it: Debian's package for Debian's MariaDB.
    pub fn check_plugin(&self, name: &str) -> anyhow::Result<()> {
        let plugin = self.plugins.join(name);
        if !plugin.is_file() {
            let debian = self.mariadbd.starts_with("/usr");
            anyhow::bail!(
                "this MariaDB install ({}) has no {name} plugin ({} is missing){}",
                self.mariadbd.display(),
                plugin.display(),
                if debian {
                    "; Debian's mariadb-plugin-rocksdb package has it: scripts/setup.sh --servers \
                     installs it (as root)"
                } else {
                    "; a MariaDB release built with MyRocks has it"
                }
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_install_is_found_from_its_base_or_its_bin_directory() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["bin", "scripts", "share"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("bin/mariadbd"), "").unwrap();
        std::fs::write(dir.path().join("scripts/mariadb-install-db"), "").unwrap();
        for given in [dir.path().to_path_buf(), dir.path().join("bin")] {
            let i = Install::chosen("", "", given.to_str().unwrap())
                .unwrap()
                .unwrap();
            assert_eq!(i.base.as_deref(), Some(dir.path()));
            assert!(i.cnf_lines()[0].starts_with("basedir="));
            let e = i.check_plugin("ha_rocksdb.so").unwrap_err().to_string();
            assert!(e.contains("ha_rocksdb.so"), "{e}");
        }
        let e = Install::chosen("", "", "/nonexistent")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("setting `bin`: no mariadbd in /nonexistent"),
            "{e}"
        );
        assert!(Install::chosen("", "1", "/x").is_err());
        assert!(Install::chosen("mysql://x", "1", "").is_err());
        assert!(Install::chosen("mysql://x", "", "").unwrap().is_none());
        assert!(Install::debian().cnf_lines().is_empty());
    }
}
