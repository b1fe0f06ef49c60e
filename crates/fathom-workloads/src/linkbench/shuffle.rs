//! LinkBench's invertible shuffler (docs/workloads.md §1.5.3): ids are cut into 1024 residue
//! classes and each class is rotated by a shift drawn from `java.util.Random(seed)`, so a Zipf
//! rank maps to a scattered id and, with the LINKS seed, the hottest rank to the id with most
//! links.

use super::jrand::JavaRandom;

/// Which shuffler, by the seeds LinkBench's `RealDistribution` gives each kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// LINKS, LINK_READS, LINK_WRITES: one seed, so correlated accesses follow out-degree.
    Links,
    /// LINK_READS_UNCORR and LINK_WRITES_UNCORR.
    Uncorrelated,
    /// NODE_READS, NODE_UPDATES, NODE_DELETES.
    Nodes,
}

impl Kind {
    pub fn seed(self) -> i64 {
        match self {
            Kind::Links => 20343988438726021,
            Kind::Uncorrelated => 53238253823453,
            Kind::Nodes => 4766565305853767165,
        }
    }
}

const GROUPS: i64 = 1024;

/// A permutation of `[0, n)` and its inverse.
#[derive(Clone, Debug)]
pub struct Shuffler {
    n: i64,
    groups: i64,
    /// Members of the smaller classes (`n / groups`).
    members: i64,
    shift: Vec<i64>,
}

impl Shuffler {
    pub fn new(kind: Kind, n: i64) -> Shuffler {
        let groups = GROUPS.min(n).max(1);
        // LinkBench casts n to a 32-bit int before dividing; ids stay below 2^31 here.
        let members = (n / groups).max(1);
        let mut rng = JavaRandom::new(kind.seed());
        let bound = i32::try_from(members).unwrap_or(i32::MAX);
        let shift = (0..groups)
            .map(|_| rng.next_int_bound(bound) as i64)
            .collect();
        Shuffler {
            n,
            groups,
            members,
            shift,
        }
    }

    fn class(&self, i: i64) -> (i64, i64, i64) {
        let g = i % self.groups;
        let size = if g < self.n % self.groups {
            self.members + 1
        } else {
            self.members
        };
        (g, i / self.groups, size)
    }

    /// Rotates `i` forward inside its class.
    pub fn permute(&self, i: i64) -> i64 {
        let (g, k, size) = self.class(i);
        g + self.groups * ((k + self.shift[g as usize]) % size)
    }

    /// The inverse of `permute`.
    pub fn invert(&self, i: i64) -> i64 {
        let (g, k, size) = self.class(i);
        g + self.groups * ((k + size - self.shift[g as usize] % size) % size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_is_a_bijection_and_invert_undoes_it() {
        for n in [1, 7, 1024, 1025, 10_000, 123_457] {
            let s = Shuffler::new(Kind::Links, n);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let p = s.permute(i);
                assert!((0..n).contains(&p), "n {n}: {i} -> {p}");
                assert!(!seen[p as usize], "n {n}: {p} twice");
                seen[p as usize] = true;
                assert_eq!(s.invert(p), i);
            }
        }
    }

    #[test]
    fn kinds_shuffle_differently_and_keep_the_residue_class() {
        let n = 100_000;
        let a = Shuffler::new(Kind::Links, n);
        let b = Shuffler::new(Kind::Nodes, n);
        let differ = (0..1000).filter(|&i| a.permute(i) != b.permute(i)).count();
        assert!(differ > 900);
        assert!((0..1000).all(|i| a.permute(i) % 1024 == i % 1024));
    }
}
