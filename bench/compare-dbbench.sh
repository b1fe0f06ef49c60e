#!/usr/bin/env bash
# Side by side, in one sitting: every step of benchmark_compare.sh's sequence with db_bench and
# with fathom's dbbench workload, at the same key count, key and value size, threads, durations
# and RocksDB options. db_bench is built from the RocksDB source fathom's engine compiles
# (bench/build-dbbench.sh), each step its own db_bench process as benchmark.sh runs them, and
# each step its own fathom process too (--existing-data), both starting each step on copies of
# one database (see below). The tools alternate step by step; every figure is the median of
# REPEATS sequences. Printed
# per step: both tools' ops/s and their ratio, and both tools' device reads and KB written per
# op, taken alike for both: /proc/diskstats of the work directory's device around each process,
# so a step pays for its database's close (the memtable fillseq leaves unflushed) as db_bench's
# processes do.
#   bench/compare-dbbench.sh                 # 1M keys, 2 threads, 15 s steps, 3 repeats
#   NUM_KEYS=2000000 THREADS=4 DURATION=30 REPEATS=5 bench/compare-dbbench.sh
#   DB_BENCH=/usr/bin/db_bench bench/compare-dbbench.sh   # another peer (Debian's 7.8.3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
NUM_KEYS=${NUM_KEYS:-1000000}
THREADS=${THREADS:-2}
DURATION=${DURATION:-15}
REPEATS=${REPEATS:-3}
# RocksDB statistics for both tools: off as benchmark.sh runs db_bench (they cost 10-35% of a
# cached point read here); STATISTICS=1 turns them on in both (fathom's default, which its
# write amplification, stall and cache figures need).
STATISTICS=${STATISTICS:-0}
WORK=${WORK:-/var/tmp/fathom-compare}
DB_BENCH=${DB_BENCH:-$("$root/bench/build-dbbench.sh")}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli --features bundled-rocksdb,mongodb-driver
fathom="$CARGO_TARGET_DIR/release/fathom"
rm -rf "$WORK" && mkdir -p "$WORK"
dev=$(basename "$(df --output=source "$WORK" | tail -1)")

# benchmark_compare.sh's leveled options (setups/rocksdb-benchmark_sh.options), as db_bench flags.
common=(--num="$NUM_KEYS" --key_size=20 --value_size=400 --compression_type=lz4 --compression_ratio=0.5
  --write_buffer_size=33554432 --target_file_size_base=33554432 --max_bytes_for_level_base=134217728
  --max_bytes_for_level_multiplier=8 --max_background_jobs=8 --max_write_buffer_number=8
  --level0_file_num_compaction_trigger=4 --level0_slowdown_writes_trigger=20 --level0_stop_writes_trigger=30
  --num_levels=8 --level_compaction_dynamic_level_bytes=true --bytes_per_sync=1048576 --open_files=-1
  --block_size=8192 --bloom_bits=10 --pin_l0_filter_and_index_blocks_in_cache=1 --cache_size=268435456
  --compression_max_dict_bytes=0 --memtablerep=skip_list --statistics="$STATISTICS" --histogram=1 --sync=0
  --seek_nexts=10)
rate=(--benchmark_write_rate_limit=2097152)
overwrites=$(((NUM_KEYS / THREADS + 5) / 10))

# The sequence: fathom's step name, then db_bench's flags for it (benchmark.sh's jobs).
steps=(fillseq revrange readrandom fwdrange multireadrandom overwritesome flush revrangewhilewriting
  fwdrangewhilewriting readwhilewriting overwriteandwait)
flags() {
  local timed=(--threads="$THREADS" --duration="$DURATION" --use_existing_db=1)
  case "$1" in
    fillseq) echo --benchmarks=fillseq --use_existing_db=0 --threads=1 --disable_wal=1 --memtablerep=vector --allow_concurrent_memtable_write=false ;;
    revrange) echo --benchmarks=seekrandom --reverse_iterator=true --num=100 --threads=1 --duration="$DURATION" --use_existing_db=1 ;;
    readrandom) echo --benchmarks=readrandom "${timed[@]}" ;;
    fwdrange) echo --benchmarks=seekrandom "${timed[@]}" ;;
    multireadrandom) echo --benchmarks=multireadrandom --batch_size=10 --multiread_batched=true "${timed[@]}" ;;
    overwritesome) echo --benchmarks=overwrite --writes="$overwrites" --threads="$THREADS" --use_existing_db=1 ;;
    flush) echo --benchmarks=flush,waitforcompaction,compact0,waitforcompaction --threads=1 --use_existing_db=1 ;;
    revrangewhilewriting) echo --benchmarks=seekrandomwhilewriting --reverse_iterator=true "${rate[@]}" "${timed[@]}" ;;
    fwdrangewhilewriting) echo --benchmarks=seekrandomwhilewriting "${rate[@]}" "${timed[@]}" ;;
    readwhilewriting) echo --benchmarks=readwhilewriting "${rate[@]}" "${timed[@]}" ;;
    overwriteandwait) echo --benchmarks=overwrite,waitforcompaction "${timed[@]}" ;;
  esac
}
# db_bench's result line: "<name> : <us> micros/op <ops/s> ops/sec <secs> seconds <n> operations;"
result() { awk '$4 == "micros/op" && $6 == "ops/sec" { print $5, $9 }' "$1" | head -1; }
disk() { awk -v d="$dev" '$3 == d { print $4, $10; found = 1 } END { if (!found) print 0, 0 }' /proc/diskstats; }

# A row of a tool's figures for one step: repeat, step, ops/s, then device reads and KB written
# per operation over the whole process (opening and closing the database included), from
# /proc/diskstats of the work directory's device before and after.
row() {
  awk -v rep="$1" -v s="$2" -v ops="$3" -v n="$4" -v r="$5" -v w="$6" \
    'BEGIN { if (n > 0) printf "%s %s %s %.4f %.3f\n", rep, s, ops, r / n, w / 2 / n; else printf "%s %s - - -\n", rep, s }'
}
# One step of db_bench in database $3, its own process, as benchmark.sh runs it.
db_bench_step() {
  local rep=$1 s=$2 r0 w0 r1 w1 ops=- n=0
  read -r r0 w0 < <(disk)
  # shellcheck disable=SC2046
  "$DB_BENCH" "${common[@]}" --db="$3" $(flags "$s") > "$WORK/db.$s.$rep" 2>&1
  read -r r1 w1 < <(disk)
  [[ $s == flush ]] || read -r ops n < <(result "$WORK/db.$s.$rep") || true
  row "$rep" "$s" "${ops:--}" "${n:-0}" "$((r1 - r0))" "$((w1 - w0))" >> "$WORK/db_bench.rows"
  echo "db_bench $rep $s: ${ops:--} ops/s" >&2
}
# The same step with fathom in database $3, also its own process (--existing-data).
fathom_step() {
  local rep=$1 s=$2 r0 w0 r1 w1 ops n out="$WORK/fathom.$rep.$s"
  read -r r0 w0 < <(disk)
  "$fathom" run --engine rocksdb --workload dbbench --setup @"$root/setups/rocksdb-benchmark_sh.options" \
    --set cache_size=256m --set statistics="$([[ $STATISTICS == 1 ]] && echo on || echo off)" \
    --param num_keys="$NUM_KEYS" --param seek_nexts=10 --param steps="$s" \
    --clients "$THREADS" --duration "${DURATION}s" --data-dir "$3" --existing-data \
    --no-calibrate --results "$out" --format csv > "$out.csv" 2>/dev/null
  read -r r1 w1 < <(disk)
  # The CSV's second column is ops/s; the step's file holds its operation count.
  ops=$(awk -F, 'NR == 2 { print $2 }' "$out.csv")
  n=$(cat "$out"/*/steps/01-*.json | grep -o '"ops": *[0-9]*' | head -1 | grep -o '[0-9]*$' || echo 0)
  [[ $s != flush ]] || ops=-
  row "$rep" "$s" "${ops:--}" "${n:-0}" "$((r1 - r0))" "$((w1 - w0))" >> "$WORK/fathom.rows"
  echo "fathom   $rep $s: ${ops:--} ops/s" >&2
}

# Both tools run each step on the same files (lib.sh's on_copies). How many L0 files a step
# starts with depends on timing (a writer that outruns its flushes merges memtables into fewer
# files), and a read step on 4 L0 files runs 20% slower than on 2: two databases kept apart
# drift into shapes that differ more than the tools do.
for rep in $(seq 1 "$REPEATS"); do
  new_chain
  for s in "${steps[@]}"; do on_copies "$rep" "$s" db_bench_step fathom_step; done
done
rm -rf "$WORK/chain" "$WORK/copy"

# Column $3 of step $2's rows in file $1, one value per repeat; col gives their median.
values() { awk -v s="$2" -v c="$3" '$2 == s { print $c }' "$1"; }
col() { values "$@" | median; }
echo
echo "RocksDB $("$DB_BENCH" --version 2>/dev/null | head -1 || true); keys $NUM_KEYS, key 20 B, value 400 B, $THREADS threads"
echo "(fillseq, revrange and flush 1), ${DURATION}s timed steps, median of $REPEATS sequences per tool, statistics=$STATISTICS"
echo "each step its own process per tool, both starting on copies of one database, alternating step by step"
printf "%-21s %12s %12s %6s %7s %7s %9s %9s %10s %10s\n" step "db_bench/s" "fathom/s" ratio "db ±" "fa ±" "db r/o" "fa r/o" "db wKB/o" "fa wKB/o"
for s in "${steps[@]}"; do
  d=$(col "$WORK/db_bench.rows" "$s" 3) f=$(col "$WORK/fathom.rows" "$s" 3)
  ratio=$(awk -v f="$f" -v d="$d" 'BEGIN { if (d + 0 > 0 && f + 0 > 0) printf "%.2f", f / d; else print "-" }')
  printf "%-21s %12s %12s %6s %7s %7s %9s %9s %10s %10s\n" "$s" "$d" "$f" "$ratio" \
    "$(values "$WORK/db_bench.rows" "$s" 3 | spread)" "$(values "$WORK/fathom.rows" "$s" 3 | spread)" \
    "$(col "$WORK/db_bench.rows" "$s" 4)" "$(col "$WORK/fathom.rows" "$s" 4)" \
    "$(col "$WORK/db_bench.rows" "$s" 5)" "$(col "$WORK/fathom.rows" "$s" 5)"
done
echo
echo "db_bench's *whilewriting figures exclude its writer, as fathom's do; flush has no operations."
echo "r/o and wKB/o: the device's reads and KB written over each step's whole process, per operation."
echo "db ± and fa ±: each tool's spread of ops/s between repeats, (max - min) / median."
echo "Outputs of every run: $WORK"
