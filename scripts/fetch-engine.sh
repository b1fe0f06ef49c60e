#!/usr/bin/env bash
# Fetches an engine release from a package registry into fathom's engines directory
# ($FATHOM_ENGINES, else ~/.cache/fathom/engines), where `--set version=X` finds it; prints the
# library's path.
#   scripts/fetch-engine.sh rocksdb 8.9.1     # Maven's org.rocksdb:rocksdbjni, its linux64 library
# RocksDB: the rocksdbjni jar carries librocksdbjni-linux64.so, which exports RocksDB's whole C API
# (snappy, lz4, zstd, zlib and bz2 built in) and needs no JVM. Releases on Maven Central include
# 6.29.5, 7.10.2, 8.0.0, 8.1.1, 8.3.2, 8.4.4, 8.5.3, 8.6.7, 8.7.3, 8.8.1, 8.9.1, 9.10.0, 10.10.1
# and 11.8.1 (11.x has no linux64 classifier; its main jar holds the same library).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if (($# != 2)); then
  echo "usage: scripts/fetch-engine.sh ENGINE VERSION   (ENGINE: rocksdb)" >&2
  exit 2
fi
engine=$1 version=$2
dest=${FATHOM_ENGINES:-$HOME/.cache/fathom/engines}/$engine/$version

fetch_rocksdb() {
  "$root/scripts/setup.sh" --fetch
  local repo=$HOME/.m2/repository/org/rocksdb/rocksdbjni/$version jar="" coordinate=""
  for classifier in linux64 ""; do
    coordinate=org.rocksdb:rocksdbjni:$version${classifier:+:jar:$classifier}
    if mvn -q -B dependency:get -Dartifact="$coordinate" -Dtransitive=false >/dev/null 2>&1; then
      jar=$repo/rocksdbjni-$version${classifier:+-$classifier}.jar
      unzip -l "$jar" librocksdbjni-linux64.so >/dev/null 2>&1 && break
    fi
    jar=""
  done
  if [[ -z $jar ]]; then
    echo "fetch-engine.sh: Maven has no org.rocksdb:rocksdbjni $version with a linux64 library" >&2
    exit 1
  fi
  mkdir -p "$dest"
  unzip -p "$jar" librocksdbjni-linux64.so > "$dest/librocksdb.so.part"
  if [[ $(nm -D --defined-only "$dest/librocksdb.so.part" | grep -c " T rocksdb_open$") == 0 ]]; then
    echo "fetch-engine.sh: $jar's library does not export RocksDB's C API" >&2
    rm -f "$dest/librocksdb.so.part"
    exit 1
  fi
  mv "$dest/librocksdb.so.part" "$dest/librocksdb.so"
  echo "Maven $coordinate ($(sha1sum "$jar" | cut -d' ' -f1))" > "$dest/SOURCE"
}

case "$engine" in
  rocksdb) [[ -f $dest/librocksdb.so ]] || fetch_rocksdb; echo "$dest/librocksdb.so" ;;
  *) echo "fetch-engine.sh: no fetcher for \`$engine\` (fetches: rocksdb)" >&2; exit 2 ;;
esac
