#!/usr/bin/env bash
# Installs what fathom needs, then checks formatting and lints and runs every test (unit and
# end-to-end on real RocksDB), all in the release profile so RocksDB is compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo fmt --all -- --check
cargo clippy --release --all-targets --quiet -- -D warnings
# A PostgreSQL release that is not Debian's, for the test that starts one.
scripts/fetch-engine.sh postgres "${FATHOM_TEST_POSTGRES_VERSION:-17.6.0}" >/dev/null
cargo test --release --workspace --no-fail-fast
