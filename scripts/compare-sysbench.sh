#!/usr/bin/env bash
# fathom's sysbench workload against the real sysbench 1.0.20 (Debian's package), side by side
# in one sitting: one server started by `fathom serve`, tables prepared once by fathom, then at
# each client count a fathom run and a sysbench run of the same test, alternating.
#
#   scripts/compare-sysbench.sh [ENGINE] [CLIENTS] [SECONDS] [TEST]
#     ENGINE   innodb (default), myrocks or postgres
#     CLIENTS  1,2,4,8 (default)
#     SECONDS  20 (default): length of each run
#     TEST     oltp_point_select (default), or any test both tools have
#   TABLES (4) and TABLE_SIZE (100000) in the environment size the tables.
#
# Prints, per client count: queries per second of each tool, fathom/sysbench, and each
# client's CPU per query (fathom: its whole process, sampler and progress included;
# sysbench: user + system time of the sysbench process).
set -euo pipefail
engine=${1:-innodb}
clients=${2:-1,2,4,8}
secs=${3:-20}
test=${4:-oltp_point_select}
tables=${TABLES:-4}
size=${TABLE_SIZE:-100000}
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --servers --peers
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli
fathom=$CARGO_TARGET_DIR/release/fathom
work=$(mktemp -d /tmp/fathom-vs-sysbench.XXXXXX)
echo "compare-sysbench: results in $work" >&2

"$fathom" serve --engine "$engine" --set cache_size=1g --data-dir "$work/data" \
  --url-file "$work/url" >"$work/serve.log" 2>&1 &
serve=$!
trap 'kill -INT $serve 2>/dev/null; wait $serve 2>/dev/null || true' EXIT
for _ in $(seq 600); do
  [[ -s $work/url ]] && break
  kill -0 $serve 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.2
done
url=$(sed -n 1p "$work/url")
pid=$(sed -n 2p "$work/url")

case $engine in
  innodb | myrocks)
    socket=${url#*socket=}
    driver=(--db-driver=mysql "--mysql-socket=$socket" --mysql-user=root --mysql-db=sbtest)
    [[ $engine == myrocks ]] && driver+=(--mysql-storage-engine=rocksdb)
    ;;
  postgres)
    host=$(sed -E 's/.*host=([^ ]+).*/\1/' <<<"$url")
    driver=(--db-driver=pgsql "--pgsql-host=$host" --pgsql-user=postgres --pgsql-db=sbtest)
    ;;
  *) echo "compare-sysbench: ENGINE is innodb, myrocks or postgres" >&2; exit 2 ;;
esac

common=(--workload sysbench --set "url=$url" --set "pid=$pid" --param "tables=$tables"
  --param "table_size=$size" --param "tests=$test" --no-calibrate)
echo "compare-sysbench: preparing $tables tables of $size rows on $engine" >&2
"$fathom" run --engine "$engine" "${common[@]}" --duration 1s --clients 1 \
  --results "$work/prepare" >/dev/null 2>"$work/prepare.log"

# fathom's CSV report: the named column of the test's step.
column() {
  awk -F, -v step="$test" -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i }
    NR > 1 && $1 == step { print $c }' "$1"
}

printf '%8s %12s %12s %8s %14s %14s\n' clients fathom_qps sysbench_qps ratio fathom_us/q sysbench_us/q
for c in ${clients//,/ }; do
  "$fathom" run --engine "$engine" "${common[@]}" --param prepare=off --duration "${secs}s" \
    --clients "$c" --results "$work/fathom-c$c" --format csv >"$work/fathom-c$c.csv" 2>"$work/fathom-c$c.log"
  f_ops=$(column "$work/fathom-c$c.csv" ops/s)
  f_us=$(column "$work/fathom-c$c.csv" fathom/o)
  q_per_op=$(awk -v t="$test" 'BEGIN { print (t == "oltp_read_only") ? 16 : (t == "oltp_read_write") ? 20 : (t == "oltp_write_only") ? 6 : 1 }')
  { TIMEFORMAT='%U %S'; time sysbench "$test" "${driver[@]}" --tables="$tables" --table-size="$size" \
      --threads="$c" --time="$secs" --report-interval=0 run >"$work/sysbench-c$c.log"; } 2>"$work/sysbench-c$c.cpu"
  s_qps=$(awk '/queries:/ { gsub(/[()]/, "", $3); print $3 }' "$work/sysbench-c$c.log")
  s_q=$(awk '/queries:/ { print $2 }' "$work/sysbench-c$c.log")
  read -r s_user s_sys <"$work/sysbench-c$c.cpu"
  awk -v c="$c" -v fo="$f_ops" -v qpo="$q_per_op" -v fu="$f_us" -v sq="$s_qps" -v n="$s_q" -v u="$s_user" -v s="$s_sys" \
    'BEGIN { fq = fo * qpo; printf "%8d %12.0f %12.0f %8.3f %14.2f %14.2f\n", c, fq, sq, fq / sq, fu / qpo, (u + s) * 1e6 / n }'
done
