#!/usr/bin/env bash
# Side by side on RocksDB, in one sitting: fathom running YCSB's core workloads
# (workloads/ycsb/) on the RocksDB release YCSB 0.17.0's RocksDB binding uses (rocksdbjni 5.11.3,
# fetched by scripts/fetch-engine.sh and run through its C API), and YCSB 0.17.0 itself (its
# RocksDB binding, built here from YCSB_SRC with Maven) on the same library in its jar. fathom
# gets the binding's options: `optimizeLevelStyleCompaction()` (a 512 MB memtable budget),
# four background compactions, RocksDB's 8 MB LRU block cache, no statistics. First each tool
# loads RECORDS records into a database of its own and the two sizes are compared; then each
# workload's run phase goes on each tool's own database, the two alternating REPEATS times
# (fathom first in odd repeats); each figure is the median of its repeats.
#   YCSB_SRC=~/src/YCSB bench/compare-ycsb-rocksdb.sh                  # a b c e f
#   YCSB_SRC=... RECORDS=100000 OPERATIONS=200000 CLIENTS=2 REPEATS=3 bench/compare-ycsb-rocksdb.sh "a c"
# Prints: each load's throughput and database size; per workload, each tool's operations per
# kind, throughput, the engine's CPU µs per operation (perf's share of the samples with a frame
# of the RocksDB library in their stack, of the tool's whole process CPU: libc and the kernel
# working for RocksDB count as RocksDB; the same measure for both), each tool's whole process
# CPU µs per operation (GNU time; the JVM's start included for YCSB), and the difference: the
# tool's own CPU outside the engine.
set -euo pipefail
: "${YCSB_SRC:?set YCSB_SRC to a checkout of brianfrankcooper/YCSB at tag 0.17.0}"
workloads=${1:-a b c e f}
VERSION=${VERSION:-5.11.3}
RECORDS=${RECORDS:-100000}
OPERATIONS=${OPERATIONS:-200000}
CLIENTS=${CLIENTS:-2}
REPEATS=${REPEATS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
"$root/scripts/setup.sh" --java --profile
build_fathom
"$root/scripts/fetch-engine.sh" rocksdb "$VERSION" >/dev/null
work=$(mktemp -d /tmp/fathom-vs-ycsb-rocksdb.XXXXXX)
echo "compare-ycsb-rocksdb: RocksDB $VERSION, $RECORDS records, $OPERATIONS operations, $CLIENTS clients, $REPEATS repeats; files in $work" >&2

(cd "$YCSB_SRC" && mvn -q -B -pl site.ycsb:rocksdb-binding -am -DskipTests -Dcheckstyle.skip \
  -Drocksdb.version="$VERSION" package dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" \
  -Dmdep.includeScope=runtime)
cp="$YCSB_SRC/rocksdb/target/rocksdb-binding-0.17.0.jar:$(cat "$work/cp.txt")"

# RocksDB's OptimizeLevelStyleCompaction(512 MB) and the binding's parallelism, as options.
opts="write_buffer_size=134217728;min_write_buffer_number_to_merge=2;max_write_buffer_number=6"
opts+=";level0_file_num_compaction_trigger=2;target_file_size_base=67108864"
opts+=";max_bytes_for_level_base=536870912;max_background_compactions=4;max_background_flushes=1"
opts+=";compression_per_level=kNoCompression:kNoCompression:kSnappyCompression:kSnappyCompression:kSnappyCompression:kSnappyCompression:kSnappyCompression"
fa=("$fathom" run --engine rocksdb --set "version=$VERSION" --set cache_type=lru --set cache_size=8m
  --set statistics=false --setup "$opts" --clients "$CLIENTS" --no-calibrate --data-dir "$work/fathom-db")
ycsb=(java -cp "$cp" site.ycsb.Client -db site.ycsb.db.rocksdb.RocksDBClient -p "rocksdb.dir=$work/ycsb-db"
  -p recordcount="$RECORDS" -threads "$CLIENTS")
timed() { /usr/bin/time -f '%U %S' -o "$1" "${@:2}"; }

timed "$work/load-fathom.cpu" "${fa[@]}" --workload ycsb/workloada --param records="$RECORDS" \
  --param steps=load --keep-data --results "$work/load-fathom" >/dev/null 2>"$work/load-fathom.log"
lf=$(python3 -c 'import glob, json, sys; print(json.load(open(glob.glob(sys.argv[1] + "/*/steps/*load.json")[0]))["ops_per_sec"])' "$work/load-fathom")
timed "$work/load-ycsb.cpu" "${ycsb[@]}" -load -P "$YCSB_SRC/workloads/workloada" >"$work/load-ycsb.log" 2>"$work/load-ycsb.err"
ly=$(awk -F', ' '/^\[OVERALL\], Throughput/ { print $3 }' "$work/load-ycsb.log")
printf '%-7s %10s %8s\n' load records/s size_MB
printf '%-7s %10.0f %8s\n' fathom "$lf" "$(du -sm --apparent-size "$work/fathom-db" | cut -f1)" \
  ycsb "$ly" "$(du -sm --apparent-size "$work/ycsb-db" | cut -f1)"
echo

# The share of perf's samples with a frame of the RocksDB library (librocksdb.so for fathom,
# the librocksdbjni*.so rocksdbjni extracts for YCSB) anywhere in their stack, in percent:
# perf's "children" figure of that library. The stacks are unwound from DWARF (neither RocksDB
# nor libc keeps frame pointers), so a libc memcpy or a kernel pread made for RocksDB counts as
# RocksDB's; the unwinding stops at the JVM's compiled code, which lies outside the library.
engine_share() {
  perf report -i "$1" --children --sort dso -g none --stdio 2>/dev/null |
    awk '/^ +[0-9.]+% +[0-9.]+%/ && /rocksdb/ && !s { s = $1 } END { sub("%", "", s); print s + 0 }'
}
record=(perf record -q -F 199 --call-graph dwarf,16384)

# A run phase of workload $2 (repeat $1): "ops throughput READ UPDATE SCAN RMW INSERT".
by_fathom() {
  local d="$work/fathom-$2-$1"
  "${record[@]}" -o "$d.perf" -- /usr/bin/time -f '%U %S' -o "$d.cpu" "${fa[@]}" \
    --existing-data --workload "ycsb/workload$2" --param records="$RECORDS" \
    --param operations="$OPERATIONS" --param steps=run --results "$d" >/dev/null 2>"$d.log"
  fathom_counts "$d"
}

# The same by YCSB (a read-modify-write's read and update are taken out of READ and UPDATE).
by_ycsb() {
  local d="$work/ycsb-$2-$1"
  "${record[@]}" -o "$d.perf" -- /usr/bin/time -f '%U %S' -o "$d.cpu" "${ycsb[@]}" -t \
    -P "$YCSB_SRC/workloads/workload$2" -p operationcount="$OPERATIONS" >"$d.log" 2>"$d.err"
  ycsb_counts "$d.log"
}

# One run after a sync; its cost the CPU in the RocksDB library (perf's share of the process's).
one_run() {
  local counts c share
  sync
  counts=$("by_$1" "$2" "$3")
  c=$(awk '{ print ($1 + $2) * 1e6 }' "$work/$1-$3-$2.cpu" | tail -1)
  share=$(engine_share "$work/$1-$3-$2.perf")
  echo "$counts $(awk -v sh="$share" -v c="$c" 'BEGIN { print sh / 100 * c }')"
}
alternate_ycsb "$workloads" eng_us/op out_us/op
echo "RocksDB $VERSION embedded, $RECORDS records, $OPERATIONS operations per run, $CLIENTS clients; medians of $REPEATS alternating repeats"
echo "eng_us/op: CPU under the RocksDB library per operation (perf's share of the process's samples with a RocksDB frame x its CPU); cli_us/op: the tool's whole process (GNU time); out_us/op: the difference, the tool's CPU outside the engine"
