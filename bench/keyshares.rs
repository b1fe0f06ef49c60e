//! Key popularity of fathom's YCSB choosers (bench/compare-ycsb-keys.sh): draws DRAWS record
//! numbers from a distribution over RECORDS loaded records, as a workload file's phase does,
//! and prints the share of the draws on the hottest 1% and 10% of the records.
//!   cargo run --release -p fathom-cli --example keyshares -- zipfian 100000 1000000

use fathom_workloads::declared::gen::Chooser;
use rand::rngs::SmallRng;
use rand::SeedableRng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dist, records, draws) = match args.as_slice() {
        [_, d, r, n] => (
            d.as_str(),
            r.parse::<u64>().unwrap(),
            n.parse::<u64>().unwrap(),
        ),
        _ => {
            eprintln!("usage: keyshares uniform|zipfian|latest|hotspot|exponential RECORDS DRAWS");
            std::process::exit(2);
        }
    };
    let mut chooser =
        Chooser::by_name(dist, records).unwrap_or_else(|| panic!("unknown distribution {dist}"));
    let mut rng = SmallRng::seed_from_u64(1);
    let mut counts = vec![0u64; records as usize];
    for _ in 0..draws {
        counts[chooser.next(&mut rng, records - 1) as usize] += 1;
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let share = |part: f64| {
        let n = ((records as f64 * part).ceil() as usize).max(1);
        counts[..n].iter().sum::<u64>() as f64 / draws as f64
    };
    println!("{:.4} {:.4}", share(0.01), share(0.10));
}
