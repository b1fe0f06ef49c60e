#!/usr/bin/env bash
# The whole fault campaign of docs/reliability.md, beyond the bounded part CI runs: ROUNDS
# experiments interrupted by SIGINT or SIGTERM at seeded random moments and resumed (every
# engine and workload of tests/faults.rs's list), the SIGKILL, killed-server, full-disk and
# deleted-results faults, the bad-input table and the property tests of the parsers with
# CASES cases each. Prints the seed (replay a failure with SEED=...) and a line per part.
#   bench/faults.sh                      # 24 interrupted experiments, 10000 parser cases
#   ROUNDS=40 SEED=12345 bench/faults.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-24}
SEED=${SEED:-$(date +%s%N)}
CASES=${CASES:-10000}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cd "$root"
echo "faults.sh: SEED=$SEED ROUNDS=$ROUNDS CASES=$CASES"
log=$(mktemp /tmp/fathom-faults.XXXXXX)
run() { # label, the cargo test selection, then the test binary's arguments
  local label=$1 select=$2 start; shift 2
  start=$(date +%s)
  # shellcheck disable=SC2086
  if cargo test --release --quiet $select -- --test-threads=1 --nocapture "$@" >"$log" 2>&1; then
    echo "$label: passed in $(( $(date +%s) - start )) s"
  else
    echo "$label: FAILED (log: $log)"; tail -40 "$log"; exit 1
  fi
}
FATHOM_FAULT_SEED=$SEED FATHOM_FAULT_RUNS=$ROUNDS \
  run "$ROUNDS experiments interrupted and resumed" "-p fathom-cli --test faults" interrupted
grep -E "^round" "$log" | sed 's/^/  /'
run "SIGKILL, killed server, full disk, deleted results" "-p fathom-cli --test faults" --skip interrupted
run "bad input table" "-p fathom-cli --test bad_input"
grep -E "malformed inputs" "$log" | sed 's/^/  /'
export PROPTEST_CASES=$CASES
run "/proc, size, duration and result-file parsers, $CASES cases per property" "-p fathom-measure --test parsers"
run "engine settings and options, $CASES cases per property" "-p fathom-engines --test parsers"
run "experiment files, $CASES cases" "-p fathom-run --lib" experiment::fuzz
rm -f "$log"
