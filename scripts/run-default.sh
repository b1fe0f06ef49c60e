#!/usr/bin/env bash
# The default experiment: installs what fathom needs, builds it, runs the db_bench sequence on
# embedded RocksDB and on embedded WiredTiger (both Snappy, equal 256 MB caches, 2 clients),
# and prints one table with a setup column. Extra arguments go to both `fathom run`s
# (e.g. --duration 5s, --param num_keys=2000000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
results=results/default-$(date -u +%Y%m%dT%H%M%S)
common=(--workload dbbench --clients 2 --duration 10s --set cache_size=256m --results "$results")
scripts/fathom run --engine rocksdb --name rocksdb.snappy --setup @setups/rocksdb-default.options "${common[@]}" "$@" >/dev/null
scripts/fathom run --engine wiredtiger --name wiredtiger.snappy --setup @setups/wiredtiger-default.config "${common[@]}" "$@" >/dev/null
scripts/fathom report "$results"
echo "results: $results" >&2
