#!/usr/bin/env bash
# The default experiment: installs what fathom needs, builds it, and runs
# experiments/default.toml (the db_bench sequence on embedded RocksDB and on embedded
# WiredTiger, both Snappy, equal 256 MB caches, 2 clients), printing one table with a setup
# column. Extra arguments go to `fathom run` (e.g. --duration 5s, --format md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
results=results/default-$(date -u +%Y%m%dT%H%M%S)
scripts/fathom run experiments/default.toml --results "$results" "$@"
