//! A Slurm array task's place in its array, for `--shard auto`. Slurm tells each task its id
//! and the array's lowest id, highest id, step and task count (`SLURM_ARRAY_TASK_*`), which
//! place a task of a range or a stepped range exactly (`0-7`, `1-7:2`, `0-15%4`); a list of ids
//! (`2,5,9`, `3,4-6,10`) it does not, so there the array's ids are read from `scontrol show job
//! ARRAY_JOB_ID`, which lists them while its tasks' records last (a task's record goes
//! `MinJobAge` after it ends: 300 s unless configured).

use std::collections::BTreeSet;

/// This task's place (from 0) and the array's task count, or `None` outside a Slurm array.
/// `var` reads the environment; `scontrol` lists the array's job records.
pub fn place(
    var: &dyn Fn(&str) -> Option<String>,
    scontrol: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Option<(usize, usize)>, String> {
    let num = |k: &str| super::vars::number(var, k);
    let Some(id) = num("SLURM_ARRAY_TASK_ID")? else {
        return Ok(None);
    };
    let count = num("SLURM_ARRAY_TASK_COUNT")?
        .ok_or("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")?;
    let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let step = num("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    let max = num("SLURM_ARRAY_TASK_MAX")?;
    let from_min = id
        .checked_sub(min)
        .ok_or("SLURM_ARRAY_TASK_ID below SLURM_ARRAY_TASK_MIN")?;
    // A range: every id from min to max, step apart.
    let regular = count > 0
        && from_min % step == 0
        && from_min / step < count
        && max.is_none_or(|m| m == min + step * (count - 1));
    if regular {
        return Ok(Some((from_min / step, count)));
    }
    let job = var("SLURM_ARRAY_JOB_ID").ok_or(
        "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_JOB_ID is not: cannot list the array's ids",
    )?;
    let ids = array_ids(&scontrol(&job)?);
    match ids.iter().position(|&i| i == id) {
        Some(at) if ids.len() == count => Ok(Some((at, count))),
        _ => {
            Err(format!(
            "SLURM_ARRAY_TASK_ID={id} in an array of {count} listed ids ({min} to {}): Slurm does \
             not tell a task its place in a list, and `scontrol show job {job}` lists {} of them \
             ({}): the records of tasks that ended more than MinJobAge ago are gone; give \
             --shard K/N instead",
            max.map_or("?".into(), |m| m.to_string()),
            ids.len(),
            ids.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
        ))
        }
    }
}

/// Every id the records of `scontrol show job` name (`ArrayTaskId=9`, a pending remainder
/// `ArrayTaskId=5,9-12:3%2`).
pub fn array_ids(text: &str) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for value in text
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("ArrayTaskId="))
    {
        let value = value.split('%').next().unwrap_or("");
        for part in value.split(',') {
            let (range, step) = part.split_once(':').unwrap_or((part, "1"));
            let step: usize = step.parse().unwrap_or(1).max(1);
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                out.extend((a..=b).step_by(step));
            }
        }
    }
    out
}

/// `scontrol show job JOB`'s output, or why it could not be had.
pub fn scontrol(job: &str) -> Result<String, String> {
    let out = std::process::Command::new("scontrol")
        .args(["show", "job", job])
        .output()
        .map_err(|e| format!("scontrol show job {job}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "scontrol show job {job}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.clone())
    }

    fn task(id: usize, min: usize, max: usize, count: usize, step: usize) -> Vec<(String, String)> {
        [
            ("SLURM_ARRAY_JOB_ID", "12".to_string()),
            ("SLURM_ARRAY_TASK_ID", id.to_string()),
            ("SLURM_ARRAY_TASK_MIN", min.to_string()),
            ("SLURM_ARRAY_TASK_MAX", max.to_string()),
            ("SLURM_ARRAY_TASK_COUNT", count.to_string()),
            ("SLURM_ARRAY_TASK_STEP", step.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn place_of(vars: &[(String, String)], listed: &str) -> Result<Option<(usize, usize)>, String> {
        let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let listed = listed.to_string();
        place(&env(&pairs), &move |_| Ok(listed.clone()))
    }

    /// What Slurm 22.05 sets, as seen under scripts/slurm.sh: `1-7:2` is min 1, max 7, count
    /// 4, step 2; `2,5,9` is min 2, max 9, count 3, step 1.
    #[test]
    fn ranges_are_placed_from_the_variables_and_lists_from_scontrol() {
        assert_eq!(place_of(&task(5, 1, 7, 4, 2), ""), Ok(Some((2, 4))));
        assert_eq!(place_of(&task(3, 0, 5, 6, 1), ""), Ok(Some((3, 6))));
        let listed = "JobId=23 ArrayJobId=23 ArrayTaskId=9 JobName=j\n\
                      JobId=25 ArrayJobId=23 ArrayTaskId=5 JobName=j\n\
                      JobId=24 ArrayJobId=23 ArrayTaskId=2 JobName=j\n";
        assert_eq!(place_of(&task(9, 2, 9, 3, 1), listed), Ok(Some((2, 3))));
        assert_eq!(place_of(&task(5, 2, 9, 3, 1), listed), Ok(Some((1, 3))));
        // A task whose fellow's record is gone says so.
        let e = place_of(&task(9, 2, 9, 3, 1), "JobId=23 ArrayTaskId=9\n").unwrap_err();
        assert!(e.contains("MinJobAge") && e.contains("--shard K/N"), "{e}");
        assert_eq!(place_of(&[], ""), Ok(None));
    }

    #[test]
    fn array_ids_read_every_form() {
        let ids = array_ids("ArrayTaskId=3 ArrayTaskId=4-6 x ArrayTaskId=10,12-16:2%2");
        assert_eq!(
            ids.into_iter().collect::<Vec<_>>(),
            [3, 4, 5, 6, 10, 12, 14, 16]
        );
    }
}
