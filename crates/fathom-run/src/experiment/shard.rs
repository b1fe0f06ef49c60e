//! Sharding an experiment over machines: `--shard K/N` runs a deterministic share of its cells,
//! and `--shard auto` reads the share from the scheduler's variables (a Kubernetes Indexed
//! Job's, a Slurm array's). The unit shared out is a group of cells that are compared with each
//! other, every setup of one (repeat, workload, client count), so a comparison never spans two
//! hosts; groups are balanced over shards by their expected time.

use super::Experiment;
use std::time::Duration;

/// One shard of N, from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::fmt::Display for Shard {
    /// As the flag takes it: `K/N`, K from 1.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

/// `--shard`: `K/N` with K from 1 to N, or `auto` (the scheduler's variables).
pub fn parse(text: &str) -> Result<Shard, String> {
    if text == "auto" {
        return from_env(&|k| std::env::var(k).ok(), &super::slurm::scontrol);
    }
    let bad = || format!("expected K/N (shard K of N, K from 1) or auto, got `{text}`");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || k == 0 || k > n {
        return Err(format!("`{text}`: expected 1 <= K <= N"));
    }
    Ok(Shard {
        index: k - 1,
        count: n,
    })
}

/// The shard a scheduler gave this process: a Kubernetes Indexed Job sets
/// `JOB_COMPLETION_INDEX` (from 0) and the Job's completions (`JOB_COMPLETIONS`, which the Job's
/// pod template passes from `spec.completions`); a Slurm array task's place comes from its
/// variables, or for a list of ids from `scontrol` (`slurm::place`).
pub fn from_env(
    var: &dyn Fn(&str) -> Option<String>,
    scontrol: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Shard, String> {
    let num = |k: &str| super::vars::number(var, k);
    let (index, count) = if let Some(i) = num("JOB_COMPLETION_INDEX")? {
        let n = num("JOB_COMPLETIONS")?.ok_or(
            "JOB_COMPLETION_INDEX is set but JOB_COMPLETIONS is not: pass the Job's completions to the pod (see docs/multi-host.md)",
        )?;
        (i, n)
    } else if let Some(place) = super::slurm::place(var, scontrol)? {
        place
    } else {
        return Err("--shard auto: neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (a Slurm array) is set".into());
    };
    if count == 0 || index >= count {
        return Err(format!(
            "shard index {index} of {count}: expected an index below the count"
        ));
    }
    Ok(Shard { index, count })
}

/// What counts as a step's time when it ends on a count: unknown before it runs, so a nominal
/// share, enough that groups of such steps still spread over shards.
const COUNTED_STEP: Duration = Duration::from_secs(10);

/// The expected time of a run of `spec`: its timed steps' lengths (warmup included), and a
/// nominal time for each step that ends on a count.
pub fn expected(spec: &crate::resolve::RunSpec) -> anyhow::Result<Duration> {
    Ok(spec
        .build()?
        .steps()
        .iter()
        .map(|s| s.timed().unwrap_or(COUNTED_STEP))
        .sum())
}

/// The cells compared with each other: every setup of one (repeat, workload, client count).
struct Group {
    key: (usize, usize, usize),
    cells: Vec<usize>,
    time: Duration,
}

impl Experiment {
    /// The indexes (into `cells`) of the cells `shard` runs, in the matrix's order: groups of
    /// the setups of one (repeat, workload, client count), the longest first, each to the
    /// shard with the least time so far (the lowest index on a tie).
    pub fn shard_cells(&self, shard: Shard) -> anyhow::Result<Vec<usize>> {
        let mut groups: Vec<Group> = Vec::new();
        for (n, c) in self.cells.iter().enumerate() {
            let key = (c.repeat, c.workload, c.clients);
            let time = expected(self.spec(c))?;
            match groups.iter_mut().find(|g| g.key == key) {
                Some(g) => {
                    g.cells.push(n);
                    g.time += time;
                }
                None => groups.push(Group {
                    key,
                    cells: vec![n],
                    time,
                }),
            }
        }
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by(|&a, &b| groups[b].time.cmp(&groups[a].time).then(a.cmp(&b)));
        let mut load = vec![Duration::ZERO; shard.count];
        let mut mine = Vec::new();
        for g in order {
            let to = (0..shard.count)
                .min_by_key(|&s| (load[s], s))
                .expect("a shard count is at least 1");
            load[to] += groups[g].time;
            if to == shard.index {
                mine.extend(&groups[g].cells);
            }
        }
        mine.sort_unstable();
        Ok(mine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_read_from_the_flag_and_the_schedulers() {
        assert_eq!(parse("2/4"), Ok(Shard { index: 1, count: 4 }));
        assert!(parse("0/4").unwrap_err().contains("1 <= K <= N"));
        assert!(parse("5/4").unwrap_err().contains("1 <= K <= N"));
        assert!(parse("half").unwrap_err().contains("expected K/N"));
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string())
        };
        let none = |_: &str| -> Result<String, String> { Err("no scontrol here".into()) };
        let from_env = |var: &dyn Fn(&str) -> Option<String>| from_env(var, &none);
        let k8s = env(&[("JOB_COMPLETION_INDEX", "2"), ("JOB_COMPLETIONS", "3")]);
        assert_eq!(from_env(&k8s), Ok(Shard { index: 2, count: 3 }));
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(from_env(&slurm), Ok(Shard { index: 1, count: 4 }));
        let half = env(&[("JOB_COMPLETION_INDEX", "0")]);
        assert!(from_env(&half).unwrap_err().contains("JOB_COMPLETIONS"));
        assert!(from_env(&env(&[])).unwrap_err().contains("neither"));
        let over = env(&[("JOB_COMPLETION_INDEX", "3"), ("JOB_COMPLETIONS", "3")]);
        assert!(from_env(&over).is_err());
    }
}
