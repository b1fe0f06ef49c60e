#!/usr/bin/env bash
# fathom's dbbench steps against a minimal loop of the same engine calls (bench/kvloop.rs), on
# each embedded engine: fillseq (keys in order, one thread), readrandom and fwdrange (random
# keys, THREADS threads, DURATION seconds). Both open the engine through the same code with the
# same options and settings and draw the same keys and values; the loop has no recorder,
# histogram, sampler, rate or progress, so fathom's shortfall from it is the harness's cost.
# Each step is its own process for both tools, both starting on copies of one database (the
# one the previous step left), alternating, the tool going first changing between repeats
# (lib.sh's on_copies).
#   bench/compare-loops.sh                                   # 4 engines, 1M keys, 2 threads, 10 s, 5 repeats
#   ENGINES="lmdb sqlite" NUM_KEYS=200000 REPEATS=3 bench/compare-loops.sh
#   STEPS=fillseq bench/compare-loops.sh                    # some of the steps (in this order)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
ENGINES=${ENGINES:-rocksdb wiredtiger lmdb sqlite}
NUM_KEYS=${NUM_KEYS:-1000000}
THREADS=${THREADS:-2}
DURATION=${DURATION:-10}
REPEATS=${REPEATS:-5}
WORK=${WORK:-/var/tmp/fathom-loops}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli --features bundled-rocksdb,mongodb-driver --bin fathom --example kvloop
fathom="$CARGO_TARGET_DIR/release/fathom"
kvloop="$CARGO_TARGET_DIR/release/examples/kvloop"
rm -rf "$WORK" && mkdir -p "$WORK"
read -r -a steps <<<"${STEPS:-fillseq readrandom fwdrange}"

# One step of engine $e's loop in database $3; appends "engine step rep ops/s".
loop_step() {
  local rep=$1 s=$2 db=$3 out
  out=$("$kvloop" --engine "$e" --data-dir "$db" --step "$s" --num-keys "$NUM_KEYS" \
    --threads "$THREADS" --duration "$DURATION")
  echo "$e $s $rep $(awk '{ print $2 }' <<<"$out")" >>"$WORK/loop.rows"
  echo "loop   $e $rep $s: $(awk '{ print $2 }' <<<"$out") ops/s" >&2
}
# The same step with fathom (--existing-data); ops/s from its CSV report.
fathom_step() {
  local rep=$1 s=$2 db=$3 out="$WORK/fathom.$e.$1.$2"
  "$fathom" run --engine "$e" --workload dbbench --param steps="$s" --param num_keys="$NUM_KEYS" \
    --param seek_nexts=10 --clients "$THREADS" --duration "${DURATION}s" --data-dir "$db" \
    --existing-data --no-calibrate --results "$out" --format csv >"$out.csv" 2>"$out.log"
  echo "$e $s $rep $(awk -F, 'NR == 2 { print $2 }' "$out.csv")" >>"$WORK/fathom.rows"
  echo "fathom $e $rep $s: $(awk -F, 'NR == 2 { print $2 }' "$out.csv") ops/s" >&2
}

for e in $ENGINES; do
  for rep in $(seq 1 "$REPEATS"); do
    new_chain
    for s in "${steps[@]}"; do on_copies "$rep" "$s" loop_step fathom_step; done
  done
done
rm -rf "$WORK/chain" "$WORK/copy"

# The median and the spread of a tool's ops/s for engine $2's step $3.
stats() {
  local v
  v=$(awk -v e="$2" -v s="$3" '$1 == e && $2 == s { print $4 }' "$1")
  echo "$(median <<<"$v") $(spread <<<"$v")"
}
echo
echo "keys $NUM_KEYS (20 B keys, 400 B values), $THREADS threads for the random steps, ${DURATION}s, medians of $REPEATS"
printf "%-11s %-11s %12s %12s %6s %7s %7s\n" engine step loop/s fathom/s ratio "loop ±" "fa ±"
for e in $ENGINES; do
  for s in "${steps[@]}"; do
    read -r l ls < <(stats "$WORK/loop.rows" "$e" "$s")
    read -r f fs < <(stats "$WORK/fathom.rows" "$e" "$s")
    printf "%-11s %-11s %12s %12s %6.2f %7s %7s\n" "$e" "$s" "$l" "$f" \
      "$(awk -v f="$f" -v l="$l" 'BEGIN { print (l > 0) ? f / l : 0 }')" "$ls" "$fs"
  done
done
echo "ratio: fathom / loop; ±: each tool's spread between repeats, (max - min) / median."
echo "Outputs of every run: $WORK"
