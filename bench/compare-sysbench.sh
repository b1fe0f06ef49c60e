#!/usr/bin/env bash
# Side by side, in one sitting: fathom's sysbench workload and the real sysbench 1.0.20
# (Debian's package) on one server started by `fathom serve` and one set of tables prepared
# once by fathom. At each client count the two tools alternate REPEATS times; each figure is
# the median of its repeats.
#   bench/compare-sysbench.sh                          # innodb, 1,2,4,8 clients, 15 s, oltp_point_select
#   bench/compare-sysbench.sh myrocks 1,2,4,8 20 oltp_read_only
#   TABLES=4 TABLE_SIZE=100000 REPEATS=3 bench/compare-sysbench.sh postgres
#   FATHOM_SETS="client=mysql" bench/compare-sysbench.sh innodb 1,2   # extra --set for fathom's runs
#   TABLES=1 bench/compare-sysbench.sh postgres 1,2 10 select_random_ranges
# The tests fathom has as workload files (oltp_insert, oltp_delete, select_random_ranges: bundled
# as sysbench/TEST) run from the file, on one table (TABLES=1) loaded by the file's load.
# Prints per client count: queries per second of each tool and fathom/sysbench, then each
# tool's CPU µs per query, user and system apart, of its whole process (fathom's sampler,
# progress and connections included; sysbench's Lua, its reporting thread and connections)
# from GNU time, and the ratio of the user times; then the times each tool's threads blocked
# per query (voluntary context switches). A query's system time is mostly the kernel's send,
# wait and receive on the socket, the same in both tools: bench/roundtrip-floor.sh measures
# what one wait costs on the machine.
set -euo pipefail
engine=${1:-innodb}
clients=${2:-1,2,4,8}
secs=${3:-15}
test=${4:-oltp_point_select}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
REPEATS=${REPEATS:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
"$root/scripts/setup.sh" --servers --peers
build_fathom
work=$(mktemp -d /tmp/fathom-vs-sysbench.XXXXXX)
# A server running as its own user (PostgreSQL's `postgres`) must reach its data directory.
chmod 755 "$work"
echo "compare-sysbench: $engine, $test, $TABLES x $TABLE_SIZE rows, ${secs}s x $REPEATS repeats; files in $work" >&2

serve_engine "$engine"

case $engine in
  innodb | myrocks)
    driver=(--db-driver=mysql "--mysql-socket=${url#*socket=}" --mysql-user=root --mysql-db=sbtest)
    ;;
  postgres)
    driver=(--db-driver=pgsql "--pgsql-host=$(sed -E 's/.*host=([^ ]+).*/\1/' <<<"$url")"
      --pgsql-user=postgres --pgsql-db=sbtest)
    ;;
  *) echo "compare-sysbench: ENGINE is innodb, myrocks or postgres" >&2; exit 2 ;;
esac

extra=()
for kv in ${FATHOM_SETS:-}; do extra+=(--set "$kv"); done
case $test in
  oltp_insert | oltp_delete | select_random_ranges)
    ((TABLES == 1)) || { echo "compare-sysbench: $test runs from its workload file on one table: TABLES=1" >&2; exit 2; }
    common=(--workload "sysbench/$test" --set "url=$url" --set "pid=$pid" "${extra[@]}"
      --param "vars=table_size=$TABLE_SIZE" --no-calibrate)
    "$fathom" run --engine "$engine" "${common[@]}" --param steps=load --clients 2 \
      --results "$work/prepare" >/dev/null 2>"$work/prepare.log"
    common+=(--param steps=run)
    step=run
    ;;
  *)
    common=(--workload sysbench --set "url=$url" --set "pid=$pid" "${extra[@]}" --param "tables=$TABLES"
      --param "table_size=$TABLE_SIZE" --param "tests=$test" --no-calibrate)
    "$fathom" run --engine "$engine" "${common[@]}" --duration 1s --clients 1 \
      --results "$work/prepare" >/dev/null 2>"$work/prepare.log"
    common+=(--param prepare=off)
    step=$test
    ;;
esac

# A column of the test's row in fathom's CSV report.
column() {
  awk -F, -v step="$step" -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i }
    NR > 1 && $1 == step { print $c }' "$1"
}
# Queries per event, as sysbench counts them (reads + writes + BEGIN/COMMIT).
case $test in
  oltp_read_only) qpe=16 ;; oltp_read_write) qpe=20 ;; oltp_write_only) qpe=6 ;; *) qpe=1 ;;
esac

# Appends "user_us/q sys_us/q waits/q" from a GNU time file ("%U %S %w") and a query count.
per_query() {
  local user sys waits
  read -r user sys waits < <(tail -1 "$1")
  awk -v u="$user" -v s="$sys" -v w="$waits" -v n="$2" \
    'BEGIN { printf "%.3f %.3f %.3f\n", u * 1e6 / n, s * 1e6 / n, w / n }'
}
timed() { /usr/bin/time -f '%U %S %w' -o "$1" "${@:2}"; }
median_of() { awk -v c="$2" '{ print $c }' "$1" | median; }

printf '%8s %11s %11s %6s %9s %9s %6s %9s %9s %8s %8s\n' clients fathom_q/s sysb_q/s ratio fa_usr/q sb_usr/q ratio fa_sys/q sb_sys/q fa_w/q sb_w/q
for c in ${clients//,/ }; do
  : >"$work/f.qps" && : >"$work/f.us" && : >"$work/s.qps" && : >"$work/s.us"
  for rep in $(seq "$REPEATS"); do
    f="$work/fathom-c$c-r$rep"
    timed "$f.cpu" "$fathom" run --engine "$engine" "${common[@]}" \
      --duration "${secs}s" --clients "$c" --results "$f" --format csv >"$f.csv" 2>"$f.log"
    awk -v o="$(column "$f.csv" ops/s)" -v q=$qpe 'BEGIN { print o * q }' >>"$work/f.qps"
    # The step's operations (events), from its summary file.
    ops=$(cat "$f"/*/steps/*.json | grep -o '"ops": *[0-9]*' | head -1 | grep -o '[0-9]*$')
    per_query "$f.cpu" "$((ops * qpe))" >>"$work/f.us"
    s="$work/sysbench-c$c-r$rep"
    timed "$s.cpu" sysbench "$test" "${driver[@]}" --tables="$TABLES" \
      --table-size="$TABLE_SIZE" --threads="$c" --time="$secs" run >"$s.log"
    awk '/queries:/ { gsub(/[()]/, "", $3); print $3 }' "$s.log" >>"$work/s.qps"
    per_query "$s.cpu" "$(awk '/queries:/ { print $2 }' "$s.log")" >>"$work/s.us"
  done
  fq=$(median <"$work/f.qps") sq=$(median <"$work/s.qps")
  fu=$(median_of "$work/f.us" 1) su=$(median_of "$work/s.us" 1)
  fs=$(median_of "$work/f.us" 2) ss=$(median_of "$work/s.us" 2)
  fw=$(median_of "$work/f.us" 3) sw=$(median_of "$work/s.us" 3)
  awk -v c="$c" -v fq="$fq" -v sq="$sq" -v fu="$fu" -v su="$su" -v fs="$fs" -v ss="$ss" -v fw="$fw" -v sw="$sw" \
    'BEGIN { printf "%8d %11.0f %11.0f %6.2f %9.2f %9.2f %6.2f %9.2f %9.2f %8.2f %8.2f\n", c, fq, sq, fq / sq, fu, su, fu / su, fs, ss, fw, sw }'
done
echo "$engine, $test, $TABLES x $TABLE_SIZE rows, ${secs}s runs, medians of $REPEATS alternating repeats"
echo "usr/q, sys/q: µs of CPU per query of each tool's whole process (GNU time); ratio: fathom / sysbench; w/q: its threads' blocking waits per query"
