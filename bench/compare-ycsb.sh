#!/usr/bin/env bash
# Side by side, in one sitting: fathom running YCSB's core workloads (workloads/ycsb/) and YCSB
# 0.17.0 itself (its JDBC binding, built here from YCSB_SRC with Maven) on one server over
# loopback TCP: MariaDB with InnoDB (ENGINE=innodb, Connector/J 5.1.49) or PostgreSQL
# (ENGINE=postgres, pgjdbc 42.7.4). First each tool loads RECORDS records into a database of
# its own, and the two databases' sizes are compared; then the run phases go on one usertable
# loaded by fathom. For each workload the two tools alternate REPEATS times, fathom first in
# odd repeats; each figure is the median of its repeats. The records a run inserts (D, E) are
# deleted after it, so every run starts from the same table and the next tool's inserts, which
# start at RECORDS too, do not collide.
#   YCSB_SRC=~/src/YCSB bench/compare-ycsb.sh                 # a b c e f on innodb
#   YCSB_SRC=... ENGINE=postgres RECORDS=100000 OPERATIONS=100000 CLIENTS=4 bench/compare-ycsb.sh "b c"
#   YCSB_SRC=... ENGINE=postgres NETWORK=same-az bench/compare-ycsb.sh a      # both over same-az
# YCSB_SRC is a checkout of github.com/brianfrankcooper/YCSB at tag 0.17.0. Prints: the
# statements each tool sends, by shape; each load's throughput and database size; per
# workload, each tool's operations per kind (the mix), throughput, the server's CPU µs per
# operation (/proc, its processes and their ended children alike for both) and each tool's
# whole-process CPU µs per operation (GNU time).
set -euo pipefail
: "${YCSB_SRC:?set YCSB_SRC to a checkout of brianfrankcooper/YCSB at tag 0.17.0}"
workloads=${1:-a b c e f}
ENGINE=${ENGINE:-innodb}
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
echo "compare-ycsb: $ENGINE, $RECORDS records, $OPERATIONS operations, $CLIENTS clients, $REPEATS repeats; files in $work" >&2

# YCSB's JDBC binding and its classpath, built once, with the server's JDBC driver.
(cd "$YCSB_SRC" && mvn -q -B -pl site.ycsb:jdbc-binding -am -DskipTests -Dcheckstyle.skip \
  package dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" -Dmdep.includeScope=runtime)
cp="$YCSB_SRC/jdbc/target/jdbc-binding-0.17.0.jar:$(cat "$work/cp.txt")"
m2=$HOME/.m2/repository
case $ENGINE in
  innodb)
    mvn -q dependency:get -Dartifact=mysql:mysql-connector-java:5.1.49 >/dev/null
    cp="$cp:$m2/mysql/mysql-connector-java/5.1.49/mysql-connector-java-5.1.49.jar"
    tcp_mariadb ycsb ycsb
    sql() { mariadb -S "$work/mysqld.sock" -uroot -N -D "${2:-ycsb}" -e "$1"; }
    client_port=${PORT:-3307}
    jdbc() { echo "-p db.driver=com.mysql.jdbc.Driver -p db.url=jdbc:mysql://127.0.0.1:$client_port/$1?useSSL=false -p db.user=ycsb -p db.passwd=ycsb"; }
    url_of() { echo "mysql://ycsb:ycsb@127.0.0.1:$client_port/$1"; }
    ;;
  postgres)
    mvn -q dependency:get -Dartifact=org.postgresql:postgresql:42.7.4 -Dtransitive=false >/dev/null
    cp="$cp:$m2/org/postgresql/postgresql/42.7.4/postgresql-42.7.4.jar"
    tcp_postgres ycsb
    sql() { psql -h "$pg_sock" -p "${PG_PORT:-5433}" -U postgres -d "${2:-ycsb}" -qAtc "$1"; }
    client_port=${PG_PORT:-5433}
    jdbc() { echo "-p db.driver=org.postgresql.Driver -p db.url=jdbc:postgresql://127.0.0.1:$client_port/$1 -p db.user=postgres -p db.passwd="; }
    url_of() { echo "host=127.0.0.1 port=$client_port user=postgres dbname=$1"; }
    ;;
  *) echo "compare-ycsb: ENGINE is innodb or postgres, not $ENGINE" >&2; exit 2 ;;
esac
# NETWORK=PROFILE (same-az, cross-az, a profile file: `fathom networks`): both tools' clients
# cross fathom's delay relay with that profile, started here in front of the server's TCP port;
# the script's own statements (sql) stay on the server's unix socket. The relay reads its
# standard input until this script ends, and then ends too.
path="loopback TCP"
if [[ -n ${NETWORK:-} ]]; then
  "$fathom" relay --to "127.0.0.1:$client_port" --profile "$NETWORK" >"$work/relay.out" \
    2>"$work/relay.err" < <(while kill -0 $$ 2>/dev/null; do sleep 1; done) &
  for _ in $(seq 100); do [[ -s $work/relay.out ]] && break; sleep 0.1; done
  client_port=$(sed -nE 's/^listen=127\.0\.0\.1:([0-9]+) .*/\1/p' "$work/relay.out")
  [[ -n $client_port ]] || { cat "$work/relay.err" >&2; exit 1; }
  path="fathom's relay ($NETWORK: $(cat "$work/relay.out"))"
fi
# fathom's run on database $1, as an array (GNU time runs it): $on.
on() { on=("$fathom" run --engine "$ENGINE" --set "url=$(url_of "$1")" --set "pid=$server"); }
timed() { /usr/bin/time -f '%U %S' -o "$1" "${@:2}"; }

# The database's size on disk, in MB: InnoDB's usertable.ibd; PostgreSQL's usertable with its
# index and TOAST, after a checkpoint.
db_mb() {
  case $ENGINE in
    innodb) sql "FLUSH TABLES usertable FOR EXPORT; UNLOCK TABLES" "$1" >/dev/null
      du -m --apparent-size "$work/data/$1/usertable.ibd" | cut -f1 ;;
    postgres) sql "CHECKPOINT" "$1"
      sql "SELECT pg_total_relation_size('usertable') / 1048576" "$1" ;;
  esac
}

# Each tool loads the records into a database of its own; YCSB's gets the table fathom's load
# makes (JdbcDBCreateTable's: YCSB_KEY VARCHAR(255) PRIMARY KEY, ten TEXT fields).
ddl="CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY$(for i in $(seq 0 9); do printf ', FIELD%d TEXT' "$i"; done))"
for db in load_fathom load_ycsb; do sql "CREATE DATABASE $db"; done
sql "$ddl" load_ycsb
on load_fathom
timed "$work/load-fathom.cpu" "${on[@]}" --workload ycsb/workloada --param records="$RECORDS" \
  --param steps=load --clients "$CLIENTS" --no-calibrate --results "$work/load-fathom" >/dev/null 2>"$work/load-fathom.log"
lf=$(python3 -c 'import glob, json, sys; print(json.load(open(glob.glob(sys.argv[1] + "/*/steps/*load.json")[0]))["ops_per_sec"])' "$work/load-fathom")
# shellcheck disable=SC2046
timed "$work/load-ycsb.cpu" java -cp "$cp" site.ycsb.Client -load -db site.ycsb.db.JdbcDBClient \
  -P "$YCSB_SRC/workloads/workloada" $(jdbc load_ycsb) -p recordcount="$RECORDS" \
  -threads "$CLIENTS" >"$work/load-ycsb.log" 2>"$work/load-ycsb.err"
ly=$(awk -F', ' '/^\[OVERALL\], Throughput/ { print $3 }' "$work/load-ycsb.log")
printf '%-7s %10s %8s\n' load records/s size_MB
printf '%-7s %10.0f %8s\n' fathom "$lf" "$(db_mb load_fathom)" ycsb "$ly" "$(db_mb load_ycsb)"
echo

on ycsb
"${on[@]}" --workload ycsb/workloada --param records="$RECORDS" --param steps=load \
  --clients "$CLIENTS" --no-calibrate --results "$work/load" >/dev/null 2>&1
sql "CREATE TABLE loaded_keys AS SELECT YCSB_KEY FROM usertable"
sql "CREATE UNIQUE INDEX loaded_key ON loaded_keys (YCSB_KEY)"
# The records a run inserted, deleted so the next run starts from the same table.
unload() {
  sql "DELETE FROM usertable WHERE NOT EXISTS (SELECT 1 FROM loaded_keys l WHERE l.YCSB_KEY = usertable.YCSB_KEY)"
}

# A run phase of workload $2 by fathom (repeat $1): "ops throughput READ UPDATE SCAN RMW INSERT".
by_fathom() {
  local d="$work/fathom-$2-$1"
  timed "$d.cpu" "${on[@]}" --workload "ycsb/workload$2" --param records="$RECORDS" \
    --param operations="$OPERATIONS" --param steps=run --clients "$CLIENTS" --no-calibrate \
    --results "$d" >/dev/null 2>"$d.log"
  fathom_counts "$d"
}

# The same by YCSB's own client.
by_ycsb() {
  local d="$work/ycsb-$2-$1"
  # shellcheck disable=SC2046
  timed "$d.cpu" java -cp "$cp" site.ycsb.Client -t -db site.ycsb.db.JdbcDBClient \
    -P "$YCSB_SRC/workloads/workload$2" $(jdbc ycsb) -p recordcount="$RECORDS" \
    -p operationcount="$OPERATIONS" -threads "$CLIENTS" >"$d.log" 2>"$d.err"
  ycsb_counts "$d.log"
}

# The statements each tool sends, by shape: the server's log of every statement for a short
# run of workload $2 by tool $1 (quoted values become S, numbers N).
shapes() {
  local log from
  case $ENGINE in
    innodb) log="$work/general-$1-$2.log"; from=0
      sql "SET GLOBAL general_log_file = '$log'; SET GLOBAL general_log = 1" ;;
    postgres) log="$work/pgdata/postgres.log"; from=$(wc -l <"$log")
      sql "ALTER SYSTEM SET log_statement = 'all'"; sql "SELECT pg_reload_conf()" >/dev/null ;;
  esac
  "by_$1" shapes "$2" >/dev/null
  case $ENGINE in
    innodb) sql "SET GLOBAL general_log = 0" ;;
    postgres) sql "ALTER SYSTEM RESET log_statement"; sql "SELECT pg_reload_conf()" >/dev/null ;;
  esac
  unload
  tail -n +"$((from + 1))" "$log" |
    sed -nE 's/^.*[0-9]+ (Query|Execute)\t//p; s/^.*LOG: +(statement|execute [^:]*): //p' |
    grep -v -e log_statement -e pg_reload_conf -e general_log |
    sed -E "s/'([^'\\\\]|\\\\.)*'/S/g; s/[0-9]+/N/g" | sort | uniq -c | sort -rn | head -12
}
OPS_SAVED=$OPERATIONS
OPERATIONS=2000
for w in a e; do
  echo "statements of 2,000 operations of workload ${w^^}, by shape (count, statement): fathom, then YCSB"
  shapes fathom $w; echo; shapes ycsb $w; echo
done
OPERATIONS=$OPS_SAVED

# Before each run the server writes out its dirty pages (InnoDB's flush, up to 60 s;
# PostgreSQL's checkpoint, after a VACUUM of usertable so autovacuum does not start on the dead
# rows of earlier runs during this one), so the server's CPU of one run does not include the
# work left by the run before it, whichever tool made it.
settle() {
  if [[ $ENGINE == postgres ]]; then sql "VACUUM usertable"; sql "CHECKPOINT"; return; fi
  sql "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0.001, innodb_max_dirty_pages_pct = 0"
  for _ in $(seq 120); do
    (($(sql "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'" | awk '{ print $2 }') == 0)) && break
    sleep 0.5
  done
  sql "SET GLOBAL innodb_max_dirty_pages_pct_lwm = DEFAULT, innodb_max_dirty_pages_pct = DEFAULT"
}

# One run, preceded by the settle and followed by the inserts' removal; its cost the server's CPU.
one_run() {
  local t0 t1 counts
  settle
  t0=$(server_ticks)
  counts=$("by_$1" "$2" "$3")
  t1=$(server_ticks)
  unload
  echo "$counts $(((t1 - t0) * tick_us))"
}
alternate_ycsb "$workloads" srv_us/op
echo "$ENGINE over $path, $RECORDS records, $OPERATIONS operations per run, $CLIENTS clients; medians of $REPEATS alternating repeats"
echo "srv_us/op: the server's CPU per operation (/proc); cli_us/op: each tool's whole process (GNU time; the JVM's start included for YCSB)"
