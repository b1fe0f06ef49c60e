//! The official `mongodb` crate's sync API, for what fathom's own client does not serve (a
//! login, TLS, several hosts, transactions, `client=driver`). Built with the `mongodb-driver`
//! feature; a build without it (the default) says so where a server needs it.

mod errors;
mod session;

use super::failed::Failed;
use fathom_api::doc::bson::{self, Document};
use fathom_api::doc::DocSession;
use mongodb::options::{ClientOptions, ReadConcern, WriteConcern};
use mongodb::sync::{Client, Database};

pub struct Driver {
    client: Client,
    db: Database,
}

impl Driver {
    /// A client of the server at `url` with the concerns fathom sends (`None`: the URL's).
    pub fn connect(
        url: &str,
        database: &str,
        write: Option<&Document>,
        read: Option<&Document>,
    ) -> anyhow::Result<Driver> {
        let mut options = ClientOptions::parse(url)
            .run()
            .map_err(|e| anyhow::anyhow!("setting `url`: `{url}` is not a MongoDB URL: {e}"))?;
        if let Some(w) = write {
            options.write_concern = Some(bson::from_document::<WriteConcern>(w.clone())?);
        }
        if let Some(r) = read {
            options.read_concern = Some(bson::from_document::<ReadConcern>(r.clone())?);
        }
        // As sysbench-mongodb's connectionsPerHost(2048): a client thread never waits for a
        // connection; the pool's default of 10 would queue the 11th.
        options.max_pool_size = options.max_pool_size.or(Some(2048));
        options.app_name = Some("fathom".into());
        // A server that is not there is an error within seconds, not the driver's 30.
        options.server_selection_timeout = options
            .server_selection_timeout
            .or(Some(std::time::Duration::from_secs(10)));
        let client = Client::with_options(options)
            .map_err(|e| anyhow::anyhow!("the mongodb driver: {e}"))?;
        let db = client.database(database);
        Ok(Driver { client, db })
    }

    /// One command on database `db`; the server's codes when it fails.
    pub fn command(&self, db: &str, cmd: &Document) -> Result<Document, Failed> {
        (self.client.database(db).run_command(cmd.clone()).run()).map_err(|e| Failed {
            codes: errors::codes(&e),
            message: e.to_string(),
        })
    }

    pub fn session(&self) -> Box<dyn DocSession + '_> {
        Box::new(session::MongoSession::new(&self.client, self.db.clone()))
    }
}

/// The driver's name in a build that has it.
pub const IN_BUILD: bool = true;
