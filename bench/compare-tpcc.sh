#!/usr/bin/env bash
# Side by side, in one sitting: fathom's tpcc workload and sysbench-tpcc (Percona-Lab's Lua
# scripts, run by the sysbench 1.0.20 scripts/setup.sh installs) on one server started by
# `fathom serve`.
#   TPCC_SRC=/path/to/sysbench-tpcc bench/compare-tpcc.sh                  # innodb, 1,2,4,8 clients, 30 s
#   TPCC_SRC=... WAREHOUSES=2 REPEATS=3 bench/compare-tpcc.sh postgres 1,2 20
#   TPCC_SRC=... WAREHOUSES=10 LOAD_ONLY=1 bench/compare-tpcc.sh myrocks     # the loads only
# 1. The loads: each tool prepares WAREHOUSES warehouses into a database of its own (sysbench-tpcc
#    with as many threads as warehouses, up to 8; fathom with as many clients); wall seconds of
#    each (sysbench-tpcc's includes its fixed 30 s sleep, printed apart) and the tables' size.
# 2. The statements of a 5 s run of each tool, by shape (numbers and strings taken out), from
#    MariaDB's general log or PostgreSQL's log_statement, with the transactions each committed.
# 3. At each client count the two tools alternate on fathom's tables (fathom first in odd
#    repeats): transactions per second, tpmC (New-Orders committed per minute, for both from
#    the growth of the districts' d_next_o_id), the server's CPU per transaction (its
#    processes' from /proc) and each tool's whole process CPU per transaction (GNU time);
#    medians of the repeats.
set -euo pipefail
engine=${1:-innodb}
clients=${2:-1,2,4,8}
secs=${3:-30}
WAREHOUSES=${WAREHOUSES:-1}
REPEATS=${REPEATS:-3}
: "${TPCC_SRC:?TPCC_SRC: a checkout of https://github.com/Percona-Lab/sysbench-tpcc}"
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
"$root/scripts/setup.sh" --servers --peers
build_fathom
work=$(mktemp -d /tmp/fathom-vs-tpcc.XXXXXX)
chmod 755 "$work"
echo "compare-tpcc: $engine, $WAREHOUSES warehouses, ${secs}s x $REPEATS repeats; files in $work" >&2
serve_engine "$engine"
server=${pid%%,*}

case $engine in
  innodb | myrocks)
    socket=${url#*socket=}
    sql() { mysql --socket="$socket" -u root -N -e "$2" "$1"; }
    # MyRocks refuses foreign keys: sysbench-tpcc's MyRocks runs pass --use_fk=0 (fathom makes
    # none there on its own).
    driver() { echo --db-driver=mysql "--mysql-socket=$socket" --mysql-user=root "--mysql-db=$1" \
      "--mysql_storage_engine=$([[ $engine == myrocks ]] && echo rocksdb || echo innodb)" \
      "--use_fk=$([[ $engine == myrocks ]] && echo 0 || echo 1)"; }
    ;;
  postgres)
    host=$(sed -E 's/.*host=([^ ]+).*/\1/' <<<"$url")
    sql() { psql -h "$host" -U postgres -At -d "$1" -c "$2"; }
    driver() { echo --db-driver=pgsql "--pgsql-host=$host" --pgsql-user=postgres "--pgsql-db=$1"; }
    ;;
  *) echo "compare-tpcc: ENGINE is innodb, myrocks or postgres" >&2; exit 2 ;;
esac
sql sbtest "CREATE DATABASE sbtpcc" >/dev/null

# sysbench-tpcc COMMAND on database $1 with $2 threads (run: for $3 seconds), under the
# command in the array `under` (GNU time), if any.
under=()
tpcc() {
  # shellcheck disable=SC2046
  (cd "$TPCC_SRC" && "${under[@]}" sysbench ./tpcc.lua $(driver "$1") --threads="$2" \
    --time="${3:-0}" --scale="$WAREHOUSES" --tables=1 --report-interval=0 "$4")
}
fathom_tpcc() {
  "${under[@]}" "$fathom" run --engine "$engine" --set "url=$url" --set "pid=$pid" \
    --workload tpcc --param "warehouses=$WAREHOUSES" --no-calibrate "$@"
}
# Bytes of the tpcc tables in database $1.
size() {
  case $engine in
    postgres) sql "$1" "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'" ;;
    *) # The statistics the sizes come from, brought up to date after the load.
      sql "$1" "ANALYZE TABLE warehouse1, district1, customer1, history1, orders1, new_orders1, order_line1, stock1, item1" >/dev/null
      sql "$1" "SELECT sum(data_length + index_length) FROM information_schema.tables WHERE table_schema = '$1'" ;;
  esac
}
# New-Orders committed so far in database $1.
new_orders() { sql "$1" "SELECT sum(d_next_o_id) FROM district1"; }

loaders=$((WAREHOUSES < 8 ? WAREHOUSES : 8))
start=$(date +%s.%N)
fathom_tpcc --param steps=prepare --clients "$loaders" --results "$work/prepare" >"$work/prepare.log" 2>&1
f_load=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
start=$(date +%s.%N)
tpcc sbtpcc "$loaders" 0 prepare >"$work/sysbench-prepare.log" 2>&1
s_load=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
echo "load of $WAREHOUSES warehouses, $loaders threads: fathom ${f_load}s, $(size sbtest) bytes;" \
  "sysbench-tpcc ${s_load}s (30 s of it its sleep), $(size sbtpcc) bytes"
[[ -n ${LOAD_ONLY:-} ]] && exit 0

# The statements of a 5 s run of tool $1 on one client, by shape.
shapes() {
  local log from=0 before
  case $engine in
    postgres)
      log=$(find "$work/data" -name postgres.log | head -1)
      from=$(wc -l <"$log")
      sql sbtest "ALTER SYSTEM SET log_statement = 'all'" >/dev/null
      sql sbtest "SELECT pg_reload_conf()" >/dev/null
      ;;
    *) log="$work/general-$1.log"
      sql sbtest "SET GLOBAL general_log_file = '$log'; SET GLOBAL general_log = 1" ;;
  esac
  before=$(new_orders sbtest)
  case $1 in
    fathom) fathom_tpcc --param steps=run --duration 5s --clients 1 --results "$work/shape" >/dev/null 2>&1 ;;
    sysbench-tpcc) tpcc sbtest 1 5 run >/dev/null 2>&1 ;;
  esac
  case $engine in
    postgres) sql sbtest "ALTER SYSTEM RESET log_statement" >/dev/null
      sql sbtest "SELECT pg_reload_conf()" >/dev/null ;;
    *) sql sbtest "SET GLOBAL general_log = 0" ;;
  esac
  echo "$1: $(($(new_orders sbtest) - before)) New-Orders committed; statements by shape:"
  tail -n +"$((from + 1))" "$log" |
    sed -nE 's/^.*[0-9]+ (Query|Execute)\t//p; s/^.*LOG: +(statement|execute [^:]*): //p' |
    grep -v -e log_statement -e pg_reload_conf -e general_log |
    sed -E "s/'([^'\\\\]|\\\\.)*'/S/g; s/-?[0-9]+(\.[0-9]+)?/N/g; s/[[:space:]]+/ /g" |
    sort | uniq -c | sort -rn | head -40
}
shapes fathom
shapes sysbench-tpcc

# One run of tool $1 at $2 clients: "tps tpmC server_us/t client_us/t".
one() {
  local tool=$1 c=$2 f="$work/$1-c$2-r$3" n0 t0 n1 t1 txns
  n0=$(new_orders sbtest) t0=$(server_ticks)
  under=(/usr/bin/time -f '%U %S' -o "$f.cpu")
  case $tool in
    fathom) fathom_tpcc --param steps=run --duration "${secs}s" --clients "$c" \
        --results "$f" >"$f.log" 2>&1
      txns=$(cat "$f"/*/steps/*run.json | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(sum(v["ops"] for k, v in s["by_op"].items()))') ;;
    sysbench-tpcc) tpcc sbtest "$c" "$secs" run >"$f.log" 2>&1
      txns=$(awk '/transactions:/ { print $2 }' "$f.log") ;;
  esac
  under=()
  n1=$(new_orders sbtest) t1=$(server_ticks)
  read -r user sys <"$f.cpu"
  awk -v t="$txns" -v s="$secs" -v no=$((n1 - n0)) -v st=$(((t1 - t0) * tick_us)) -v u="$user" -v y="$sys" \
    'BEGIN { printf "%.1f %.0f %.1f %.1f\n", t / s, no * 60 / s, st / t, (u + y) * 1e6 / t }'
}

printf '%8s %9s %9s %6s %9s %9s %6s %10s %10s %10s %10s\n' clients fa_tps sb_tps ratio fa_tpmC sb_tpmC ratio fa_srv/t sb_srv/t fa_cli/t sb_cli/t
for c in ${clients//,/ }; do
  : >"$work/f" && : >"$work/s"
  for rep in $(seq "$REPEATS"); do
    if ((rep % 2)); then
      one fathom "$c" "$rep" >>"$work/f"; one sysbench-tpcc "$c" "$rep" >>"$work/s"
    else
      one sysbench-tpcc "$c" "$rep" >>"$work/s"; one fathom "$c" "$rep" >>"$work/f"
    fi
  done
  m() { awk -v c="$2" '{ print $c }' "$1" | median; }
  awk -v c="$c" -v ft="$(m "$work/f" 1)" -v st="$(m "$work/s" 1)" -v fn="$(m "$work/f" 2)" \
    -v sn="$(m "$work/s" 2)" -v fs="$(m "$work/f" 3)" -v ss="$(m "$work/s" 3)" \
    -v fc="$(m "$work/f" 4)" -v sc="$(m "$work/s" 4)" \
    'BEGIN { printf "%8d %9.1f %9.1f %6.2f %9.0f %9.0f %6.2f %10.1f %10.1f %10.1f %10.1f\n",
      c, ft, st, ft / st, fn, sn, fn / sn, fs, ss, fc, sc }'
done
echo "$engine, $WAREHOUSES warehouses, ${secs}s runs on fathom's tables, medians of $REPEATS alternating repeats"
echo "tps: transactions per second (fathom: every kind, rollbacks included; sysbench-tpcc: its 'transactions');"
echo "tpmC: New-Orders committed per minute, from d_next_o_id; srv/t, cli/t: µs of CPU per transaction of the server and of each tool's whole process"
