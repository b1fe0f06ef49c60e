#!/usr/bin/env bash
# The mongodb engine's two clients side by side: fathom's own (client=fathom) and the official
# driver's sync API (client=driver), on sysbench's oltp_point_select against one FerretDB (over
# PostgreSQL) served by `fathom serve`, alternating, the client going first changing between
# repeats. Per client and client count: q/s and the CPU per query of the server (FerretDB and
# its PostgreSQL) and of fathom's own process, each the median of REPEATS runs.
#   bench/mongodb-client.sh                          # 1,2 clients, 10,000 documents, 15 s, 5 repeats
#   CLIENTS=1 DURATION=5s REPEATS=1 bench/mongodb-client.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
CLIENTS=${CLIENTS:-1,2}
TABLE_SIZE=${TABLE_SIZE:-10000}
DURATION=${DURATION:-15s}
REPEATS=${REPEATS:-5}
"$root/scripts/setup.sh" --test >/dev/null
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli --features bundled-rocksdb,mongodb-driver
fathom=$CARGO_TARGET_DIR/release/fathom
work=$(mktemp -d /var/tmp/fathom-mongodb-client.XXXXXX)
chmod 755 "$work"
"$fathom" serve --engine mongodb --data-dir "$work/server" >"$work/serve.out" 2>"$work/serve.log" &
server=$!
trap 'kill -INT $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 120); do grep -q '^url ' "$work/serve.out" 2>/dev/null && break; sleep 1; done
url=$(sed -n 's/^url //p' "$work/serve.out")
pid=$(sed -n 's/^pid //p' "$work/serve.out")
[ -n "$url" ] || { cat "$work/serve.log" >&2; exit 1; }
by_url=(--engine mongodb --workload sysbench --set "url=$url" --set "pid=$pid"
  --param table_size="$TABLE_SIZE" --param tests=oltp_point_select --no-calibrate)
"$fathom" run "${by_url[@]}" --duration 1s --clients 1 --results "$work/prepare" >/dev/null 2>&1

# One run of client $1 at $2 clients; appends "client clients q/s server-µs/q fathom-µs/q".
one() {
  local out=$work/run.$1.$2.$3
  "$fathom" run "${by_url[@]}" --set client="$1" --param prepare=off --duration "$DURATION" \
    --clients "$2" --results "$out" >/dev/null 2>"$out.log"
  "$fathom" report "$out" --format json | python3 -c '
import json, sys
run = json.load(sys.stdin)["runs"][0]
s = next(s for s in run["steps"] if s["step"] == "oltp_point_select")
p = s["per_op"]
print(sys.argv[1], sys.argv[2], round(s["ops_per_sec"], 1), round(p.get("cpu_us_engine") or 0, 1),
      round(p.get("cpu_us_harness") or 0, 1))
' "$1" "$2" | tee -a "$work/rows" >&2
}
for r in $(seq 1 "$REPEATS"); do
  for c in ${CLIENTS//,/ }; do
    if ((r % 2)); then one fathom "$c" "$r"; one driver "$c" "$r"; else one driver "$c" "$r"; one fathom "$c" "$r"; fi
  done
done
echo
echo "oltp_point_select on $(grep -o 'FerretDB [^)]*)' "$work/prepare"/*/run.json | head -1), $TABLE_SIZE documents, $DURATION, medians of $REPEATS"
printf '%-7s %-7s %9s %13s %13s\n' clients client "q/s" "server µs/q" "fathom µs/q"
for c in ${CLIENTS//,/ }; do
  for k in fathom driver; do
    col() { awk -v k="$k" -v c="$c" -v n="$1" '$1 == k && $2 == c { print $n }' "$work/rows" | median; }
    printf '%-7s %-7s %9s %13s %13s\n' "$c" "$k" "$(col 3)" "$(col 4)" "$(col 5)"
  done
done
