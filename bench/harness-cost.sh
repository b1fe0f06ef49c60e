#!/usr/bin/env bash
# The harness's own CPU per operation on the null engine: the built-in dbbench readrandom beside
# workload files, one client, each run its own process, alternating in every repeat, so the
# host's drift falls on all alike. Prints each workload's median ns per operation and the median
# of its ratios to the readrandom run of the same repeat (the issue's "within 1.2x").
# FATHOM_BINS (a list of binaries, default the one built here) compares builds: each workload
# runs once per binary in every repeat, the rows named by the binary.
#   bench/harness-cost.sh                                   # 7 repeats, 4 s runs
#   REPEATS=3 DURATION=2 bench/harness-cost.sh dbbench/readrandom ycsb/workloadc my.toml
#   FATHOM_BINS="/tmp/before /tmp/after" bench/harness-cost.sh ycsb/workloadc
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
REPEATS=${REPEATS:-7}
DURATION=${DURATION:-4}
WORK=${WORK:-/var/tmp/fathom-harness-cost}
if [ -z "${FATHOM_BINS:-}" ]; then
  build_fathom
  FATHOM_BINS=$fathom
fi
read -r -a bins <<<"$FATHOM_BINS"
files=("$@")
((${#files[@]})) || files=(dbbench/readrandom ycsb/workloadc)
rm -rf "$WORK" && mkdir -p "$WORK"

# One run of workload $2 by binary $1: prints its CPU per operation in ns.
one() {
  local bin=$1 w=$2 out="$WORK/r"
  rm -rf "$out"
  if [ "$w" = builtin ]; then
    "$bin" run --engine null --workload dbbench --param steps=readrandom --clients 1 \
      --duration "${DURATION}s" --results "$out" >/dev/null
  else
    # Only the file's last phase is timed; a null engine needs no load.
    local step
    "$bin" run --engine null --workload declared --param "file=$w" --param records=1 \
      --param operations=1 --clients 1 --results "$out" >/dev/null
    step=$(python3 -c 'import glob, json, sys
print(json.load(open(sorted(glob.glob(sys.argv[1] + "/*/steps/*.json"))[-1]))["step"])' "$out")
    rm -rf "$out"
    "$bin" run --engine null --workload declared --param "file=$w" --param "steps=$step" \
      --clients 1 --duration "${DURATION}s" --results "$out" >/dev/null
  fi
  python3 -c 'import glob, json, sys
s = json.load(open(sorted(glob.glob(sys.argv[1] + "/*/steps/*.json"))[-1]))
print(round(s["per_op"]["cpu_us"] * 1000, 1))' "$out"
}

for rep in $(seq "$REPEATS"); do
  base=$(one "${bins[-1]}" builtin)
  echo "builtin ${bins[-1]} $rep $base 1" >>"$WORK/all"
  for w in "${files[@]}"; do
    for b in "${bins[@]}"; do
      ns=$(one "$b" "$w")
      echo "$w $b $rep $ns $(awk -v a="$ns" -v b="$base" 'BEGIN { printf "%.3f", a / b }')" >>"$WORK/all"
    done
  done
  echo "repeat $rep of $REPEATS done" >&2
done

echo "| workload | binary | ns per operation (median) | ratio to readrandom (median) |"
echo "|---|---|---|---|"
for w in builtin "${files[@]}"; do
  for b in "${bins[@]}"; do
    rows=$(awk -v w="$w" -v b="$b" '$1 == w && $2 == b' "$WORK/all")
    [ -n "$rows" ] || continue
    name=$w
    [ "$w" = builtin ] && name="built-in dbbench readrandom"
    echo "| $name | $b | $(awk '{ print $4 }' <<<"$rows" | median) | $(awk '{ print $5 }' <<<"$rows" | median) |"
  done
done
