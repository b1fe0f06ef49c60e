#!/usr/bin/env bash
# What `--waits` costs a step, and what the always-on thread accounting costs: the same step with
# and without --waits, alternating (without first in odd repeats), on two steps where the
# clients are busiest: dbbench readrandom on RocksDB (embedded, clients on the CPU) and
# sysbench's point select on InnoDB (a server, clients mostly waiting on the socket).
#   REPEATS=5 DURATION=10 bench/waits-cost.sh
#   TOOLS=rocksdb REPEATS=7 bench/waits-cost.sh            # one of the two steps
#   WAITS=--waits=bpf bench/waits-cost.sh                   # the eBPF method (as root)
# Prints each step's median ops/s with and without and their ratio, the sampler's own CPU
# (cost_ms; with bpf, also the program's time in the kernel) and the accounting's reads (read_ms)
# per step.
set -euo pipefail
REPEATS=${REPEATS:-5}
TOOLS=${TOOLS:-rocksdb innodb}
DURATION=${DURATION:-10}
WAITS=${WAITS:---waits}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
"$root/scripts/setup.sh" --servers
build_fathom
work=$(mktemp -d /tmp/fathom-waits.XXXXXX)
chmod 755 "$work"
echo "waits-cost: ${DURATION}s x $REPEATS repeats; files in $work" >&2

# One run: "ops/s read_ms cost_ms" of step file $2 of results $1.
figures() {
  python3 - "$1" "$2" <<'PY'
import glob, json, sys
s = json.load(open(glob.glob(sys.argv[1] + "/*/steps/*" + sys.argv[2] + ".json")[0]))
print(s["ops_per_sec"], s.get("time", {}).get("read_ms", "-"), (s.get("waits") or {}).get("cost_ms", "-"))
PY
}

# dbbench readrandom on one RocksDB database, loaded once and opened again by each run.
[[ $TOOLS == *rocksdb* ]] && "$fathom" run --engine rocksdb --workload dbbench \
  --param num_keys=1000000 --param steps=fillseq --data-dir "$work/rocksdb" --keep-data \
  --results "$work/load" --no-calibrate >/dev/null 2>&1
rocksdb() {
  "$fathom" run --engine rocksdb --workload dbbench --param num_keys=1000000 --param steps=readrandom \
    --data-dir "$work/rocksdb" --existing-data --keep-data --duration "${DURATION}s" --clients 2 \
    --no-calibrate --results "$work/$1" "${@:2}" >/dev/null 2>&1
  figures "$work/$1" readrandom
}
# sysbench point select on one InnoDB server, prepared once.
[[ $TOOLS == *innodb* ]] && serve_engine innodb && "$fathom" run --engine innodb --set "url=$url" --set "pid=$pid" --workload sysbench \
  --param tests=oltp_point_select --param prepare=true --param duration=1s --clients 2 \
  --no-calibrate --results "$work/prep" >/dev/null 2>&1
innodb() {
  "$fathom" run --engine innodb --set "url=$url" --set "pid=$pid" --workload sysbench \
    --param tests=oltp_point_select --param prepare=false --duration "${DURATION}s" --clients 2 \
    --no-calibrate --results "$work/$1" "${@:2}" >/dev/null 2>&1
  figures "$work/$1" point_select
}

printf '%-22s %12s %12s %6s %8s %8s\n' step without with ratio read_ms cost_ms
for tool in $TOOLS; do
  off_f=$work/$tool.off on_f=$work/$tool.on
  : >"$off_f" && : >"$on_f"
  for rep in $(seq "$REPEATS"); do
    if ((rep % 2)); then
      $tool "$tool-off-$rep" >>"$off_f"; $tool "$tool-on-$rep" "$WAITS" >>"$on_f"
    else
      $tool "$tool-on-$rep" "$WAITS" >>"$on_f"; $tool "$tool-off-$rep" >>"$off_f"
    fi
  done
  off=$(awk '{ print $1 }' "$off_f" | median) on=$(awk '{ print $1 }' "$on_f" | median)
  awk -v t="$tool" -v a="$off" -v b="$on" -v r="$(awk '{ print $2 }' "$off_f" | median)" \
    -v c="$(awk '{ print $3 }' "$on_f" | median)" \
    'BEGIN { printf "%-22s %12.0f %12.0f %6.3f %8.2f %8.1f\n", t, a, b, b / a, r, c }'
done
echo "medians of $REPEATS alternating repeats, ${DURATION}s each, with $WAITS; read_ms: the accounting's" \
  "reads per step (without it); cost_ms: what $WAITS cost per step (CPU)"
