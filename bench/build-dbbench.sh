#!/usr/bin/env bash
# Builds db_bench against the very RocksDB fathom runs: db_bench's own sources
# (tools/db_bench_tool.cc and the few files it needs) from the librocksdb-sys crate in Cargo.lock,
# compiled with the defines that crate compiles RocksDB with, and linked with the librocksdb.a
# (and the Snappy, LZ4, Zstd and zlib archives) of fathom's release build: the same library
# object code on both sides. Needs gflags (scripts/setup.sh --dbbench). Cached as
# ~/.cache/fathom-dbbench/<crate version>/db_bench and rebuilt when fathom's RocksDB is newer.
# Prints the binary's path.
#   bench/build-dbbench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --dbbench
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli --features bundled-rocksdb,mongodb-driver
crate=$(awk '/^name = "librocksdb-sys"/ { getline; gsub(/[" ]/, "", $0); sub(/version=/, "", $0); print }' "$root/Cargo.lock")
[[ -n "$crate" ]] || { echo "build-dbbench.sh: no librocksdb-sys in Cargo.lock" >&2; exit 1; }
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"librocksdb-sys-$crate"/rocksdb 2>/dev/null | head -1)
[[ -f "$src/tools/db_bench_tool.cc" ]] || { echo "build-dbbench.sh: no RocksDB source for librocksdb-sys $crate in the cargo registry" >&2; exit 1; }
# The newest archive of each: the release build fathom runs.
newest() { ls -t "$CARGO_TARGET_DIR"/release/build/$1 2>/dev/null | head -1; }
rocksdb=$(newest 'librocksdb-sys-*/out/librocksdb.a')
snappy=$(newest 'librocksdb-sys-*/out/libsnappy.a')
lz4=$(newest 'lz4-sys-*/out/liblz4.a')
zstd=$(newest 'zstd-sys-*/out/libzstd.a')
zlib=$(newest 'libz-sys-*/out/lib/libz.a')
for a in "$rocksdb" "$snappy" "$lz4" "$zstd" "$zlib"; do
  [[ -f "$a" ]] || { echo "build-dbbench.sh: a static library of fathom's release build is missing" >&2; exit 1; }
done
out=${DBBENCH_CACHE:-$HOME/.cache/fathom-dbbench}/$crate
if [[ -x "$out/db_bench" && "$out/db_bench" -nt "$rocksdb" ]]; then
  echo "$out/db_bench"
  exit 0
fi
mkdir -p "$out/obj"
# librocksdb-sys's defines on Linux x86_64 (its build.rs), so the headers agree with the archive;
# GFLAGS for db_bench's flags. Its build_version.cc defines RocksDbIOUringEnable as db_bench does:
# db_bench's copy is renamed (io_uring is not compiled in either way).
defines=(-DSNAPPY=1 -DLZ4=1 -DZSTD=1 -DZLIB=1 -DNDEBUG=1 -DHAVE_ALIGNED_NEW -DHAVE_UINT128_EXTENSION
  -DOS_LINUX -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX -DROCKSDB_SCHED_GETCPU_PRESENT
  -DROCKSDB_AUXV_GETAUXVAL_PRESENT -DROCKSDB_FALLOCATE_PRESENT -DROCKSDB_RANGESYNC_PRESENT -DGFLAGS=1
  -DRocksDbIOUringEnable=DbBenchIOUringEnable)
includes=(-I "$src/include" -I "$src" -I "$src/third-party/gtest-1.8.1/fused-src")
sources=(tools/db_bench tools/db_bench_tool tools/tool_hooks tools/simulated_hybrid_file_system test_util/testutil)
echo "build-dbbench.sh: compiling db_bench of librocksdb-sys $crate" >&2
objects=() pids=()
for s in "${sources[@]}"; do
  o="$out/obj/$(basename "$s").o"
  g++ -O2 -std=c++20 -msse2 -fPIC -include cstdint "${defines[@]}" "${includes[@]}" -c "$src/$s.cc" -o "$o" &
  objects+=("$o") pids+=($!)
done
for p in "${pids[@]}"; do
  wait "$p" || { echo "build-dbbench.sh: compiling db_bench failed" >&2; exit 1; }
done
g++ -o "$out/db_bench.tmp" "${objects[@]}" "$rocksdb" "$snappy" "$lz4" "$zstd" "$zlib" -lgflags -lpthread -ldl
mv "$out/db_bench.tmp" "$out/db_bench"
echo "$out/db_bench"
