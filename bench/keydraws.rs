//! What a record choice costs: times DRAWS draws of each of fathom's YCSB choosers over RECORDS
//! records (a phase without inserts), in five batches, and prints each distribution's median ns
//! per draw and the time to make the chooser (zipfian's ζ, precomputed by YCSB for its scrambled
//! zipfian, summed for latest's).
//!   cargo run --release -p fathom-cli --example keydraws -- 1000000000 20000000

use fathom_workloads::declared::gen::Chooser;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (records, draws) = match args.as_slice() {
        [_, r, n] => (r.parse::<u64>().unwrap(), n.parse::<u64>().unwrap()),
        _ => {
            eprintln!("usage: keydraws RECORDS DRAWS");
            std::process::exit(2);
        }
    };
    println!(
        "{:<12} {:>10} {:>12}",
        "distribution", "ns/draw", "made in ms"
    );
    for dist in ["uniform", "zipfian", "latest", "hotspot", "exponential"] {
        let made = Instant::now();
        let mut chooser = Chooser::by_name(dist, records).expect("a known distribution");
        let made = made.elapsed().as_secs_f64() * 1e3;
        let mut rng = SmallRng::seed_from_u64(1);
        let mut batches: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let mut sum = 0u64;
                for _ in 0..draws / 5 {
                    sum = sum.wrapping_add(chooser.next(&mut rng, records - 1));
                }
                std::hint::black_box(sum);
                start.elapsed().as_nanos() as f64 / (draws / 5) as f64
            })
            .collect();
        batches.sort_by(f64::total_cmp);
        println!("{dist:<12} {:>10.1} {made:>12.1}", batches[2]);
    }
}
