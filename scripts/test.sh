#!/usr/bin/env bash
# Installs what fathom needs, then checks formatting and lints and runs every test (unit and
# end-to-end on real RocksDB), all in the release profile so RocksDB is compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo fmt --all -- --check
cargo clippy --release --all-targets --quiet -- -D warnings
cargo test --release --workspace --no-fail-fast
