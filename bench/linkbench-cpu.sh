#!/usr/bin/env bash
# LinkBench's request phase on managed servers: the CPU fathom's own process spends per request
# (its clients, the workload's generators, the recorder and sampler) beside the server's, each
# the median of REPEATS runs. Issue 16's figure: at filing, 33 µs of fathom per request beside
# 96 µs of InnoDB's, where LinkBench's Java client spends about 40 µs once warm. waits/r is the
# times fathom's threads blocked per request, µs/wait its CPU per blocking wait: compare the
# floor bench/roundtrip-floor.sh measures.
#   bench/linkbench-cpu.sh                          # innodb and postgres, maxid1 200001, 2 clients, 60 s, 3 repeats
#   ENGINES="postgres" MAXID1=20001 DURATION=10s REPEATS=1 bench/linkbench-cpu.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
ENGINES=${ENGINES:-innodb postgres}
MAXID1=${MAXID1:-200001}
CLIENTS=${CLIENTS:-2}
DURATION=${DURATION:-60s}
REPEATS=${REPEATS:-3}
"$root/scripts/setup.sh" --servers
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli
fathom=$CARGO_TARGET_DIR/release/fathom
work=$(mktemp -d /var/tmp/fathom-linkbench-cpu.XXXXXX)
chmod 755 "$work"
printf '%-9s %4s %10s %12s %12s %10s %8s %10s\n' engine rep "req/s" "fathom µs/r" "server µs/r" "fathom %" \
  "waits/r" "µs/wait"
for e in $ENGINES; do
  for r in $(seq 1 "$REPEATS"); do
    out=$work/$e.$r
    "$fathom" run --engine "$e" --workload linkbench --clients "$CLIENTS" \
      --param maxid1="$MAXID1" --param duration="$DURATION" --results "$out" >/dev/null 2>"$out.log"
    "$fathom" report "$out" --format json | python3 -c '
import json, sys
run = json.load(sys.stdin)["runs"][0]
s = next(s for s in run["steps"] if s["step"] == "request")
p = s["per_op"]
h, g, rate = p.get("cpu_us_harness") or 0, p.get("cpu_us_engine") or 0, s["ops_per_sec"]
w = p.get("waits_harness") or 0
per_wait = h / w if w else 0
print(f"{sys.argv[1]:<9} {sys.argv[2]:>4} {rate:>10.0f} {h:>12.2f} {g:>12.2f} {100*h/(h+g):>9.1f}% {w:>8.2f} {per_wait:>10.2f}")
' "$e" "$r" | tee -a "$work/rows"
  done
done
echo "medians of $REPEATS:"
for e in $ENGINES; do
  col() { awk -v e="$e" -v c="$1" '$1 == e { print $c }' "$work/rows" | median; }
  printf '%-9s %4s %10s %12s %12s %10s %8s %10s\n' "$e" med "$(col 3)" "$(col 4)" "$(col 5)" "" \
    "$(col 7)" "$(col 8)"
done
rm -rf "$work"
