#!/usr/bin/env bash
# LinkBench's request phase on managed servers (bench/client-cpu.sh): the CPU fathom's own
# process spends per request beside the server's, and the times it blocked per request. Issue
# 16's figure: at filing, 33 µs of fathom per request beside 96 µs of InnoDB's, where
# LinkBench's Java client spends about 40 µs once warm.
#   bench/linkbench-cpu.sh                          # innodb and postgres, maxid1 200001, 2 clients, 60 s, 3 repeats
#   ENGINES="postgres" MAXID1=20001 DURATION=10s REPEATS=1 bench/linkbench-cpu.sh
set -euo pipefail
export WORKLOAD=linkbench STEPS=request
export PARAMS="maxid1=${MAXID1:-200001} duration=${DURATION:-60s}"
exec "$(dirname "$0")/client-cpu.sh"
