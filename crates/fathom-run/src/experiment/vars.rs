//! The variables a scheduler sets for `--shard auto` (a Kubernetes Indexed Job's, a Slurm
//! array's), read as numbers with an error naming the variable: what the shard and the Slurm
//! placement share.

/// A scheduler's variable `k` as a whole number, `None` when unset.
pub(super) fn number(
    var: &dyn Fn(&str) -> Option<String>,
    k: &str,
) -> Result<Option<usize>, String> {
    var(k)
        .map(|v| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| format!("{k}={v}: expected a whole number"))
        })
        .transpose()
}
