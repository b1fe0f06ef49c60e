//! A build without the official `mongodb` crate (the default: it is a quarter of a first
//! build's time): a server that needs it (a login, TLS, several hosts, transactions,
//! `client=driver`) is refused before any work, naming the feature that builds it in.

use super::failed::Failed;
use fathom_api::doc::bson::Document;
use fathom_api::doc::DocSession;

/// No driver: a value of this type cannot exist.
pub enum Driver {}

impl Driver {
    pub fn connect(
        _url: &str,
        _database: &str,
        _write: Option<&Document>,
        _read: Option<&Document>,
    ) -> anyhow::Result<Driver> {
        anyhow::bail!(
            "this build of fathom has no MongoDB driver: build it with `--features mongodb-driver` \
             (FATHOM_MONGODB_DRIVER=1 scripts/fathom …)"
        )
    }

    pub fn command(&self, _db: &str, _cmd: &Document) -> Result<Document, Failed> {
        match *self {}
    }

    pub fn session(&self) -> Box<dyn DocSession + '_> {
        match *self {}
    }
}

/// The driver is not in this build.
pub const IN_BUILD: bool = false;
