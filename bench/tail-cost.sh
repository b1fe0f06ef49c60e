#!/usr/bin/env bash
# What keeping each step's slowest operations costs: readrandom on the null engine and cached
# readrandom on RocksDB, one client, by two builds (before and after a change to the client
# loop), alternating which goes first in every repeat. Prints each run's ops/s and CPU per
# operation, then the medians and the median of the paired ratios (after over before).
#   BEFORE=/tmp/fathom-before AFTER=/tmp/fathom-after REPEATS=5 bench/tail-cost.sh
set -euo pipefail
BEFORE=${BEFORE:?BEFORE is the fathom binary before the change}
AFTER=${AFTER:?AFTER is the fathom binary after it}
REPEATS=${REPEATS:-5}
DURATION=${DURATION:-5}
WORK=${WORK:-/var/tmp/fathom-tail-cost}
rm -rf "$WORK" && mkdir -p "$WORK"

# One run of engine $2 by binary $1: prints readrandom's ops/s and CPU ns per operation.
one() {
  local bin=$1 engine=$2 out="$WORK/r"
  rm -rf "$out"
  "$bin" run --engine "$engine" --workload dbbench --param steps=fillseq,readrandom \
    --param num_keys=200000 --clients 1 --duration "${DURATION}s" --results "$out" >/dev/null
  python3 -c 'import glob, json, sys
s = json.load(open(sorted(glob.glob(sys.argv[1] + "/*/steps/*readrandom.json"))[-1]))
print(round(s["ops_per_sec"]), round(s["per_op"]["cpu_us"] * 1000, 1))' "$out"
}

for rep in $(seq "$REPEATS"); do
  for engine in null rocksdb; do
    order=("$BEFORE" "$AFTER")
    ((rep % 2)) || order=("$AFTER" "$BEFORE")
    for b in "${order[@]}"; do
      name=before
      [ "$b" = "$AFTER" ] && name=after
      echo "$engine $name $rep $(one "$b" "$engine")" | tee -a "$WORK/all"
    done
  done
done

python3 - "$WORK/all" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("| engine | build | ops/s (median) | CPU ns/op (median) | paired ops/s ratio (median, range) |")
print("|---|---|---|---|---|")
for engine in ("null", "rocksdb"):
    by = {(r[1], int(r[2])): (float(r[3]), float(r[4])) for r in rows if r[0] == engine}
    reps = sorted({k[1] for k in by})
    ratios = [by[("after", r)][0] / by[("before", r)][0] for r in reps]
    for build in ("before", "after"):
        ops = statistics.median(by[(build, r)][0] for r in reps)
        cpu = statistics.median(by[(build, r)][1] for r in reps)
        extra = ""
        if build == "after":
            extra = f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
        print(f"| {engine} | {build} | {ops:,.0f} | {cpu:.0f} | {extra} |")
PY
