//! TPC-C's random inputs as sysbench-tpcc draws them (sysbench's uniform integers and
//! strings): NURand with its constants, the customers' last names, the remote warehouse; and
//! where the specification differs, its way, chosen by `follow`.

use crate::sysbench::rand::{fill_string, uniform, unit};
use rand::rngs::SmallRng;
use serde::{Deserialize, Serialize};

/// Whose choices a run follows where sysbench-tpcc departs from the TPC-C specification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Follow {
    /// Percona-Lab's sysbench-tpcc, departures and all, so the two compare on one server.
    SysbenchTpcc,
    /// The TPC-C specification's choices where sysbench-tpcc departs from them.
    Spec,
}

/// Items, districts per warehouse and customers per district (TPC-C's, sysbench-tpcc's).
pub const ITEMS: i64 = 100_000;
pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3_000;

/// One client's random source and the choices it follows.
pub struct Draws {
    pub rng: SmallRng,
    pub follow: Follow,
    /// NURand's C for A = 255, 1023 and 8191, drawn once (the specification); sysbench-tpcc
    /// draws them again at every call (its `init_rand` test is always true in Lua).
    c: [i64; 3],
    text: String,
}

impl Draws {
    pub fn new(mut rng: SmallRng, follow: Follow) -> Draws {
        let c = [
            uniform(&mut rng, 0, 255),
            uniform(&mut rng, 0, 1023),
            uniform(&mut rng, 0, 8191),
        ];
        Draws {
            rng,
            follow,
            c,
            text: String::new(),
        }
    }

    /// `sysbench.rand.uniform(a, b)`.
    pub fn uniform(&mut self, a: i64, b: i64) -> i64 {
        uniform(&mut self.rng, a, b)
    }

    /// `sysbench.rand.uniform_double()`.
    pub fn unit(&mut self) -> f64 {
        unit(&mut self.rng)
    }

    /// `sysbench.rand.string(template)`: `#` a digit, `@` a lower-case letter.
    pub fn string(&mut self, template: &str) -> String {
        fill_string(&mut self.rng, template, &mut self.text);
        self.text.clone()
    }

    /// One random letter written `n` times (sysbench-tpcc's `string.rep(rand.string("@"), n)`).
    pub fn letters(&mut self, n: i64) -> String {
        let letter = (b'a' + self.uniform(0, 25) as u8) as char;
        std::iter::repeat_n(letter, n.max(0) as usize).collect()
    }

    /// NURand(A, x, y): ((uniform(0, A) | uniform(x, y)) + C) % (y - x + 1) + x.
    pub fn nurand(&mut self, a: i64, x: i64, y: i64) -> i64 {
        let slot = match a {
            255 => 0,
            1023 => 1,
            _ => 2,
        };
        if self.follow == Follow::SysbenchTpcc {
            // Drawn in the same order as sysbench-tpcc, every call.
            let c = [
                self.uniform(0, 255),
                self.uniform(0, 1023),
                self.uniform(0, 8191),
            ];
            self.c = c;
        }
        let i = self.uniform(0, a);
        let j = self.uniform(x, y);
        ((i | j) + self.c[slot]) % (y - x + 1) + x
    }

    /// A warehouse other than `home` for a remote order line or payment. sysbench-tpcc's loop
    /// stops when it draws `home`, so its "remote" warehouse is always the home one; the
    /// specification's is another one, when there is one.
    pub fn other_warehouse(&mut self, home: i64, warehouses: i64) -> i64 {
        if warehouses == 1 || self.follow == Follow::SysbenchTpcc {
            return home;
        }
        loop {
            let w = self.uniform(1, warehouses);
            if w != home {
                return w;
            }
        }
    }
}

/// TPC-C's last name of number `n` (0..=999): three syllables by its digits.
pub fn last_name(n: i64) -> String {
    const SYLLABLES: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    let n = n.clamp(0, 999) as usize;
    [n / 100, n / 10 % 10, n % 10]
        .map(|d| SYLLABLES[d])
        .concat()
}

/// The row (0-based) a by-name lookup takes among `count` customers of one name, ordered by
/// first name: sysbench-tpcc reads rows 1..=(n/2)+1 of the result, n rounded up to even when
/// above 1 and odd, and keeps the last; the specification's is the one at position ceil(n/2).
pub fn by_name_row(count: i64, follow: Follow) -> u64 {
    let count = count.max(1);
    match follow {
        Follow::SysbenchTpcc => (count + (count > 1 && count % 2 == 1) as i64) as u64 / 2,
        Follow::Spec => (count as u64).div_ceil(2) - 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn last_names_are_tpccs() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_is_skewed_with_one_c_and_smoothed_with_a_c_per_call() {
        // The share of draws on the most drawn tenth of the customers.
        let top_tenth = |follow| {
            let mut d = Draws::new(SmallRng::seed_from_u64(1), follow);
            let mut counts = vec![0u32; 3000];
            for _ in 0..300_000 {
                let c = d.nurand(1023, 1, 3000);
                assert!((1..=3000).contains(&c));
                counts[(c - 1) as usize] += 1;
            }
            counts.sort_unstable_by(|a, b| b.cmp(a));
            f64::from(counts[..300].iter().sum::<u32>()) / 300_000.0
        };
        let (spec, sysbench) = (top_tenth(Follow::Spec), top_tenth(Follow::SysbenchTpcc));
        eprintln!("top tenth: spec {spec:.3}, sysbench-tpcc {sysbench:.3}");
        assert!(spec > 0.2, "{spec}");
        // A C drawn at every call shifts each draw by a random offset: the skew mostly goes.
        assert!(
            sysbench < spec && sysbench < 0.15,
            "{sysbench} against {spec}"
        );
    }

    #[test]
    fn the_remote_warehouse_and_the_row_by_name() {
        let mut d = Draws::new(SmallRng::seed_from_u64(2), Follow::SysbenchTpcc);
        assert!((0..100).all(|_| d.other_warehouse(3, 10) == 3));
        let mut d = Draws::new(SmallRng::seed_from_u64(2), Follow::Spec);
        assert!((0..100).all(|_| d.other_warehouse(3, 10) != 3));
        assert_eq!(d.other_warehouse(1, 1), 1);
        // 1 name: row 0; 2: row 1; 3 (as 4): row 2; 4: row 2; 5 (as 6): row 3.
        let rows = |f| [1, 2, 3, 4, 5].map(|n| by_name_row(n, f));
        assert_eq!(rows(Follow::SysbenchTpcc), [0, 1, 2, 2, 3]);
        assert_eq!(rows(Follow::Spec), [0, 0, 1, 1, 2]);
    }
}
