#!/usr/bin/env bash
# Side by side, in one sitting: fathom's LinkBench request phase and LinkBench's Java client
# (Facebook's `LinkStoreMysql`) on one MariaDB server with InnoDB, over TCP, on one graph
# loaded once by fathom. The two tools alternate REPEATS times; each figure is the median of
# its repeats. The server's CPU per request is read from /proc for both tools alike (its
# utime+stime over the run, divided by the requests the tool counted).
# PHASE=load compares the load phase instead: before each tool's load the tables are made
# afresh and empty (fathom's DDL, LinkBench's README schema), each tool loads the whole graph
# with CLIENTS link loaders and its node loader, and the figures are links a second (the links
# in the table after the load, over the seconds the tool reports) and the server's CPU per link.
#   LINKBENCH_SRC=~/src/linkbench bench/compare-linkbench.sh         # 2 clients, 30 s, 5 repeats
#   LINKBENCH_SRC=... PHASE=load bench/compare-linkbench.sh          # the load, 5 repeats
#   LINKBENCH_SRC=... MAXID1=200001 CLIENTS=2 SECS=30 REPEATS=5 bench/compare-linkbench.sh
#   LINKBENCH_SRC=... FATHOM_OLD=/path/to/older/fathom bench/compare-linkbench.sh  # a third column
#   LINKBENCH_SRC=... PERF=1 bench/compare-linkbench.sh  # the server's profile under each tool, kept
#     as $work/perf-TOOL-REPEAT.data (`perf report -i` it; `perf diff` two of them)
# LINKBENCH_SRC is a checkout of github.com/facebookarchive/linkbench; its Java is compiled here
# with javac (the HBase, MapReduce and RocksDB stores left out) against commons-cli 1.2,
# commons-math3 3.0, log4j 1.2.17 and mysql-connector-java 5.1.49 from Maven Central (the
# pom's 5.1.22 cannot read MariaDB 10.11's collations).
set -euo pipefail
: "${LINKBENCH_SRC:?set LINKBENCH_SRC to a checkout of facebookarchive/linkbench}"
MAXID1=${MAXID1:-200001}
CLIENTS=${CLIENTS:-2}
SECS=${SECS:-30}
REPEATS=${REPEATS:-5}
PHASE=${PHASE:-request}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
"$root/scripts/setup.sh" --servers --java
build_fathom
work=$(mktemp -d /tmp/fathom-vs-linkbench.XXXXXX)
echo "compare-linkbench: $PHASE, maxid1 $MAXID1, $CLIENTS clients, ${SECS}s x $REPEATS repeats; files in $work" >&2

# LinkBench's Java, compiled once.
cp=""
for a in commons-cli:commons-cli:1.2 org.apache.commons:commons-math3:3.0 log4j:log4j:1.2.17 \
  mysql:mysql-connector-java:5.1.49; do
  mvn -q dependency:get -Dartifact="$a" >/dev/null
  IFS=: read -r g n v <<<"$a"
  cp="$cp:$HOME/.m2/repository/${g//.//}/$n/$v/$n-$v.jar"
done
mkdir -p "$work/java/classes"
cp -r "$LINKBENCH_SRC/config" "$work/java/"
find "$LINKBENCH_SRC/src/main/java" -name '*.java' |
  grep -v -e LinkBenchDriverMR -e LinkStoreHBase -e LinkStoreRocksDb >"$work/java/sources"
javac -nowarn -d "$work/java/classes" -cp "$cp" @"$work/java/sources" 2>/dev/null

tcp_mariadb lb linkdb
[[ $PHASE == load ]] ||
  "$fathom" run --engine innodb --set "url=$url" --set "pid=$server" --workload linkbench \
    --clients "$CLIENTS" --param maxid1="$MAXID1" --param steps=load --results "$work/load" >/dev/null


# The links in the table now.
links_now() { mariadb -S "$work/mysqld.sock" -uroot -N -e "SELECT COUNT(*) FROM linkdb.linktable"; }

# One load by fathom binary $2 (repeat $1), its tables made afresh by its load step: "links
# seconds fathom-cpu-us-per-link".
load_by_fathom() {
  local out dir links
  out=$("$2" run --engine innodb --set "url=$url" --set "pid=$server" --workload linkbench \
    --clients "$CLIENTS" --param maxid1="$MAXID1" --param steps=load --no-calibrate \
    --results "$work/$3-$1" 2>&1)
  dir=$(sed -n 's/^results: //p' <<<"$out")
  links=$(links_now)
  python3 -c "import json,glob; s=json.load(open(glob.glob('$dir/steps/*load.json')[0])); \
print($links, s['seconds'], s['per_op']['cpu_us_harness'] * s['ops'] / $links)"
}

# Before either tool's load (outside its measured window): the tables made afresh by fathom's
# DDL and emptied, the old ones' files gone.
fresh_tables() {
  "$fathom" run --engine innodb --set "url=$url" --set "pid=$server" --workload linkbench \
    --clients 1 --param maxid1=3 --param steps=load --no-calibrate --results "$work/ddl" >"$work/ddl.log" 2>&1 ||
    { cat "$work/ddl.log" >&2; exit 1; }
  mariadb -S "$work/mysqld.sock" -uroot -e \
    "TRUNCATE linkdb.linktable; TRUNCATE linkdb.counttable; TRUNCATE linkdb.nodetable"
  sync
}

# One load by LinkBench's Java (repeat $1) into empty tables: "links seconds -".
load_by_java() {
  (cd "$work/java" && LINKBENCH_HOME="$work/java" java -cp "classes$cp" \
    com.facebook.LinkBench.LinkBenchDriver -c config/LinkConfigMysql.properties -l \
    -D host=127.0.0.1 -D port="${PORT:-3307}" -D user=lb -D password=lb -D dbid=linkdb \
    -D maxid1="$MAXID1" -D loaders="$CLIENTS" -D load_progress_interval=100000000 \
    >"$work/java-load-$1.log" 2>&1)
  local secs
  secs=$(sed -n 's/.*LOAD PHASE COMPLETED.*Took \([0-9.]*\) seconds.*/\1/p' "$work/java-load-$1.log")
  echo "$(links_now) $secs -"
}

# One request phase by fathom binary $2 (repeat $1): "requests seconds fathom-cpu-us".
by_fathom() {
  local out dir
  out=$("$2" run --engine innodb --set "url=$url" --set "pid=$server" --workload linkbench \
    --clients "$CLIENTS" --param maxid1="$MAXID1" --param steps=request \
    --param duration="${SECS}s" --results "$work/$3-$1" 2>&1)
  dir=$(sed -n 's/^results: //p' <<<"$out")
  python3 -c "import json,glob; s=json.load(open(glob.glob('$dir/steps/*request.json')[0])); \
print(s['ops'], s['seconds'], s['per_op']['cpu_us_harness'])"
}

# One request phase by LinkBench's Java (repeat $1): "requests seconds -".
by_java() {
  (cd "$work/java" && LINKBENCH_HOME="$work/java" java -cp "classes$cp" \
    com.facebook.LinkBench.LinkBenchDriver -c config/LinkConfigMysql.properties -r \
    -D host=127.0.0.1 -D port="${PORT:-3307}" -D user=lb -D password=lb -D dbid=linkdb \
    -D maxid1="$MAXID1" -D requesters="$CLIENTS" -D requests=1000000000 -D maxtime="$SECS" \
    -D progressfreq=100000 -D displayfreq=100000 >"$work/java-$1.log" 2>&1)
  sed -n 's/.*REQUEST PHASE COMPLETED. \([0-9]*\) requests done in \([0-9]*\) seconds.*/\1 \2 -/p' \
    "$work/java-$1.log"
}

tools="fathom java${FATHOM_OLD:+ old}"
for rep in $(seq "$REPEATS"); do
  # The tools alternate which goes first.
  order=$tools
  ((rep % 2)) || order=$(tr ' ' '\n' <<<"$tools" | tac | tr '\n' ' ')
  for tool in $order; do
    if [[ $PHASE == load ]]; then fresh_tables; else sync; fi
    t0=$(server_ticks)
    if [[ -n ${PERF:-} ]]; then
      perf record -q -g -p "$server" -o "$work/perf-$tool-$rep.data" 2>/dev/null &
      perf_pid=$!
    fi
    case $PHASE-$tool in
      request-fathom) read -r reqs secs own < <(by_fathom "$rep" "$fathom" fathom) ;;
      request-old) read -r reqs secs own < <(by_fathom "$rep" "$FATHOM_OLD" old) ;;
      request-java) read -r reqs secs own < <(by_java "$rep") ;;
      load-fathom) read -r reqs secs own < <(load_by_fathom "$rep" "$fathom" fathom) ;;
      load-old) read -r reqs secs own < <(load_by_fathom "$rep" "$FATHOM_OLD" old) ;;
      load-java) read -r reqs secs own < <(load_by_java "$rep") ;;
    esac
    t1=$(server_ticks)
    if [[ -n ${PERF:-} ]]; then kill -INT "$perf_pid" && wait "$perf_pid" || true; fi
    awk -v r="$reqs" -v s="$secs" -v t=$((t1 - t0)) -v u="$tick_us" -v o="$own" -v n="$tool" \
      '{} END { printf "%s %.1f %.1f %s\n", n, r / s, t * u / r, o }' </dev/null >>"$work/figures"
    echo "repeat $rep $tool: $(tail -1 "$work/figures")" >&2
  done
done

unit=req; [[ $PHASE == load ]] && unit=link
printf '%-8s %12s %8s %16s %8s %14s\n' tool "${unit}s/s" spread "server µs/$unit" spread "own µs/$unit"
for tool in $tools; do
  col() { awk -v n="$tool" -v c="$1" '$1 == n { print $c }' "$work/figures"; }
  printf '%-8s %12s %8s %16s %8s %14s\n' "$tool" "$(col 2 | median)" "$(col 2 | spread)" \
    "$(col 3 | median)" "$(col 3 | spread)" "$(col 4 | median | awk '{ printf($1 == "-" ? "-" : "%.1f", $1) }')"
done
# Paired: each repeat's fathom over Java, rate and server CPU per unit, as the repeats ran.
echo "fathom / java by repeat (rate, server µs/$unit):"
awk '$1 == "fathom" { f[++i] = $2; fc[i] = $3 } $1 == "java" { j[++k] = $2; jc[k] = $3 }
  END { for (r = 1; r <= i && r <= k; r++) printf "  %d: %.2f %.2f\n", r, f[r] / j[r], fc[r] / jc[r] }' "$work/figures"
