#!/usr/bin/env bash
# Side by side, in one sitting: fathom running YCSB's core workloads (workloads/ycsb/) and YCSB
# 0.17.0 itself (its JDBC binding, built here from YCSB_SRC with Maven, Connector/J 5.1.49) on
# one MariaDB server with InnoDB over loopback TCP, on one usertable loaded once by fathom. For
# each workload the two tools alternate REPEATS times, fathom first in odd repeats; each figure
# is the median of its repeats.
#   YCSB_SRC=~/src/YCSB bench/compare-ycsb.sh              # a b c f, 100,000 records, 2 clients
#   YCSB_SRC=... RECORDS=100000 OPERATIONS=200000 CLIENTS=4 REPEATS=3 bench/compare-ycsb.sh "b c"
# YCSB_SRC is a checkout of github.com/brianfrankcooper/YCSB at tag 0.17.0. Workloads D and E
# insert: their inserts start at RECORDS in both tools, so the second tool's would collide with
# the first's; they are left out. Prints per workload: each tool's operations per kind (the
# mix), throughput, the server's CPU µs per operation (/proc, for both alike) and each tool's
# whole-process CPU µs per operation (GNU time).
set -euo pipefail
: "${YCSB_SRC:?set YCSB_SRC to a checkout of brianfrankcooper/YCSB at tag 0.17.0}"
workloads=${1:-a b c f}
RECORDS=${RECORDS:-100000}
OPERATIONS=${OPERATIONS:-200000}
CLIENTS=${CLIENTS:-2}
REPEATS=${REPEATS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
"$root/scripts/setup.sh" --servers --java --peers
build_fathom
work=$(mktemp -d /tmp/fathom-vs-ycsb.XXXXXX)
echo "compare-ycsb: $RECORDS records, $OPERATIONS operations, $CLIENTS clients, $REPEATS repeats; files in $work" >&2

# YCSB's JDBC binding and its classpath, built once.
(cd "$YCSB_SRC" && mvn -q -B -pl site.ycsb:jdbc-binding -am -DskipTests -Dcheckstyle.skip \
  package dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" -Dmdep.includeScope=runtime)
mvn -q dependency:get -Dartifact=mysql:mysql-connector-java:5.1.49 >/dev/null
cp="$YCSB_SRC/jdbc/target/jdbc-binding-0.17.0.jar:$(cat "$work/cp.txt")"
cp="$cp:$HOME/.m2/repository/mysql/mysql-connector-java/5.1.49/mysql-connector-java-5.1.49.jar"

tcp_mariadb ycsb ycsb
"$fathom" run --engine innodb --set "url=$url" --set "pid=$server" --workload ycsb/workloada \
  --param records="$RECORDS" --param steps=load --clients "$CLIENTS" --results "$work/load" >/dev/null

timed() { /usr/bin/time -f '%U %S' -o "$1" "${@:2}"; }

# A run phase of workload $2 by fathom (repeat $1): "ops throughput READ UPDATE SCAN RMW".
by_fathom() {
  local d="$work/fathom-$2-$1"
  timed "$d.cpu" "$fathom" run --engine innodb --set "url=$url" --set "pid=$server" \
    --workload "ycsb/workload$2" --param records="$RECORDS" --param operations="$OPERATIONS" \
    --param steps=run --clients "$CLIENTS" --no-calibrate --results "$d" >/dev/null 2>"$d.log"
  python3 - "$d" <<'EOF'
import glob, json, sys
s = json.load(open(glob.glob(sys.argv[1] + "/*/steps/*run.json")[0]))
k = lambda n: s["by_op"].get(n, {}).get("ops", 0)
print(s["ops"], s["ops_per_sec"], k("READ"), k("UPDATE"), k("SCAN"), k("READ-MODIFY-WRITE"))
EOF
}

# The same by YCSB's own client. YCSB records a read-modify-write's read and update under READ
# and UPDATE too: they are taken out of those, so each kind counts operations as fathom's do.
by_ycsb() {
  local d="$work/ycsb-$2-$1"
  timed "$d.cpu" java -cp "$cp" site.ycsb.Client -t -db site.ycsb.db.JdbcDBClient \
    -P "$YCSB_SRC/workloads/workload$2" -p db.driver=com.mysql.jdbc.Driver \
    -p "db.url=jdbc:mysql://127.0.0.1:${PORT:-3307}/ycsb?useSSL=false" -p db.user=ycsb \
    -p db.passwd=ycsb -p recordcount="$RECORDS" -p operationcount="$OPERATIONS" \
    -threads "$CLIENTS" >"$d.log" 2>"$d.err"
  awk -F', ' '/^\[OVERALL\], Throughput/ { t = $3 }
    /^\[READ\], Operations/ { r = $3 } /^\[UPDATE\], Operations/ { u = $3 }
    /^\[SCAN\], Operations/ { s = $3 } /^\[READ-MODIFY-WRITE\], Operations/ { m = $3 }
    END { printf "%d %s %d %d %d %d\n", r + u + s - m, t, r - m, u - m, s, m }' "$d.log"
}

# The statements each tool sends, by shape: the server's general log for a short run of workload
# A by each (quoted values become S, numbers N).
shapes() {
  local log="$work/general-$1.log"
  mariadb -S "$work/mysqld.sock" -uroot -e "SET GLOBAL general_log_file = '$log'; SET GLOBAL general_log = 1"
  "by_$1" shapes a >/dev/null
  mariadb -S "$work/mysqld.sock" -uroot -e "SET GLOBAL general_log = 0"
  sed -nE 's/^.*[0-9]+ (Query|Execute)\t//p' "$log" | sed -E "s/'([^'\\\\]|\\\\.)*'/S/g; s/[0-9]+/N/g" | sort | uniq -c | sort -rn | head -12
}
OPS_SAVED=$OPERATIONS
OPERATIONS=2000
echo "statements of 2,000 operations of workload A, by shape (count, statement): fathom, then YCSB"
shapes fathom; echo; shapes ycsb; echo
OPERATIONS=$OPS_SAVED

# Before each run, InnoDB writes out its dirty pages (up to 60 s), so the server's CPU of one
# run does not include the flushing of the run before it, whichever tool made it.
settle() {
  local q=(mariadb -S "$work/mysqld.sock" -uroot -N -e)
  "${q[@]}" "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0.001, innodb_max_dirty_pages_pct = 0"
  for _ in $(seq 120); do
    (($("${q[@]}" "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'" | awk '{ print $2 }') == 0)) && break
    sleep 0.5
  done
  "${q[@]}" "SET GLOBAL innodb_max_dirty_pages_pct_lwm = DEFAULT, innodb_max_dirty_pages_pct = DEFAULT"
}

printf '%-3s %-7s %9s %8s %8s %8s %8s %10s %10s\n' wl tool ops/s READ UPDATE SCAN RMW srv_us/op cli_us/op
for w in $workloads; do
  : >"$work/fig-$w"
  for rep in $(seq "$REPEATS"); do
    order="fathom ycsb"
    ((rep % 2)) || order="ycsb fathom"
    for tool in $order; do
      settle
      t0=$(server_ticks)
      read -r ops tput r u s m < <("by_$tool" "$rep" "$w")
      t1=$(server_ticks)
      c=$(awk '{ print ($1 + $2) * 1e6 }' "$work/$tool-$w-$rep.cpu" | tail -1)
      awk -v t="$tool" -v o="$ops" -v p="$tput" -v r="$r" -v u="$u" -v s="$s" -v m="$m" \
        -v srv=$((t1 - t0)) -v tick="$tick_us" -v c="$c" \
        'BEGIN { printf "%s %s %s %s %s %s %.2f %.2f\n", t, p, r, u, s, m, srv * tick / o, c / o }' \
        >>"$work/fig-$w"
    done
  done
  for tool in fathom ycsb; do
    row() { awk -v t="$tool" -v c="$1" '$1 == t { print $c }' "$work/fig-$w" | median; }
    printf '%-3s %-7s %9.0f %8.0f %8.0f %8.0f %8.0f %10.1f %10.1f\n' "$w" "$tool" "$(row 2)" \
      "$(row 3)" "$(row 4)" "$(row 5)" "$(row 6)" "$(row 7)" "$(row 8)"
  done
done
echo "InnoDB (MariaDB 10.11) over loopback TCP, $RECORDS records, $OPERATIONS operations per run, $CLIENTS clients; medians of $REPEATS alternating repeats"
echo "srv_us/op: the server's CPU per operation (/proc); cli_us/op: each tool's whole process (GNU time; the JVM's start included for YCSB)"
