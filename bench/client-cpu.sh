#!/usr/bin/env bash
# fathom's own CPU beside a managed server's, per operation and per row, for chosen steps of a
# workload: each figure the median of REPEATS runs, from the steps' records. waits/op is the
# times fathom's threads blocked per operation and µs/wait its CPU per blocking wait: compare
# the floor bench/roundtrip-floor.sh measures for any client on the machine.
#   WORKLOAD=ibench PARAMS="rows=1000000 write_rows=200000 steps=l.i0,l.x,l.i1" STEPS="l.i0 l.i1" bench/client-cpu.sh
#   bench/linkbench-cpu.sh                         # LinkBench's request phase (issue 16's figure)
# ENGINES (innodb postgres), CLIENTS (2) and REPEATS (3) apply to both.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
ENGINES=${ENGINES:-innodb postgres}
CLIENTS=${CLIENTS:-2}
REPEATS=${REPEATS:-3}
WORKLOAD=${WORKLOAD:?WORKLOAD is a fathom workload: ibench, linkbench, sysbench, dbbench}
STEPS=${STEPS:?STEPS is the steps to report, space-separated}
params=()
for kv in ${PARAMS:-}; do params+=(--param "$kv"); done
"$root/scripts/setup.sh" --servers
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli --features bundled-rocksdb,mongodb-driver
fathom=$CARGO_TARGET_DIR/release/fathom
work=$(mktemp -d /var/tmp/fathom-client-cpu.XXXXXX)
chmod 755 "$work"
head=(engine step rep "ops/s" "fathom µs/op" "server µs/op" "fathom %" "waits/op" "µs/wait" "fathom µs/row")
printf '%-9s %-8s %4s %10s %13s %13s %9s %9s %9s %14s\n' "${head[@]}"
for e in $ENGINES; do
  for r in $(seq 1 "$REPEATS"); do
    out=$work/$e.$r
    "$fathom" run --engine "$e" --workload "$WORKLOAD" --clients "$CLIENTS" "${params[@]}" \
      --results "$out" >/dev/null 2>"$out.log"
    "$fathom" report "$out" --format json | python3 -c '
import json, sys
engine, rep, steps = sys.argv[1], sys.argv[2], sys.argv[3].split()
for s in json.load(sys.stdin)["runs"][0]["steps"]:
    if s["step"] not in steps:
        continue
    p = s["per_op"]
    h, g, rate = p.get("cpu_us_harness") or 0, p.get("cpu_us_engine") or 0, s["ops_per_sec"]
    w = p.get("waits_harness") or 0
    per_wait = h / w if w else 0
    rows = s.get("rows") or 0
    ops, step = s["ops"], s["step"]
    # Per row where operations insert rows in batches (the insert benchmark INSERTs).
    per_row = f"{h * ops / rows:.2f}" if rows >= ops > 0 else "-"
    share = 100 * h / (h + g) if h + g else 0
    print(f"{engine:<9} {step:<8} {rep:>4} {rate:>10.0f} {h:>13.2f} {g:>13.2f} {share:>8.1f}% "
          f"{w:>9.2f} {per_wait:>9.2f} {per_row:>14}")
' "$e" "$r" "$STEPS" | tee -a "$work/rows"
  done
done
echo "medians of $REPEATS:"
for e in $ENGINES; do
  for s in $STEPS; do
    col() { awk -v e="$e" -v s="$s" -v c="$1" '$1 == e && $2 == s { print $c }' "$work/rows" | median; }
    printf '%-9s %-8s %4s %10s %13s %13s %9s %9s %9s %14s\n' "$e" "$s" med "$(col 4)" "$(col 5)" \
      "$(col 6)" "" "$(col 8)" "$(col 9)" "$(col 10)"
  done
done
rm -rf "$work"
