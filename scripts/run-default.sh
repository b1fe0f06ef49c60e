#!/usr/bin/env bash
# The default experiment: installs what fathom needs, builds it, and runs the db_bench sequence
# on embedded RocksDB with benchmark_compare.sh's options, printing one row per step.
# Extra arguments are passed to `fathom run` (e.g. --duration 5s, --clients 1,2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec scripts/fathom run --engine rocksdb --name rocksdb.benchmark_sh --workload dbbench \
  --setup @setups/rocksdb-benchmark_sh.options --clients 2 --duration 15s "$@"
