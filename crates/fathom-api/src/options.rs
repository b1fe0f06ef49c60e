//! The syntaxes of engines' own options strings, so a workload can add options for one step in
//! one engine's syntax (`StepOptions`) without naming the engine, and an options file's lines
//! are joined as that syntax joins items.

/// How an engine's options string is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Syntax {
    /// RocksDB's options string: `key=value` items separated by `;`.
    RocksDb,
    /// WiredTiger's configuration string: items separated by `,`.
    WiredTiger,
    /// LMDB's environment flags, separated by `,`.
    LmdbFlags,
    /// SQLite PRAGMAs, separated by `;`.
    Pragmas,
    /// A server's configuration-file lines, one per line.
    ConfigLines,
    /// The engine takes no options.
    #[default]
    None,
}

impl Syntax {
    /// What separates items; a `--setup @FILE` holds one item per line, joined with it.
    pub fn separator(self) -> &'static str {
        match self {
            Syntax::RocksDb | Syntax::Pragmas | Syntax::None => ";",
            Syntax::WiredTiger | Syntax::LmdbFlags => ",",
            Syntax::ConfigLines => "\n",
        }
    }
}
