//! A command the server refused, as both clients report it: the server's codes and message,
//! and the codes fathom looks for.

/// CommandNotFound: the server does not have the command.
pub const COMMAND_NOT_FOUND: i32 = 59;
/// NamespaceNotFound: no such collection (a `drop` of one never made).
pub const NAMESPACE_NOT_FOUND: i32 = 26;

/// A command that failed: the server's codes (none for a broken connection) and its message.
#[derive(Debug)]
pub struct Failed {
    pub codes: Vec<i32>,
    pub message: String,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failed {}

impl Failed {
    pub fn is(&self, code: i32) -> bool {
        self.codes.contains(&code)
    }
}
