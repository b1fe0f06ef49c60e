#!/usr/bin/env bash
# What keeping each step's slowest operations costs: readrandom on the null engine and cached
# readrandom on RocksDB, one client, by two builds (before and after a change to the client
# loop) or one build with two sets of arguments (BEFORE_ARGS, AFTER_ARGS), alternating which
# goes first in every repeat. Prints each run's ops/s and CPU per operation, then the medians
# and the median of the paired ratios (after over before).
#   BEFORE=/tmp/fathom-before AFTER=/tmp/fathom-after REPEATS=5 bench/tail-cost.sh
# The perf context's cost (RocksDB's per-operation work counters), on fwdrange (seek and next):
#   BEFORE=$F AFTER=$F BEFORE_ARGS='--set perf_context=false' ENGINES=rocksdb STEP=fwdrange \
#     REPEATS=11 bench/tail-cost.sh
# A server's log of statements, on sysbench's point selects (WORKLOAD replaces dbbench's steps):
#   BEFORE=$F AFTER=$F AFTER_ARGS='--set statement_log=true' ENGINES='postgres innodb' \
#     STEP=oltp_point_select WORKLOAD='--workload sysbench --param tests=oltp_point_select' \
#     REPEATS=7 bench/tail-cost.sh
set -euo pipefail
BEFORE=${BEFORE:?BEFORE is the fathom binary before the change}
AFTER=${AFTER:?AFTER is the fathom binary after it}
BEFORE_ARGS=${BEFORE_ARGS:-}
AFTER_ARGS=${AFTER_ARGS:-}
ENGINES=${ENGINES:-null rocksdb}
STEP=${STEP:-readrandom}
WORKLOAD=${WORKLOAD:---workload dbbench --param steps=fillseq,$STEP --param num_keys=200000}
REPEATS=${REPEATS:-5}
DURATION=${DURATION:-5}
WORK=${WORK:-/var/tmp/fathom-tail-cost}
rm -rf "$WORK" && mkdir -p "$WORK"

# One run of engine $2 by binary $1 with arguments $3 (and the workload's): prints the step's ops/s and CPU ns per
# operation.
one() {
  local bin=$1 engine=$2 args=$3 out="$WORK/r"
  rm -rf "$out"
  # shellcheck disable=SC2086 # the arguments are words
  "$bin" run --engine "$engine" $WORKLOAD --clients 1 --duration "${DURATION}s" \
    --results "$out" $args >/dev/null
  python3 -c 'import glob, json, sys
s = json.load(open(sorted(glob.glob(sys.argv[1] + "/*/steps/*" + sys.argv[2] + ".json"))[-1]))
print(round(s["ops_per_sec"]), round(s["per_op"]["cpu_us"] * 1000, 1))' "$out" "$STEP"
}

for rep in $(seq "$REPEATS"); do
  for engine in $ENGINES; do
    order=(before after)
    ((rep % 2)) || order=(after before)
    for name in "${order[@]}"; do
      if [ "$name" = before ]; then
        r=$(one "$BEFORE" "$engine" "$BEFORE_ARGS")
      else
        r=$(one "$AFTER" "$engine" "$AFTER_ARGS")
      fi
      echo "$engine $name $rep $r" | tee -a "$WORK/all"
    done
  done
done

python3 - "$WORK/all" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("| engine | build | ops/s (median) | CPU ns/op (median) | paired ops/s ratio (median, range) |")
print("|---|---|---|---|---|")
for engine in dict.fromkeys(r[0] for r in rows):
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
