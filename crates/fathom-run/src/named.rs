//! A profile given on the command line or in an experiment file: a bundled one's name, or a
//! TOML file of the user's own (`--device`, `--network`), with one error for a name that is
//! neither.

use std::path::Path;

/// The profile `given` (at `key`) names: `bundled(given)` when it is a bundled one's name, else
/// the `.toml` file `given` (relative to `base`) read and `parse`d (its text, its path). `what`
/// names the kind (`device profile`), `names` the bundled ones and `file_keys` a file's keys,
/// for the error when it is neither.
pub fn bundled_or_file<T>(
    (given, base, key): (&str, &Path, &str),
    (what, names, file_keys): (&str, &[&str], &str),
    bundled: impl Fn(&str) -> Option<T>,
    parse: impl Fn(&str, &str) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    if let Some(b) = bundled(given) {
        return Ok(b);
    }
    let path = base.join(given);
    if !given.ends_with(".toml") || !path.is_file() {
        anyhow::bail!(
            "{key}: `{given}` is neither a bundled {what} ({}) nor a profile file (a .toml file \
             of {file_keys})",
            names.join(", ")
        );
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("{key}: reading {}: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
}
