//! YCSB's number generators with YCSB's formulas and defaults (docs/declared.md lists them),
//! and the names a workload file gives them: which record an operation takes, how long a scan
//! or a field is. Draws come from the client's own random source; shared state (the newest
//! inserted record, for `latest`) is passed in.

use crate::sysbench::rand::{self as sb, RandType};
use rand::rngs::SmallRng;
use rand::Rng;
use serde::Deserialize;

/// YCSB's zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// The item count YCSB's scrambled zipfian draws over before hashing into the key space.
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;
/// YCSB's precomputed zeta of `SCRAMBLED_ITEMS` at the zipfian constant.
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// A uniform draw in [0, 1), as Java's `nextDouble`.
#[inline]
fn unit(rng: &mut SmallRng) -> f64 {
    rng.gen::<f64>()
}

/// A number below `n`, as uniform as YCSB's `Math.abs(nextLong()) % n` (both off by at most
/// n/2⁶³): the high half of a 64 × 64-bit product, where a remainder is a division that costs
/// the null engine's loop 10 ns an operation.
#[inline]
fn below(rng: &mut SmallRng, n: u64) -> u64 {
    ((rng.gen::<u64>() as u128 * n as u128) >> 64) as u64
}

/// ζ(n, θ) = Σ_{i=1..n} i^-θ: summed exactly up to a million terms, the rest by the
/// Euler–Maclaurin formula (its next term is below 1e-20 there), so a billion records take
/// milliseconds where YCSB's loop takes seconds.
pub fn zeta(n: u64, theta: f64) -> f64 {
    const EXACT: u64 = 1_000_000;
    let head = n.min(EXACT);
    let mut sum = 0.0;
    for i in 1..=head {
        sum += (i as f64).powf(-theta);
    }
    if n <= EXACT {
        return sum;
    }
    let (a, b) = ((EXACT + 1) as f64, n as f64);
    let f = |x: f64| x.powf(-theta);
    let df = |x: f64| -theta * x.powf(-theta - 1.0);
    let integral = (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta);
    sum + integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0
}

/// Gray et al.'s zipfian over [base, base + items), YCSB's `ZipfianGenerator`: item 0 the most
/// popular.
#[derive(Clone, Debug)]
pub struct Zipfian {
    base: u64,
    items: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    zeta2: f64,
    eta: f64,
    /// 1 + 0.5^θ: below it (times ζ), the draw is the second item.
    second: f64,
    /// The item count `zetan` is for (it grows with `latest`'s record count).
    counted: u64,
}

impl Zipfian {
    pub fn new(base: u64, items: u64, theta: f64) -> Zipfian {
        Zipfian::with_zeta(base, items, theta, zeta(items, theta))
    }

    fn with_zeta(base: u64, items: u64, theta: f64, zetan: f64) -> Zipfian {
        let zeta2 = zeta(2, theta);
        let mut z = Zipfian {
            base,
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            zeta2,
            eta: 0.0,
            second: 1.0 + 0.5f64.powf(theta),
            counted: items,
        };
        z.eta = z.eta_for();
        z
    }

    /// YCSB computes eta from the item count the generator was made with, even after zeta
    /// grows with the count drawn over.
    fn eta_for(&self) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan)
    }

    /// A draw over the first `count` items (YCSB's `nextLong(itemcount)`): zeta is extended
    /// when the count grew, never shrunk.
    #[inline]
    pub fn next_of(&mut self, rng: &mut SmallRng, count: u64) -> u64 {
        if count > self.counted {
            for i in self.counted + 1..=count {
                self.zetan += (i as f64).powf(-self.theta);
            }
            self.counted = count;
            self.eta = self.eta_for();
        }
        let u = unit(rng);
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < self.second {
            return self.base + 1;
        }
        // exp(α·ln x) rather than powf: 62 ns a draw becomes 35 (bench/keydraws.rs). pow is
        // exact to the last bit, this within 4e-15 of it; of 2 million draws over 10^9 records
        // none landed on another record.
        let x = self.eta * u - self.eta + 1.0;
        self.base + (count as f64 * (self.alpha * x.ln()).exp()) as u64
    }

    #[inline]
    pub fn next(&mut self, rng: &mut SmallRng) -> u64 {
        self.next_of(rng, self.items)
    }
}

/// YCSB's FNV-1a over the 8 bytes of a number, low byte first, made non-negative.
#[inline]
pub fn fnv_hash64(mut v: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(1_099_511_628_211);
        v >>= 8;
    }
    (h as i64).unsigned_abs()
}

/// Which record an operation takes (YCSB's `requestdistribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    Zipfian,
    Latest,
    Hotspot,
    Exponential,
    Sequential,
    /// sysbench 1.0.20's `--rand-type` distributions, with its default options.
    #[serde(rename = "sysbench_special")]
    SysbenchSpecial,
    #[serde(rename = "sysbench_gaussian")]
    SysbenchGaussian,
    #[serde(rename = "sysbench_pareto")]
    SysbenchPareto,
}

/// A length's distribution as a file names it (YCSB's `fieldlengthdistribution`,
/// `scanlengthdistribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LengthDistribution {
    Constant,
    Uniform,
    Zipfian,
    /// YCSB's `histogram`: buckets of `block_size` bytes, each drawn by its count.
    Histogram,
}

/// Which record an operation takes: YCSB's `requestdistribution` values.
#[derive(Clone, Debug)]
pub enum Chooser {
    /// Uniform over [min, max].
    Uniform { min: u64, span: u64 },
    /// YCSB's "zipfian": a zipfian draw over ten billion items hashed into [min, min + count).
    Scrambled { min: u64, count: u64, zipf: Zipfian },
    /// The newest record most often: newest minus a zipfian draw over the records so far.
    Latest { zipf: Zipfian },
    /// `hot_ops` of the draws on the first `hot_data` of [min, max], uniform within each part.
    Hotspot {
        min: u64,
        hot: u64,
        cold: u64,
        hot_ops: f64,
    },
    /// Newest minus an exponential draw whose `percentile` falls at `range` records.
    Exponential { gamma: f64 },
    /// min, min + 1, ... wrapping after max.
    Sequential { min: u64, span: u64, next: u64 },
    /// One of sysbench's distributions over [0, records), by the sysbench workload's code.
    Sysbench { kind: RandType, records: u64 },
}

impl Chooser {
    /// YCSB's scrambled zipfian, made once (the precomputed zeta spares the sum).
    pub fn scrambled(min: u64, count: u64) -> Chooser {
        Chooser::Scrambled {
            min,
            count,
            zipf: Zipfian::with_zeta(0, SCRAMBLED_ITEMS + 1, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN),
        }
    }

    pub fn latest(records: u64) -> Chooser {
        Chooser::Latest {
            zipf: Zipfian::new(0, records.max(1), ZIPFIAN_CONSTANT),
        }
    }

    pub fn hotspot(min: u64, max: u64, hot_data: f64, hot_ops: f64) -> Chooser {
        let span = max - min + 1;
        let hot = (span as f64 * hot_data) as u64;
        Chooser::Hotspot {
            min,
            hot,
            cold: span - hot,
            hot_ops,
        }
    }

    /// A distribution by its name over `records` records, with YCSB's defaults, for a phase
    /// without inserts (the benches that draw keys alone: bench/keyshares.rs, keydraws.rs).
    pub fn by_name(name: &str, records: u64) -> Option<Chooser> {
        Some(match name {
            "uniform" => Chooser::Uniform {
                min: 0,
                span: records,
            },
            // YCSB's keyspace is the records plus one (its inclusive max).
            "zipfian" => Chooser::scrambled(0, records + 1),
            "latest" => Chooser::latest(records),
            "hotspot" => Chooser::hotspot(0, records - 1, 0.2, 0.8),
            "exponential" => Chooser::exponential(95.0, records as f64 * 0.857_142_857_1),
            _ => return None,
        })
    }

    pub fn sysbench(kind: RandType, records: u64) -> Chooser {
        Chooser::Sysbench { kind, records }
    }

    pub fn exponential(percentile: f64, range: f64) -> Chooser {
        Chooser::Exponential {
            gamma: -(1.0 - percentile / 100.0).ln() / range,
        }
    }

    /// The next record number, `newest` the highest record inserted so far (YCSB's
    /// `nextKeynum`: a draw past it is drawn again; exponential counts back from it).
    #[inline(always)]
    pub fn next(&mut self, rng: &mut SmallRng, newest: u64) -> u64 {
        loop {
            let n = match self {
                Chooser::Uniform { min, span } => *min + below(rng, *span),
                Chooser::Scrambled { min, count, zipf } => {
                    *min + fnv_hash64(zipf.next(rng)) % *count
                }
                Chooser::Latest { zipf } => newest - zipf.next_of(rng, newest).min(newest),
                Chooser::Hotspot {
                    min,
                    hot,
                    cold,
                    hot_ops,
                } => {
                    if unit(rng) < *hot_ops {
                        *min + below(rng, *hot)
                    } else {
                        *min + *hot + below(rng, *cold)
                    }
                }
                Chooser::Exponential { gamma } => {
                    let back = (-unit(rng).ln() / *gamma) as u64;
                    match newest.checked_sub(back) {
                        Some(n) => return n,
                        None => continue,
                    }
                }
                Chooser::Sequential { min, span, next } => {
                    *next += 1;
                    *min + (*next - 1) % *span
                }
                Chooser::Sysbench { kind, records } => {
                    let top = records.saturating_sub(1) as i64;
                    sb::draw(*kind, rng, 0, top).expect("stateless") as u64
                }
            };
            if n <= newest {
                return n;
            }
        }
    }
}

/// A length (of a scan, of a field's value): YCSB's constant, uniform and zipfian.
#[derive(Clone, Debug)]
pub enum Length {
    Constant(u64),
    Uniform {
        min: u64,
        span: u64,
    },
    Zipfian(Zipfian),
    /// YCSB's `HistogramGenerator`: bucket i holds `buckets[i]` of the weight.
    Histogram {
        block: u64,
        buckets: Vec<u64>,
        area: u64,
    },
}

impl Length {
    pub fn uniform(min: u64, max: u64) -> Length {
        Length::Uniform {
            min,
            span: max - min + 1,
        }
    }

    pub fn zipfian(min: u64, max: u64) -> Length {
        Length::Zipfian(Zipfian::new(min, max - min + 1, ZIPFIAN_CONSTANT))
    }

    #[inline]
    pub fn next(&mut self, rng: &mut SmallRng) -> u64 {
        match self {
            Length::Constant(n) => *n,
            Length::Uniform { min, span } => *min + below(rng, *span),
            Length::Zipfian(z) => z.next(rng),
            Length::Histogram {
                block,
                buckets,
                area,
            } => {
                // As YCSB draws it: a number below the area, the buckets' counts taken from
                // it in turn; the bucket that takes it to 0 or below gives (its index + 1)
                // blocks, and a draw past all but the last gives the last's index.
                let mut number = below(rng, *area) as i64;
                let last = buckets.len() - 1;
                for (i, b) in buckets[..last].iter().enumerate() {
                    number -= *b as i64;
                    if number <= 0 {
                        return (i as u64 + 1) * *block;
                    }
                }
                last as u64 * *block
            }
        }
    }

    /// YCSB's histogram of lengths: `block` bytes a bucket, `buckets[i]` the weight of
    /// bucket i (at least one bucket, the weights' sum above 0).
    pub fn histogram(block: u64, buckets: Vec<u64>) -> Length {
        let area = buckets.iter().sum();
        Length::Histogram {
            block,
            buckets,
            area,
        }
    }

    /// The longest it can be.
    pub fn max(&self) -> u64 {
        match self {
            Length::Constant(n) => *n,
            Length::Uniform { min, span } => min + span - 1,
            Length::Zipfian(z) => z.base + z.items - 1,
            Length::Histogram { block, buckets, .. } => (buckets.len() as u64 - 1) * block,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn fnv_hashes_as_ycsb() {
        // Record 0's key in YCSB is user6284781860667377211 (Utils.hash(0)).
        assert_eq!(fnv_hash64(0), 6284781860667377211);
    }

    #[test]
    fn a_histogram_length_is_ycsbs_one_block_past_its_bucket() {
        // YCSB's HistogramGenerator: a draw that the bucket i's count takes to 0 or below is
        // (i + 1) blocks; past all but the last bucket, the last's index.
        let mut rng = SmallRng::seed_from_u64(3);
        let mut h = Length::histogram(10, vec![1, 3, 0, 4]);
        let mut seen = std::collections::BTreeMap::new();
        let n = 80_000;
        for _ in 0..n {
            *seen.entry(h.next(&mut rng)).or_insert(0u32) += 1;
        }
        let share = |len| f64::from(seen[&len]) / n as f64;
        assert_eq!(seen.keys().copied().collect::<Vec<_>>(), [10, 20, 30]);
        // Draws are 0..8: 0 and 1 land in bucket 0, 2..=4 in bucket 1, 5..=7 past them.
        assert!((share(10) - 2.0 / 8.0).abs() < 0.01, "{seen:?}");
        assert!((share(20) - 3.0 / 8.0).abs() < 0.01, "{seen:?}");
        assert!((share(30) - 3.0 / 8.0).abs() < 0.01, "{seen:?}");
        assert_eq!(h.max(), 30);
    }

    #[test]
    fn zeta_past_the_exact_sum_matches_the_sum() {
        let exact: f64 = (1..=3_000_000u64).map(|i| (i as f64).powf(-0.99)).sum();
        let z = zeta(3_000_000, 0.99);
        assert!((z - exact).abs() / exact < 1e-12, "{z} against {exact}");
        // YCSB's own constant for ten billion items.
        let ten_billion = zeta(SCRAMBLED_ITEMS, ZIPFIAN_CONSTANT);
        assert!(
            (ten_billion - SCRAMBLED_ZETAN).abs() < 1e-6,
            "{ten_billion}"
        );
    }

    #[test]
    fn zipfian_favours_its_first_items_as_the_formula_says() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut z = Zipfian::new(0, 1000, ZIPFIAN_CONSTANT);
        let n = 200_000;
        let firsts = (0..n).filter(|_| z.next(&mut rng) == 0).count() as f64 / n as f64;
        let expected = 1.0 / zeta(1000, ZIPFIAN_CONSTANT);
        assert!(
            (firsts - expected).abs() < 0.005,
            "{firsts} against {expected}"
        );
    }

    #[test]
    fn choosers_stay_within_the_records_so_far() {
        let mut rng = SmallRng::seed_from_u64(2);
        for mut c in [
            Chooser::Uniform { min: 0, span: 1000 },
            Chooser::scrambled(0, 1100),
            Chooser::latest(1000),
            Chooser::hotspot(0, 999, 0.2, 0.8),
            Chooser::exponential(95.0, 1000.0 * 0.857_142_857_1),
            Chooser::Sequential {
                min: 0,
                span: 1000,
                next: 0,
            },
        ] {
            for _ in 0..10_000 {
                assert!(c.next(&mut rng, 999) <= 999, "{c:?}");
            }
        }
    }

    #[test]
    fn hotspot_sends_its_share_to_the_hot_set() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut c = Chooser::hotspot(0, 999, 0.2, 0.8);
        let hot = (0..100_000).filter(|_| c.next(&mut rng, 999) < 200).count();
        assert!((78_000..82_000).contains(&hot), "{hot}");
    }
}
