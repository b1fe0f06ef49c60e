#!/usr/bin/env bash
# Builds db_bench from the RocksDB source fathom's engine compiles (the librocksdb-sys crate in
# Cargo.lock carries it, tools/db_bench_tool.cc included): a release build (DEBUG_LEVEL=0) with
# gflags, Snappy, LZ4, Zstd and zlib, cached as ~/.cache/fathom-dbbench/<rocksdb version>/db_bench.
# Prints the binary's path. About 40 minutes on 2 cores the first time.
#   bench/build-dbbench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --dbbench
crate=$(awk '/^name = "librocksdb-sys"/ { getline; gsub(/[" ]/, "", $0); sub(/version=/, "", $0); print }' "$root/Cargo.lock")
[[ -n "$crate" ]] || { echo "build-dbbench.sh: no librocksdb-sys in Cargo.lock" >&2; exit 1; }
rocksdb=${crate#*+}
out=${DBBENCH_CACHE:-$HOME/.cache/fathom-dbbench}/$rocksdb
if [[ -x "$out/db_bench" ]]; then
  echo "$out/db_bench"
  exit 0
fi
cargo fetch --quiet --manifest-path "$root/Cargo.toml"
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"librocksdb-sys-$crate"/rocksdb 2>/dev/null | head -1)
[[ -f "$src/tools/db_bench_tool.cc" ]] || { echo "build-dbbench.sh: no RocksDB source for $crate under the cargo registry" >&2; exit 1; }
mkdir -p "$out"
rm -rf "$out/src"
cp -r "$src" "$out/src"
echo "build-dbbench.sh: building db_bench of RocksDB $rocksdb in $out/src" >&2
make -C "$out/src" -j"$(nproc)" DEBUG_LEVEL=0 USE_RTTI=1 PORTABLE=1 db_bench >"$out/build.log" 2>&1 || {
  echo "build-dbbench.sh: the build failed; see $out/build.log" >&2
  exit 1
}
cp "$out/src/db_bench" "$out/db_bench.tmp" && mv "$out/db_bench.tmp" "$out/db_bench"
rm -rf "$out/src"
echo "$out/db_bench"
