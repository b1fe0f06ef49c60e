//! `fathom store import DIR`: records the finished runs of results directories in the results
//! database, for runs made with the database off or unreachable, or before it existed.

use clap::Subcommand;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum StoreCommand {
    /// Record every finished run under DIR (a run, an experiment's results, a results root)
    /// in the results database; a run recorded before is left as it is.
    Import {
        /// A run's directory, an experiment's results directory or a results root.
        dir: PathBuf,
        /// The database: a SQLite file's path or a PostgreSQL URL
        /// (postgres://USER@HOST:PORT/DB) [default: results/fathom.db, where `fathom run`
        /// records by default].
        #[arg(long, value_name = "PATH|URL")]
        store: Option<String>,
    },
}

pub fn run(command: &StoreCommand) -> anyhow::Result<()> {
    match command {
        StoreCommand::Import { dir, store } => {
            let store = fathom_run::records::Store::parse(store.as_deref(), Path::new("results"))
                .map_err(anyhow::Error::msg)?;
            let (new, old) = store.import(dir)?;
            println!(
                "{}: {new} runs recorded, {old} recorded before",
                dir.display()
            );
            Ok(())
        }
    }
}
