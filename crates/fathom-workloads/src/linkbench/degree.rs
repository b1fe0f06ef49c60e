//! Out-degree (links per id1) as LinkBench's default `nlinks_func = real` gives it
//! (docs/workloads.md §1.4.1–1.4.2): the empirical CDF from `Distribution.dat`, looked up by
//! the id's rank under the LINKS shuffler, then split across link types with the original's
//! arithmetic (or, switched, an even split that sums to the total).

use super::shuffle::{Kind, Shuffler};

/// LinkBench's `config/Distribution.dat` (facebookarchive), embedded at build time.
pub const DISTRIBUTION_DAT: &str = include_str!("../../data/linkbench-Distribution.dat");

/// One section of `Distribution.dat`: (value, cumulative probability) points, ascending.
#[derive(Clone, Debug)]
pub struct Cdf {
    pub points: Vec<(i64, f64)>,
}

impl Cdf {
    /// The first point whose cumulative probability is at least `u` (LinkBench's leftmost
    /// binary search); the last point past the end.
    pub fn value_at(&self, u: f64) -> i64 {
        let i = self.points.partition_point(|&(_, c)| c < u);
        self.points[i.min(self.points.len() - 1)].0
    }
}

/// Reads section `name` of a `Distribution.dat` text: a name line, then `value percent` pairs.
pub fn section(text: &str, name: &str) -> anyhow::Result<Cdf> {
    let mut tokens = text.split_whitespace().peekable();
    while let Some(t) = tokens.next() {
        if t != name {
            continue;
        }
        let mut points = Vec::new();
        while let Some(&v) = tokens.peek() {
            let Ok(value) = v.parse::<i64>() else { break };
            tokens.next();
            let pct = tokens
                .next()
                .and_then(|p| p.parse::<f64>().ok())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "Distribution.dat, section {name}: value {value} has no percent"
                    )
                })?;
            points.push((value, pct / 100.0));
        }
        if points.is_empty() {
            anyhow::bail!("Distribution.dat, section {name}: no points");
        }
        return Ok(Cdf { points });
    }
    anyhow::bail!("Distribution.dat has no section {name}")
}

/// The out-degree of every id1 in `[start, end)`.
pub struct Degrees {
    cdf: Cdf,
    shuffler: Shuffler,
    start: i64,
    n: i64,
}

impl Degrees {
    pub fn new(start: i64, end: i64) -> anyhow::Result<Degrees> {
        let n = end - start;
        Ok(Degrees {
            cdf: section(DISTRIBUTION_DAT, "nlinks")?,
            shuffler: Shuffler::new(Kind::Links, n),
            start,
            n,
        })
    }

    /// Links of `id1` over all types: rank 0 (the most links) has the table's largest value.
    pub fn total(&self, id1: i64) -> i64 {
        let rank = self.shuffler.invert(id1 - self.start);
        self.total_of_rank(rank)
    }

    fn total_of_rank(&self, rank: i64) -> i64 {
        self.cdf.value_at(1.0 - rank as f64 / self.n as f64)
    }
}

/// Links of type index `i` (of `k` types) for an id with `total` links. The original
/// (`ID2Chooser.calcLinkCount`) gives `total / k + 1` to types below `total - total / k`, so
/// the types' sum exceeds the total from 2 up; `corrected` splits the total evenly instead.
pub fn per_type(total: i64, i: i64, k: i64, corrected: bool) -> i64 {
    let min = total / k;
    let left_over = if corrected { total % k } else { total - min };
    if i < left_over {
        min + 1
    } else {
        min
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_has_linkbenchs_sections() {
        let nlinks = section(DISTRIBUTION_DAT, "nlinks").unwrap();
        assert_eq!(nlinks.points.len(), 19951);
        assert_eq!(nlinks.points.last().unwrap().0, 961963);
        assert_eq!(nlinks.points[0], (0, 0.4533160573));
        for (name, points) in [
            ("link_nreads", 3988),
            ("link_nwrites", 3941),
            ("node_nreads", 1089),
            ("node_nwrites", 1477),
        ] {
            assert_eq!(
                section(DISTRIBUTION_DAT, name).unwrap().points.len(),
                points
            );
        }
        assert!(section(DISTRIBUTION_DAT, "nope")
            .unwrap_err()
            .to_string()
            .contains("no section nope"));
    }

    #[test]
    fn the_split_across_types_reproduces_the_original() {
        let split = |t| (per_type(t, 0, 2, false), per_type(t, 1, 2, false));
        assert_eq!(
            [0, 1, 2, 3, 4, 5].map(split),
            [(0, 0), (1, 0), (2, 1), (2, 2), (3, 3), (3, 3)]
        );
        let fixed = |t| (per_type(t, 0, 2, true), per_type(t, 1, 2, true));
        assert_eq!([2, 3, 5].map(fixed), [(1, 1), (2, 1), (3, 2)]);
    }

    #[test]
    fn ten_million_ids_average_the_documented_degree() {
        // Spec §1.4.1: for maxid1 = 10000001, 4.172 links per id before the split, 4.446 after
        // the original's split into 2 types. The mean over all ids is the mean over all ranks.
        let d = Degrees::new(1, 10_000_001).unwrap();
        let (mut total, mut split) = (0i64, 0i64);
        for rank in 0..d.n {
            let t = d.total_of_rank(rank);
            total += t;
            split += per_type(t, 0, 2, false) + per_type(t, 1, 2, false);
        }
        let n = d.n as f64;
        assert!(
            (total as f64 / n - 4.172).abs() < 0.001,
            "{}",
            total as f64 / n
        );
        assert!(
            (split as f64 / n - 4.446).abs() < 0.001,
            "{}",
            split as f64 / n
        );
        assert_eq!(d.total_of_rank(0), 961963);
        // The id of rank 0 is where the LINKS shuffler puts it.
        let hottest = d.shuffler.permute(0) + 1;
        assert_eq!(d.total(hottest), 961963);
    }
}
