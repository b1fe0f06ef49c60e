//! The engine's own commands (`hello`, `buildInfo`, `serverStatus`, `createIndexes`, `drop`,
//! `fsync`): on a connection of fathom's own client where it can reach the server, else
//! through the driver. Either way a failure keeps the server's codes.

use super::driver::Driver;
use super::failed::Failed;
use super::wire::{MsgConn, WireError};
use fathom_api::doc::bson::Document;
use std::sync::Mutex;

/// Where the engine's commands go.
pub enum Admin {
    Lean(Mutex<MsgConn>),
    Driver,
}

impl Admin {
    /// One command on database `db`, through fathom's connection or else `driver`.
    pub fn command(
        &self,
        driver: Option<&Driver>,
        db: &str,
        cmd: &Document,
    ) -> Result<Document, Failed> {
        match (self, driver) {
            (Admin::Lean(conn), _) => {
                let mut conn = conn.lock().unwrap_or_else(|p| p.into_inner());
                let reply = (conn.command(db, |o| o.fields(cmd))).map_err(failed)?;
                Document::try_from(conn.reply(reply)).map_err(|e| Failed {
                    codes: Vec::new(),
                    message: format!("a reply that is not a document: {e}"),
                })
            }
            (Admin::Driver, Some(d)) => d.command(db, cmd),
            (Admin::Driver, None) => Err(Failed {
                codes: Vec::new(),
                message: "no connection to the server".into(),
            }),
        }
    }
}

fn failed(e: WireError) -> Failed {
    let codes = match &e {
        WireError::Server(s) => s.codes.clone(),
        _ => Vec::new(),
    };
    Failed {
        codes,
        message: e.to_string(),
    }
}
