#!/usr/bin/env bash
# The CPU a blocking client spends per round trip on this host when it does nothing else
# (bench/roundtrip.rs): a client thread against a server process over a unix socket, the server
# answering after WORK µs of busy CPU, PAIRS such pairs at once. With one pair the CPUs idle
# while the client waits, and each wait costs it the kernel's sleep and wake-up from idle; with
# more pairs than CPUs another thread takes the CPU instead. Compare fathom's CPU per blocking
# wait (bench/linkbench-cpu.sh's µs/wait, or a step's cpu_us_harness / waits_harness).
#   bench/roundtrip-floor.sh                            # pairs 1,2,4; work 0,50,150 µs; 3 s each
#   PAIRS=1 WORK=150 SECONDS_EACH=10 bench/roundtrip-floor.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p fathom-cli --features bundled-rocksdb,mongodb-driver --example roundtrip
"$CARGO_TARGET_DIR/release/examples/roundtrip" --pairs "${PAIRS:-1,2,4}" \
  --work-us "${WORK:-0,50,150}" --seconds "${SECONDS_EACH:-3}" | column -t
