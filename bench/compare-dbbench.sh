#!/usr/bin/env bash
# Side by side, in one sitting: fathom's dbbench steps and db_bench (Debian's rocksdb-tools) at
# the same key count, key and value size, threads and RocksDB options, for fillseq, readrandom
# and overwrite. The two tools alternate; each figure is the median of REPEATS runs.
#   bench/compare-dbbench.sh                 # 1M keys, 2 threads, 15 s steps, 3 repeats
#   NUM_KEYS=2000000 THREADS=4 DURATION=30 REPEATS=5 bench/compare-dbbench.sh
# Note: Debian's db_bench is RocksDB 7.8.3 built with assertions on; fathom links RocksDB 11.8.1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --peers
NUM_KEYS=${NUM_KEYS:-1000000}
THREADS=${THREADS:-2}
DURATION=${DURATION:-15}
REPEATS=${REPEATS:-3}
WORK=${WORK:-/tmp/fathom-compare}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli
fathom="$CARGO_TARGET_DIR/release/fathom"
rm -rf "$WORK" && mkdir -p "$WORK"

# benchmark_compare.sh's leveled options (setups/rocksdb-benchmark_sh.options), as db_bench flags.
common=(--num="$NUM_KEYS" --key_size=20 --value_size=400 --compression_type=lz4 --compression_ratio=0.5
  --write_buffer_size=33554432 --target_file_size_base=33554432 --max_bytes_for_level_base=134217728
  --max_bytes_for_level_multiplier=8 --max_background_jobs=8 --max_write_buffer_number=8
  --level0_file_num_compaction_trigger=4 --level0_slowdown_writes_trigger=20 --level0_stop_writes_trigger=30
  --num_levels=8 --level_compaction_dynamic_level_bytes=true --bytes_per_sync=1048576 --open_files=-1
  --block_size=8192 --bloom_bits=10 --pin_l0_filter_and_index_blocks_in_cache=1 --cache_size=268435456
  --compression_max_dict_bytes=0 --memtablerep=skip_list --statistics=0 --histogram=1 --sync=0
  --db="$WORK/db_bench")

ops() { awk -v b="$1" '$1 == b && $4 == "micros/op" { print $5 }' "$2" | tail -1; }

for rep in $(seq 1 "$REPEATS"); do
  rm -rf "$WORK/db_bench"
  db_bench "${common[@]}" --benchmarks=fillseq --use_existing_db=0 --threads=1 --disable_wal=1 > "$WORK/db.fill.$rep" 2>&1
  db_bench "${common[@]}" --benchmarks=readrandom --use_existing_db=1 --threads="$THREADS" --duration="$DURATION" > "$WORK/db.read.$rep" 2>&1
  db_bench "${common[@]}" --benchmarks=overwrite --use_existing_db=1 --threads="$THREADS" --duration="$DURATION" > "$WORK/db.over.$rep" 2>&1
  echo "db_bench $rep: fillseq $(ops fillseq "$WORK/db.fill.$rep") readrandom $(ops readrandom "$WORK/db.read.$rep") overwrite $(ops overwrite "$WORK/db.over.$rep")" >&2
  rm -rf "$WORK/db_bench"

  "$fathom" run --engine rocksdb --workload dbbench --setup @"$root/setups/rocksdb-benchmark_sh.options" \
    --set cache_size=256m --param num_keys="$NUM_KEYS" --param steps=fillseq,readrandom,overwriteandwait \
    --clients "$THREADS" --duration "${DURATION}s" --results "$WORK/fathom.$rep" --format csv > "$WORK/fathom.$rep.csv" 2>/dev/null
  step_ops() { awk -F, -v s="$1" '$1 == s { print $2 }' "$WORK/fathom.$rep.csv"; }
  ff=$(step_ops fillseq) fr=$(step_ops readrandom) fo=$(step_ops overwriteandwait)
  echo "fathom   $rep: fillseq $ff readrandom $fr overwrite $fo" >&2
  echo "$rep $(ops fillseq "$WORK/db.fill.$rep") $(ops readrandom "$WORK/db.read.$rep") $(ops overwrite "$WORK/db.over.$rep") $ff $fr $fo" >> "$WORK/all"
done

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
echo "keys $NUM_KEYS, key 20 B, value 400 B, $THREADS threads (fillseq 1), ${DURATION}s steps, median of $REPEATS"
printf "%-11s %14s %14s %8s\n" step "db_bench ops/s" "fathom ops/s" ratio
for i in 1 2 3; do
  name=$(echo fillseq readrandom overwrite | cut -d' ' -f$i)
  d=$(awk -v c=$((i + 1)) '{ print $c }' "$WORK/all" | median)
  f=$(awk -v c=$((i + 4)) '{ print $c }' "$WORK/all" | median)
  printf "%-11s %14.0f %14.0f %8.2f\n" "$name" "$d" "$f" "$(awk -v f="$f" -v d="$d" 'BEGIN { print f / d }')"
done
