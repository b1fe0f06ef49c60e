#!/usr/bin/env bash
# Key popularity side by side: YCSB 0.17.0's own generators (its core jar from Maven Central,
# called by bench/ycsb/KeyShares.java) and fathom's (bench/keyshares.rs) draw the records of a
# phase without inserts; each prints the share of the draws on the hottest 1% and 10% of the
# records, per distribution.
#   bench/compare-ycsb-keys.sh                 # 100,000 records, 2,000,000 draws
#   bench/compare-ycsb-keys.sh 1000000 10000000
set -euo pipefail
records=${1:-100000}
draws=${2:-2000000}
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --java
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli --features bundled-rocksdb,mongodb-driver --example keyshares
work=$(mktemp -d /tmp/fathom-ycsb-keys.XXXXXX)
mvn -q dependency:get -Dartifact=site.ycsb:core:0.17.0 -Dtransitive=false >&2
jar=$HOME/.m2/repository/site/ycsb/core/0.17.0/core-0.17.0.jar
javac -d "$work" -cp "$jar" "$root/bench/ycsb/KeyShares.java"
printf '%-12s %10s %10s %10s %10s\n' distribution ycsb_top1% fathom_top1% ycsb_top10% fathom_top10%
for d in uniform zipfian latest hotspot exponential; do
  read -r y1 y10 < <(java -cp "$work:$jar" KeyShares "$d" "$records" "$draws")
  read -r f1 f10 < <("$CARGO_TARGET_DIR/release/examples/keyshares" "$d" "$records" "$draws")
  awk -v d="$d" -v a="$y1" -v b="$f1" -v c="$y10" -v e="$f10" \
    'BEGIN { printf "%-12s %10.2f %10.2f %10.2f %10.2f\n", d, a * 100, b * 100, c * 100, e * 100 }'
done
echo "$records records, $draws draws; shares in percent of the draws"
